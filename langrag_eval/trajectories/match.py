"""Deterministic trajectory matches against a reference: pure functions, the modes agent-evaluation
tools share, with the argument modes users ask for.

Trajectory modes:

- ``strict``: the same messages in the same order: each position has the same role, calls tools or
  not alike, and its tool calls pair off one to one (in any order within the message); text is not
  compared (a model words the same step differently from run to run);
- ``unordered``: the run's tool calls and the reference's pair off one to one, in any order;
- ``superset``: every reference call is matched by a distinct call of the run (extra calls allowed);
- ``subset``: every call of the run is matched by a distinct reference call (no call outside it).

Two calls match when their tool names are equal and their arguments match by the argument mode:
``exact`` (equal), ``ignore``, ``subset`` (the first call's arguments are a part of the second's),
``superset`` (the other way round); per tool, ``overrides`` may set a mode, a list of argument paths
(``"filters.year"``: only those are compared) or a function ``(args, other_args) -> bool``. The
first call is the run's for ``strict``, ``superset`` and the first half of ``unordered``, the
reference's for ``subset`` and the second half of ``unordered``, as the agentevals package defines
them. Calls pair off by a maximum matching, so a run is not refused because an earlier reference
call took the only call that a later one could match (a first-fit pairing can refuse it).

>>> from langrag_eval.trajectories.trajectory import Trajectory
>>> run = Trajectory.of([{"role": "assistant", "tool_calls": [
...     {"name": "search", "args": {"query": "warranty", "k": 5}}, {"name": "weather", "args": {}}]}])
>>> ref = Trajectory.of([{"role": "assistant", "tool_calls": [{"name": "search", "args": {"query": "warranty"}}]}])
>>> matches(run, ref, "superset"), matches(run, ref, "superset", args="superset"), matches(run, ref, "strict")
(False, True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union

from ..errors import ConfigError
from .trajectory import ToolCall, Trajectory

__all__ = ["ArgsMode", "MatchMode", "Override", "argument_matcher", "matches"]

MatchMode = Literal["strict", "unordered", "subset", "superset"]
ArgsMode = Literal["exact", "ignore", "subset", "superset"]
Override = Union[ArgsMode, Sequence[str], Callable[[Mapping[str, Any], Mapping[str, Any]], bool]]
Matcher = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]

_MODES = ("strict", "unordered", "subset", "superset")
_ARGS = ("exact", "ignore", "subset", "superset")


def _part_of(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(k in b and b[k] == v for k, v in a.items())


def _at(args: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(args, Mapping):
            return None
        args = args.get(key)
    return args


def argument_matcher(mode: Override) -> Matcher:
    """The comparison of two calls' arguments for an argument mode, a list of paths or a function."""
    if callable(mode):
        return mode
    if isinstance(mode, str):
        if mode not in _ARGS:
            raise ConfigError(f"argument mode {mode!r}: expected one of {', '.join(_ARGS)}")
        return {"exact": lambda a, b: a == b, "ignore": lambda a, b: True,
                "subset": _part_of, "superset": lambda a, b: _part_of(b, a)}[mode]
    paths = list(mode)
    if not all(isinstance(p, str) and p for p in paths):
        raise ConfigError("an argument override's paths must be non-empty strings")
    return lambda a, b: all(_at(a, p) == _at(b, p) for p in paths)


def _pair_off(first: Sequence[ToolCall], second: Sequence[ToolCall], matcher: Callable[[str], Matcher],
              *, whole: bool) -> bool:
    """Whether every call of ``second`` has its own matching call in ``first`` (and, ``whole``, the
    reverse too: a perfect matching), by augmenting paths. Arguments compare as
    ``matcher(name)(first's, second's)``."""
    if whole and len(first) != len(second):
        return False
    edges = [[i for i, a in enumerate(first) if a.name == b.name and matcher(b.name)(a.arguments, b.arguments)]
             for b in second]
    owner: dict[int, int] = {}

    def augment(j: int, seen: set[int]) -> bool:
        for i in edges[j]:
            if i not in seen:
                seen.add(i)
                if i not in owner or augment(owner[i], seen):
                    owner[i] = j
                    return True
        return False

    return all(augment(j, set()) for j in range(len(second)))


def matches(run: Trajectory, reference: Trajectory, mode: MatchMode = "strict", *, args: ArgsMode = "exact",
            overrides: Mapping[str, Override] | None = None) -> bool:
    """Whether ``run`` matches ``reference`` in ``mode`` (see the module's text)."""
    if mode not in _MODES:
        raise ConfigError(f"trajectory match mode {mode!r}: expected one of {', '.join(_MODES)}")
    default = argument_matcher(args)
    table = {name: argument_matcher(o) for name, o in (overrides or {}).items()}

    def matcher(name: str) -> Matcher:
        return table.get(name, default)

    out, ref = run.tool_calls(), reference.tool_calls()
    if mode == "superset":
        return _pair_off(out, ref, matcher, whole=False)
    if mode == "subset":
        return _pair_off(ref, out, matcher, whole=False)
    if mode == "unordered":
        return _pair_off(out, ref, matcher, whole=False) and _pair_off(ref, out, matcher, whole=False)
    if len(run.steps) != len(reference.steps):
        return False
    for a, b in zip(run.steps, reference.steps):
        if a.role != b.role or (a.tool_calls is None) != (b.tool_calls is None):
            return False
        if a.tool_calls is not None and not _pair_off(a.tool_calls, b.tool_calls or (), matcher, whole=True):
            return False
    return True
