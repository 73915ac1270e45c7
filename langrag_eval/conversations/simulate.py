"""A simulated user: a judge model holding a persona and a goal writes the user's turns to a chat
app, one at a time, until it replies with the goal-met marker or ``max_turns`` is reached. Its prompt
is the file ``conversation/simulated_user``.

Every finished conversation is stored in the run store under the run (``task`` ``conversation_simulation``,
item the persona's id), so a run found again skips it. A conversation a killed run left unfinished is
played again from its start against a fresh app: the simulated user's calls for the turns already
played are answered by the judge's content-keyed cache (the same persona, goal and conversation make
the same prompt), so they are not paid twice; the app is called again to rebuild its memory.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> user = SimulatedUser(Judge(ScriptedModel(["Which warranty has the P-20?", "GOAL MET"])))
>>> [c] = simulate(lambda: (lambda m: "Two years."), [Persona(id="p1", persona="A buyer", goal="Warranty")], user)
>>> [(t.user, t.answer) for t in c.turns], c.goal_met
([('Which warranty has the P-20?', 'Two years.')], True)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import ConfigError, DataError, ModelCallError
from ..files.tables import jsonl_objects
from ..model import GenerationParams
from ..prompting.templates import PromptTemplate, load_prompt, override_template
from ..runtime import Judge, RunStore
from ..runtime.concurrency import run_sync, synchronous
from .apps import ChatApp
from .conversation import Conversation, ConversationTurn

__all__ = ["Persona", "SimulatedUser", "read_personas", "simulate"]

TASK = "conversation_simulation"


class Persona(BaseModel):
    """Who the simulated user is and what they want; ``role`` is the assistant's role, kept with the
    conversation for the role-adherence judge; ``opening`` a first message to send as written."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    persona: str
    goal: str
    role: str | None = None
    opening: str | None = None


def read_personas(path: str | Path) -> list[Persona]:
    """Personas from a JSONL file, one object a line; a bad line is one ConfigError naming file,
    line and field."""
    path = Path(path)
    out, seen = [], set()
    # the files' JSONL reader: lines end at line feeds only (U+2028 inside a string is text)
    for n, obj in jsonl_objects(path, what="personas file"):
        if isinstance(obj, DataError):
            raise ConfigError(str(obj))
        try:
            persona = Persona.model_validate(obj)
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "line"
            raise ConfigError(f"{path}:{n}: field {where!r}: {err['msg']}") from None
        if persona.id in seen:
            raise ConfigError(f"{path}:{n}: field 'id': {persona.id!r} appears twice")
        seen.add(persona.id)
        out.append(persona)
    if not out:
        raise ConfigError(f"{path}: no personas")
    return out


@dataclass
class SimulatedUser:
    """``judge`` writes the user's turns; ``marker`` in its reply ends the conversation as met;
    ``prompt`` replaces the shipped template (same variables)."""

    judge: Judge
    marker: str = "GOAL MET"
    prompt: Any = None

    def __post_init__(self) -> None:
        shipped = "conversation/simulated_user"
        self._template: PromptTemplate = (load_prompt(shipped) if self.prompt is None else override_template(
            self.prompt, shipped, allowed=["persona", "goal", "conversation", "marker"]))

    def render(self, persona: Persona, conversation: Conversation) -> str:
        return self._template.render(persona=persona.persona, goal=persona.goal, marker=self.marker,
                                     conversation=conversation.render() or "(nothing yet: write the first message)")

    async def anext_message(self, persona: Persona, conversation: Conversation) -> str | None:
        """The user's next message, or None when the reply says the goal is met."""
        params = GenerationParams(temperature=0.0, max_tokens=self.judge.params.max_tokens,
                                  seed=self.judge.params.seed)
        reply = await self.judge.complete(self.render(persona, conversation), params=params)
        if self.judge.store is not None:  # a reply is grouped for a later commit: a kill would lose it
            self.judge.store.flush()
        text = reply.text.strip()
        if self.marker in text:
            return None
        if not text:
            raise ConfigError(f"persona {persona.id!r}: the simulated user wrote an empty message")
        return text

    next_message = synchronous(anext_message)


