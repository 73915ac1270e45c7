"""A conversation: ordered turns, each with the user's message, the app's answer, the contexts that
reached that turn's prompt and the history the app sent with it.

Each turn's :meth:`ConversationTurn.sample` is a plain single-turn :class:`~langrag_eval.types.Sample`
(the one a capture makes), so per-turn vRAG and THELMA score it as they score any sample; the
conversation-level judges read :meth:`Conversation.render`.

>>> c = Conversation.of_turns([("My pump is the P-20.", "Noted."), ("Warranty?", "Two years for the P-20.")])
>>> [t.history for t in c.turns][1]
[{'role': 'user', 'content': 'My pump is the P-20.'}, {'role': 'assistant', 'content': 'Noted.'}]
>>> print(c.render())
1. user: My pump is the P-20.
1. assistant: Noted.
2. user: Warranty?
2. assistant: Two years for the P-20.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from ..types import Document, Sample

__all__ = ["Conversation", "ConversationTurn"]


class ConversationTurn(BaseModel):
    """One exchange: ``user`` wrote, the app answered ``answer`` from ``contexts``; ``history`` is the
    earlier messages (``{"role", "content"}``) the app sent with this turn."""

    model_config = ConfigDict(frozen=True)

    user: str
    answer: str | None = None
    contexts: list[Document] = Field(default_factory=list)
    history: list[dict[str, str]] = Field(default_factory=list)
    sample_id: str | None = None

    def sample(self, ident: str | None = None) -> Sample:
        """This turn as a single-turn sample; the history travels in ``metadata["history"]``."""
        return Sample(id=ident or self.sample_id, question=self.user, answer=self.answer, contexts=self.contexts,
                      metadata={"history": self.history} if self.history else {})


class Conversation(BaseModel):
    """The turns of one conversation, in order; ``goal`` and ``persona`` when a simulated user held them,
    ``role`` the assistant's stated role when the judges should hold it to one; ``error`` why a
    simulated conversation stopped early (the app or the user model failed)."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    turns: tuple[ConversationTurn, ...] = ()
    goal: str | None = None
    persona: str | None = None
    role: str | None = None
    goal_met: bool | None = None
    error: str | None = None

    def shown(self) -> dict[str, Any]:
        """What the report's item browser shows: each turn's user message, answer, the contexts it
        answered from and how many earlier messages the app sent with it; the goal and its outcome."""
        turns = [{"user": t.user, "answer": t.answer, "contexts": [d.text for d in t.contexts],
                  "history": len(t.history)} for t in self.turns]
        out: dict[str, Any] = {"question": self.turns[0].user if self.turns else None,
                               "answer": self.turns[-1].answer if self.turns else None, "turns": turns}
        out.update({k: v for k, v in (("goal", self.goal), ("persona", self.persona), ("role", self.role),
                                      ("goal_met", self.goal_met), ("error", self.error)) if v is not None})
        return out

    @classmethod
    def of_turns(cls, pairs: Sequence[tuple[str, str | None]], **fields: Any) -> Conversation:
        """A conversation from (user, answer) pairs, each turn's history being the pairs before it."""
        turns, history = [], []
        for user, answer in pairs:
            turns.append(ConversationTurn(user=user, answer=answer, history=list(history)))
            history += [{"role": "user", "content": user}, {"role": "assistant", "content": answer or ""}]
        return cls(turns=tuple(turns), **fields)

    @classmethod
    def from_samples(cls, samples: Sequence[Sample], **fields: Any) -> Conversation:
        """A conversation from the samples a capture made, one per turn in order (a chat engine or a
        checkpointer agent called turn by turn inside one ``capturing()`` block). The history of each
        turn is the exchanges before it, which a chat engine's memory and a checkpointer's thread hold
        and send; a sample that carries ``metadata["history"]`` keeps its own."""
        if not samples:
            raise ConfigError("a conversation needs at least one turn: the capture recorded no sample")
        turns, history = [], []
        for s in samples:
            sent = s.metadata.get("history") if isinstance(s.metadata.get("history"), list) else list(history)
            turns.append(ConversationTurn(user=s.question, answer=s.answer, contexts=s.contexts, history=sent,
                                          sample_id=s.id))
            history += [{"role": "user", "content": s.question}, {"role": "assistant", "content": s.answer or ""}]
        return cls(turns=tuple(turns), **fields)

    def samples(self) -> list[Sample]:
        """Each turn's single-turn sample, ids ``<conversation id>#<turn>`` when the turn has none."""
        return [t.sample(t.sample_id or f"{self.id or 'conversation'}#{i}") for i, t in enumerate(self.turns, 1)]

    def render(self) -> str:
        """The turns as numbered lines, the way a judge reads them."""
        lines = []
        for i, t in enumerate(self.turns, start=1):
            lines.append(f"{i}. user: {t.user}")
            lines.append(f"{i}. assistant: {t.answer if t.answer is not None else '(no answer)'}")
        return "\n".join(lines)
