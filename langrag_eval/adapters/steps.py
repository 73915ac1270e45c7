"""The trajectory of each captured call, heard from the framework as it runs, free of any framework:
a capture adapter hands a :class:`StepBook` the messages each model call received and wrote, each
tool's result (LangChain's callbacks), or the workflow events an agent emitted (LlamaIndex's
instrumentation), under the id of the top-level call they belong to, which is that call's sample id.

Messages are read by their attributes (:meth:`~langrag_eval.trajectories.trajectory.Trajectory.of`):

>>> book = StepBook()
>>> book.prompt("c1", [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Order 42?"}])
>>> book.reply("c1", {"role": "assistant", "tool_calls": [{"name": "order_status", "args": {"order_id": "42"},
...                                                          "id": "t1"}]}, agent="support")
>>> book.tool("c1", {"role": "tool", "content": "Shipped.", "tool_call_id": "t1"}, "t1")
>>> book.reply("c1", {"role": "assistant", "content": "It shipped."})
>>> t = book.trajectory("c1"); [s.role for s in t.steps], t.answer, t.steps[1].agent
(['user', 'assistant', 'tool', 'assistant'], 'It shipped.', 'support')
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from ..trajectories.evaluators import TrajectorySample
from ..trajectories.events import trajectory_of_events
from ..trajectories.trajectory import Step, Trajectory, text_of
from ..types import Sample

__all__ = ["StepBook"]


def _steps(messages: Sequence[Any]) -> list[Step]:
    try:
        return list(Trajectory.of(list(messages)).steps)
    except (ConfigError, ValueError, TypeError):  # a message of a shape no trajectory has (a framework's
        # own kind): left out, the app's run and its sample go on; the steps read from the rest are kept
        return [s for m in messages for s in _steps_one(m)]


def _steps_one(message: Any) -> list[Step]:
    try:
        return list(Trajectory.of([message]).steps)
    except (ConfigError, ValueError, TypeError):
        return []


def _tool_message(result: Any, call_id: str) -> Any:
    """The message a tool's result stands for: a tool message itself, or (a LangGraph handoff tool's
    ``Command``) the tool message for ``call_id`` among the messages its state update carries."""
    update = getattr(result, "update", None)
    if isinstance(update, Mapping):
        for m in update.get("messages") or []:
            got = m.get("tool_call_id") if isinstance(m, Mapping) else getattr(m, "tool_call_id", None)
            if got == call_id:
                return m
        return None
    if getattr(result, "tool_call_id", None) is not None or isinstance(result, Mapping) and "tool_call_id" in result:
        return result
    return {"role": "tool", "content": text_of(getattr(result, "content", result)), "tool_call_id": call_id}


class StepBook:
    """Per call id, the steps heard so far (or the workflow events), in the order they came.
    Thread-safe: a graph's parallel tools end in any thread and any order; a run of tool results is
    put in the order of the calls that asked for them, as the framework's own state holds them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: dict[str, list[Step]] = {}
        self._events: dict[str, list[Any]] = {}

    def prompt(self, call: Hashable | None, messages: Sequence[Any]) -> None:
        """A model call of ``call`` received ``messages``: the first one's, less the system prompt,
        open the trajectory (the user's message, and the history a chat app sent with it)."""
        if call is None:
            return
        with self._lock:
            if str(call) not in self._steps:
                self._steps[str(call)] = [s for s in _steps(messages) if s.role != "system"]

    def reply(self, call: Hashable | None, message: Any, *, agent: str | None = None) -> None:
        """A model call of ``call`` wrote ``message``; ``agent`` names the agent that made the call
        (one of several in a graph) when the message does not."""
        if call is None or message is None:
            return
        steps = _steps_one(message)
        with self._lock:
            self._steps.setdefault(str(call), []).extend(
                s.model_copy(update={"agent": agent}) if agent and s.role == "assistant" and not s.agent else s
                for s in steps)

    def tool(self, call: Hashable | None, result: Any, call_id: str | None) -> None:
        """A tool run of ``call`` answered the tool call ``call_id`` with ``result``."""
        if call is None or result is None:
            return
        message = _tool_message(result, str(call_id or ""))
        steps = _steps_one(message) if message is not None else []
        with self._lock:
            self._steps.setdefault(str(call), []).extend(steps)

    def event(self, call: Hashable | None, event: Any) -> None:
        """A workflow step of ``call`` emitted ``event`` (:func:`~langrag_eval.trajectories.events.trajectory_of_events`)."""
        if call is None or event is None:
            return
        with self._lock:
            self._events.setdefault(str(call), []).append(event)

    def trajectory(self, call: str | None) -> Trajectory:
        """The trajectory of ``call`` (no steps for a call the book did not hear)."""
        with self._lock:
            events, steps = list(self._events.get(str(call), [])), list(self._steps.get(str(call), []))
        if events:
            return trajectory_of_events(events)
        return Trajectory(steps=tuple(_in_call_order(steps)))

    def samples(self, samples: Sequence[Sample]) -> list[TrajectorySample]:
        """One trajectory sample per captured sample, index by index (same id and question)."""
        return [TrajectorySample(id=s.id, question=s.question, trajectory=self.trajectory(s.id)) for s in samples]

    def clear(self) -> None:
        with self._lock:
            self._steps.clear()
            self._events.clear()


def _in_call_order(steps: list[Step]) -> list[Step]:
    out: list[Step] = []
    i = 0
    while i < len(steps):
        j = i
        while j < len(steps) and steps[j].role == "tool":
            j += 1
        if j == i:
            out.append(steps[i])
            i += 1
            continue
        asked = next((s for s in reversed(out) if s.role == "assistant"), None)
        order = {c.id: k for k, c in enumerate(asked.tool_calls or ())} if asked is not None else {}
        out += sorted(steps[i:j], key=lambda s: order.get(s.tool_call_id or "", len(order)))  # stable
        i = j
    return out
