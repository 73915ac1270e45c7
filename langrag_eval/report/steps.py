"""An agent's trajectory as the report's item browser shows it, step by step: what the user asked,
each model call (with the agent that made it), each tool call with its arguments, each tool's
result (named after the call it answers), each handoff between agents, and the final answer; and a
simulated conversation read back from the run store.

>>> steps = display_steps([
...     {"role": "user", "content": "Warranty?"},
...     {"role": "assistant", "content": "", "agent": "router", "tool_calls": [
...         {"name": "search", "arguments": {"q": "warranty"}, "id": "c1"}]},
...     {"role": "tool", "content": "Two years.", "tool_call_id": "c1"},
...     {"role": "assistant", "content": "Two years.", "agent": "writer"}])
>>> [(s["kind"], s["label"]) for s in steps]
[('user', 'user'), ('model', 'model call (router)'), ('tool_call', 'tool call: search'), ('tool_result', 'tool result: search'), ('handoff', 'handoff: router → writer'), ('answer', 'final answer (writer)')]
>>> steps[2]["text"]
'{"q": "warranty"}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["conversation_of_simulation", "display_steps"]

SIMULATION_TASK = "conversation_simulation"  # the task simulated conversations are stored under


def display_steps(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Stored trajectory steps (:class:`~langrag_eval.trajectories.Step` as JSON) as labelled
    steps: ``kind`` one of user, system, model, tool_call, tool_result, handoff, answer."""
    steps = [s for s in steps if isinstance(s, Mapping)]
    final = max((i for i, s in enumerate(steps)
                 if s.get("role") == "assistant" and s.get("content") and not s.get("tool_calls")), default=None)
    names: dict[str, str] = {}
    speaker: str | None = None
    out: list[dict[str, str]] = []
    for i, step in enumerate(steps):
        role, text, agent = step.get("role"), str(step.get("content") or ""), step.get("agent")
        if role == "assistant":
            if agent and speaker and agent != speaker:
                out.append({"kind": "handoff", "label": f"handoff: {speaker} → {agent}", "text": ""})
            speaker = agent or speaker
            who = f" ({agent})" if agent else ""
            if i == final:
                out.append({"kind": "answer", "label": f"final answer{who}", "text": text})
                continue
            calls = [c for c in step.get("tool_calls") or [] if isinstance(c, Mapping)]
            out.append({"kind": "model", "label": f"model call{who}",
                        "text": text or ("(no text: calls a tool)" if calls else "(no text)")})
            for call in calls:
                name = str(call.get("name") or "?")
                if call.get("id"):
                    names[str(call["id"])] = name
                out.append({"kind": "tool_call", "label": f"tool call: {name}",
                            "text": json.dumps(call.get("arguments") or {}, ensure_ascii=False, sort_keys=True)})
        elif role == "tool":
            call_id = str(step.get("tool_call_id") or "")
            name = names.get(call_id) or call_id or "a tool"
            out.append({"kind": "tool_result", "label": f"tool result: {name}", "text": text})
        else:
            out.append({"kind": "system" if role == "system" else "user", "label": str(role or "user"), "text": text})
    return out


def conversation_of_simulation(judgment: Mapping[str, Any]) -> dict[str, Any] | None:
    """The browser's content of a simulated conversation (stored whole as the judgment of its
    persona), or None for any other judgment."""
    if judgment.get("task") != SIMULATION_TASK or not isinstance(judgment.get("result"), dict):
        return None
    from pydantic import ValidationError

    from ..conversations import Conversation  # only a run that simulated users needs it

    try:
        return Conversation.model_validate(judgment["result"]).shown()
    except ValidationError:
        return None
