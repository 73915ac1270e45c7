"""An agent's trajectory: the ordered messages of its run, each a step with its role, its text, the
tools it called (name, arguments, call id) and, for a tool's reply, which call it answers.

:meth:`Trajectory.of` reads what agents hand back: OpenAI-style message dicts (``role``, ``content``,
``tool_calls`` with ``function.name`` / ``function.arguments``), LangChain messages (read by their
attributes, so the core imports no framework: ``type``, ``content``, ``tool_calls``, ``tool_call_id``,
``name``), or a LangGraph state holding ``messages``. A message an agent wrote under a name (one agent
of several in a graph) keeps it in ``agent``, so a handoff is where the name changes.

>>> t = Trajectory.of([{"role": "user", "content": "Warranty?"},
...                    {"role": "assistant", "content": "", "tool_calls": [
...                        {"id": "c1", "type": "function",
...                         "function": {"name": "search", "arguments": '{"query": "warranty"}'}}]},
...                    {"role": "tool", "content": "Two years.", "tool_call_id": "c1"},
...                    {"role": "assistant", "content": "Two years."}])
>>> [(c.name, c.arguments) for c in t.tool_calls()], t.answer
([('search', {'query': 'warranty'})], 'Two years.')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError

__all__ = ["Step", "ToolCall", "Trajectory", "role_of", "text_of"]

Role = Literal["system", "user", "assistant", "tool"]
_ROLES = {"system": "system", "developer": "system", "user": "user", "human": "user", "assistant": "assistant",
          "ai": "assistant", "aimessagechunk": "assistant", "tool": "tool", "function": "tool"}


class ToolCall(BaseModel):
    """One call of a tool: its name and arguments as the model wrote them."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str = ""


class Step(BaseModel):
    """One message of a run."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] | None = None
    tool_call_id: str | None = None
    agent: str | None = None


class Trajectory(BaseModel):
    """The steps of one run, in order."""

    model_config = ConfigDict(frozen=True)

    steps: tuple[Step, ...] = ()

    @classmethod
    def of(cls, value: Any, *, field: str = "trajectory") -> Trajectory:
        """A trajectory from messages in any of the shapes above; anything else is a ConfigError
        naming ``field`` and the message at fault."""
        if isinstance(value, Trajectory):
            return value
        if isinstance(value, Mapping) and "steps" in value:
            return cls.model_validate(value)
        if isinstance(value, Mapping) and "role" not in value:
            if "messages" not in value:
                raise ConfigError(f"{field}: a mapping must hold 'messages' (or 'steps')")
            value = value["messages"]
        elif isinstance(value, Mapping) or hasattr(value, "content"):
            value = [value]
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ConfigError(f"{field} is a {type(value).__name__}: pass a list of messages")
        return cls(steps=tuple(_step(m, f"{field}[{i}]") for i, m in enumerate(value)))

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call, in the order the model made them."""
        return [c for s in self.steps for c in s.tool_calls or ()]

    @property
    def answer(self) -> str | None:
        """The last assistant message that carries text and calls no tool."""
        for step in reversed(self.steps):
            if step.role == "assistant" and step.content and not step.tool_calls:
                return step.content
        return None

    def render(self) -> str:
        """The steps as numbered lines, the way a judge reads them.

        >>> Trajectory.of([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "",
        ...     "tool_calls": [{"name": "search", "args": {"q": "pump"}}]}]).render()
        '1. user: Hi\\n2. assistant: calls search({"q": "pump"})'
        """
        lines = []
        for i, step in enumerate(self.steps, start=1):
            who = f"{step.role} ({step.agent})" if step.agent else step.role
            if step.role == "tool" and step.tool_call_id:
                who = f"tool result for {step.tool_call_id}"
            parts = [step.content] if step.content else []
            parts += [f"calls {c.name}({json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)})"
                      for c in step.tool_calls or ()]
            lines.append(f"{i}. {who}: " + "; ".join(parts) if parts else f"{i}. {who}: (no text)")
        return "\n".join(lines)

    def agents(self) -> list[str]:
        """The agents that wrote, in the order they first spoke (handoffs)."""
        return list(dict.fromkeys(s.agent for s in self.steps if s.role == "assistant" and s.agent))

    def handoffs(self) -> list[tuple[str, str]]:
        """Each change of the agent writing, as ``(from, to)``, in order: the handoffs of a
        multi-agent run (the handoff tool's call and result are the steps between them).

        >>> Trajectory.of([{"role": "assistant", "name": "research", "content": "Found it."},
        ...                {"role": "assistant", "name": "writer", "content": "Two years."}]).handoffs()
        [('research', 'writer')]
        """
        names = [s.agent for s in self.steps if s.role == "assistant" and s.agent]
        return [(a, b) for a, b in zip(names, names[1:]) if a != b]


def _get(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, Mapping) else getattr(message, key, None)


def role_of(kind: Any) -> str | None:
    """A message's role in this module's words (``system``, ``user``, ``assistant``, ``tool``), from
    any framework's name for it (an enum's value included), or None."""
    kind = getattr(kind, "value", kind)
    return _ROLES.get(str(kind).lower()) if kind is not None else None


def text_of(content: Any) -> str:
    """A message's content as text: a string, content blocks' text joined, nothing for None."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content)
    return str(content)


def _arguments(raw: Any, where: str) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ConfigError(f"{where}: tool arguments are not JSON: {raw[:60]!r}") from None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: tool arguments are a {type(raw).__name__}, not an object")
    return dict(raw)


def _call(raw: Any, where: str) -> ToolCall:
    function = _get(raw, "function")
    if function is not None:  # OpenAI: {"id", "type": "function", "function": {"name", "arguments"}}
        name, args = _get(function, "name"), _get(function, "arguments")
    else:  # LangChain: {"name", "args", "id"}
        name, args = _get(raw, "name"), _get(raw, "args")
        if args is None:
            args = _get(raw, "arguments")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: a tool call without a name")
    return ToolCall(name=name, arguments=_arguments(args, where), id=str(_get(raw, "id") or ""))


def _step(message: Any, where: str) -> Step:
    kind = _get(message, "role") or _get(message, "type")
    role = role_of(kind)
    if role is None:
        raise ConfigError(f"{where}: a message of role {kind!r}; expected system, user, assistant or tool")
    raw_calls = _get(message, "tool_calls")
    calls = tuple(_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(raw_calls)) if raw_calls else None
    name = _get(message, "name")
    return Step(role=role, content=text_of(_get(message, "content")), tool_calls=calls,  # type: ignore[arg-type]
                tool_call_id=_get(message, "tool_call_id"),
                agent=name if role == "assistant" and isinstance(name, str) else None)