def _conversation(persona: Persona, turns: Sequence[ConversationTurn], met: bool | None) -> Conversation:
    return Conversation(id=persona.id, turns=tuple(turns), goal=persona.goal, persona=persona.persona,
                        role=persona.role, goal_met=met)


async def _one(new_app: Callable[[], ChatApp], persona: Persona, user: SimulatedUser, max_turns: int,
               capturing: Callable[[], Any] | None) -> Conversation:
    app = new_app()
    turns: list[ConversationTurn] = []
    history: list[dict[str, str]] = []
    met = False
    block = capturing() if capturing is not None else contextlib.nullcontext()
    with block as cap:
        for n in range(max_turns):
            if n == 0 and persona.opening:
                message: str | None = persona.opening
            else:
                message = await user.anext_message(persona, _conversation(persona, turns, None))
            if message is None:
                met = True
                break
            try:
                answer = await asyncio.to_thread(app, message)
            except Exception as exc:  # the app's failure is the conversation's outcome, not the run's end
                return _conversation(persona, turns, None).model_copy(
                    update={"error": f"the app failed on turn {n + 1}: {type(exc).__name__}: {exc}"})
            turns.append(ConversationTurn(user=message, answer=answer, history=list(history)))
            history += [{"role": "user", "content": message}, {"role": "assistant", "content": answer}]
        else:  # the limit: ask once more whether the last answer met the goal
            met = await user.anext_message(persona, _conversation(persona, turns, None)) is None
    if cap is not None:  # the captured per-turn samples carry the contexts each turn's prompt held
        samples = list(getattr(cap, "samples", []))
        if len(samples) == len(turns):
            turns = [t.model_copy(update={"contexts": s.contexts, "answer": s.answer or t.answer})
                     for t, s in zip(turns, samples)]
    return _conversation(persona, turns, met)


def simulate(new_app: Callable[[], ChatApp], personas: Iterable[Persona], user: SimulatedUser, *,
             max_turns: int = 5, store: RunStore | None = None, run_id: str | None = None,
             capturing: Callable[[], Any] | None = None,
             on_conversation: Callable[[Conversation], None] | None = None) -> list[Conversation]:
    """One conversation per persona, in order. ``new_app()`` returns a fresh chat app (its own thread
    or memory) for each; ``capturing`` (an adapter's ``capturing``) records each turn's sample, whose
    contexts the turns keep. With ``store``, each finished conversation is stored under ``run_id``
    and a run found again skips it (see the module's text). A conversation whose app raised or whose
    user model failed comes back with ``error`` set, is not stored, and is played again next time."""
    if max_turns < 1:
        raise ConfigError(f"max_turns is {max_turns}: at least 1")
    personas = list(personas)
    if store is not None:
        run_id = store.open_run("conversations", {"max_turns": max_turns, "marker": user.marker,
                                                 "personas": [p.model_dump() for p in personas]},
                                run_id=run_id, judge=user.judge.model_id)
        user = SimulatedUser(user.judge.for_run(run_id), user.marker, user.prompt)
    out = []
    for persona in personas:
        stored = store.get_judgment(run_id, persona.id, TASK) if store is not None and run_id else None
        if stored is not None:
            conversation = Conversation.model_validate(stored)
        else:
            try:
                conversation = run_sync(_one(new_app, persona, user, max_turns, capturing))
            except ModelCallError as exc:
                conversation = _conversation(persona, (), None).model_copy(
                    update={"error": f"the simulated user's model failed: {exc}"})
            if store is not None and run_id and conversation.error is None:  # a failed one is tried again
                store.put_judgment(run_id, persona.id, TASK, conversation.model_dump(mode="json"), scored=True)
                store.flush()
        out.append(conversation)
        if on_conversation is not None:
            on_conversation(conversation)
    if store is not None and run_id:
        store.finish_run(run_id, {"conversations": len(out), "goal_met": sum(bool(c.goal_met) for c in out)})
    return out
