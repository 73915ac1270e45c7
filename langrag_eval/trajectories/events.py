"""A trajectory from an agent workflow's event stream, read by the events' attributes (the core
imports no framework): what LlamaIndex's ``FunctionAgent``, ``ReActAgent`` and ``AgentWorkflow``
stream from ``handler.stream_events()``.

- an agent's input (``input`` messages and ``current_agent_name``): the user's message, once;
- an agent's output (``response``, ``tool_calls``, ``current_agent_name``): one assistant step with
  the tools it chose (a handoff is the call of the ``handoff`` tool, and the next step's agent);
- a tool's result (``tool_id``, ``tool_output``): one tool step answering that call.

Other events (streamed deltas, which carry a ``response`` and ``tool_calls`` too, the tool-call announcements that repeat the output's choices, the
stop event) add nothing and are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .trajectory import Step, ToolCall, Trajectory, role_of, text_of

__all__ = ["trajectory_of_events"]


def _content(message: Any) -> str:
    return text_of(getattr(message, "content", None)) if message is not None else ""


def trajectory_of_events(events: Iterable[Any]) -> Trajectory:
    """The trajectory the events tell, in their order."""
    steps: list[Step] = []
    for event in events:
        if hasattr(event, "input") and hasattr(event, "current_agent_name") and not steps:
            users = [m for m in event.input or [] if role_of(getattr(m, "role", None)) == "user"]
            if users:
                steps.append(Step(role="user", content=_content(users[-1])))
        elif hasattr(event, "response") and hasattr(event, "tool_calls") and not hasattr(event, "delta"):
            chosen = tuple(ToolCall(name=c.tool_name, arguments=dict(c.tool_kwargs or {}), id=str(c.tool_id or ""))
                           for c in event.tool_calls or [] if not hasattr(c, "tool_output"))
            steps.append(Step(role="assistant", content=_content(event.response), tool_calls=chosen or None,
                              agent=event.current_agent_name))
        elif hasattr(event, "tool_output") and hasattr(event, "tool_id"):
            output = event.tool_output
            steps.append(Step(role="tool", content=text_of(getattr(output, "content", output)),
                              tool_call_id=str(event.tool_id or "")))
    return Trajectory(steps=tuple(steps))
