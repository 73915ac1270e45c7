"""Chat variants compared on whole conversations through RAGElo's tournament (:mod:`langrag_eval.tournament`):
each conversation is one variant's "answer" to its user's goal, the contexts its turns retrieved are
the documents pooled for the game, and the pairwise judge reads both conversations whole on the prompt
file ``tournament/pairwise_conversation`` (RAGElo's pairwise evaluator, given two conversations held
with the same goal). Games, both orders, Elo, Bradley-Terry, the store and resuming are the
tournament's own.

Conversations are paired by id: the same persona simulated against each variant (:func:`~.simulate.simulate`
gives a conversation the persona's id), or the same scripted user messages.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.conversations.conversation import Conversation
>>> short = [Conversation.of_turns([("Warranty?", "Two years.")], id="p1", goal="Learn the warranty")]
>>> vague = [Conversation.of_turns([("Warranty?", "It depends.")], id="p1", goal="Learn the warranty")]
>>> judge = Judge(ScriptedModel(lambda p: "[[A]]" if "Two years" in p.split("<conversation_b>")[0] else "[[B]]"))
>>> result = conversation_tournament({"short": short, "vague": vague}, judge,
...                                  TournamentConfig(tournaments=5, n_boot=10))
>>> result.summary["games"]["played"], [r["agent"] for r in result.summary["ranking"]]
(1, ['short', 'vague'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from ..runtime import Judge, RunStore, synchronous
from ..tournament import TournamentConfig, TournamentData, TournamentResult, arun_tournament
from ..tournament.evaluators import DEFAULT_FACTORS
from .conversation import Conversation

__all__ = ["CONVERSATION_FACTORS", "CONVERSATION_PROMPT", "aconversation_tournament", "conversation_records",
           "conversation_tournament"]

CONVERSATION_PROMPT = "tournament/pairwise_conversation"
CONVERSATION_FACTORS = ("whether the user's goal was met, and how correct, complete and helpful the assistant's "
                        "replies were along the way; whether it kept what the user told it earlier; and how "
                        "few turns the user needed to get there.")


def _goal(conversation: Conversation) -> str:
    """What the user came for, the same text for every variant: the simulated user's goal and persona,
    else the user's first message."""
    if conversation.goal:
        return conversation.goal + (f"\n(The user: {conversation.persona})" if conversation.persona else "")
    return f"(not stated) The user opened with: {conversation.turns[0].user}" if conversation.turns else "(not stated)"


def conversation_records(variants: Mapping[str, Sequence[Conversation]]) -> list[dict[str, Any]]:
    """The tournament's answer records: one per variant and conversation (``qid`` the conversation's
    id, ``query`` its goal, ``answer`` the conversation as the judges read it, ``documents`` every
    context its turns held, each once)."""
    records = []
    for agent, conversations in variants.items():
        seen: set[str] = set()
        for i, c in enumerate(conversations):
            if not c.id:
                raise ConfigError(f"variant {agent!r}: conversation {i} has no id; conversations are paired "
                                  "by id (a persona's id when simulated)")
            if c.id in seen:
                raise ConfigError(f"variant {agent!r}: conversation id {c.id!r} appears twice")
            seen.add(c.id)
            docs = {d.id: d for t in c.turns for d in t.contexts}
            records.append({"qid": c.id, "query": _goal(c), "agent": agent,
                            "answer": c.render() if c.turns else "",
                            "documents": [{"id": d.id, "text": d.text} for d in docs.values()]})
    return records


async def aconversation_tournament(variants: Mapping[str, Sequence[Conversation]], judge: Judge,
                                   config: TournamentConfig | None = None, *, store: RunStore | None = None,
                                   run_id: str | None = None, concurrency: int = 16) -> TournamentResult:
    """Rank chat ``variants`` (name -> its conversations) by pairwise games on whole conversations.
    ``config`` is any :class:`TournamentConfig`; where it keeps the answer tournament's pairwise prompt
    and factors, the conversation ones are used."""
    config = config or TournamentConfig()
    updates: dict[str, Any] = {}
    if config.pairwise_prompt == "tournament/pairwise":
        updates["pairwise_prompt"] = CONVERSATION_PROMPT
    if config.factors == DEFAULT_FACTORS:
        updates["factors"] = CONVERSATION_FACTORS
    data = TournamentData.from_records(conversation_records(variants), source="conversations")
    return await arun_tournament(data, judge, config.model_copy(update=updates), store=store, run_id=run_id,
                                 concurrency=concurrency)


conversation_tournament = synchronous(aconversation_tournament)
