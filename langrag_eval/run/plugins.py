"""One plugin seam: evaluators and THELMA metrics a user's package installs, found by entry point.

A distribution declares them in its ``pyproject.toml``, beside the judges' group
(``langrag_eval.judges``, read by :func:`langrag_eval.models.judge_providers`)::

    [project.entry-points."langrag_eval.evaluators"]
    citations = "mypkg.evaluators:Citations"      # an Evaluator class, or a function of the judge

    [project.entry-points."langrag_eval.metrics"]
    cc = "mypkg.metrics:CONCISION"                 # a langrag_eval.thelma.Metric

Ids are namespaced by the distribution (``mypkg/citations``, ``mypkg/cc``), so two packages never
collide and neither shadows a built-in id (``vrag``, ``thelma``, ``grammar``; ``rp``, ``gr`` ...).
An entry point whose name already holds a ``/`` keeps it as its id. ``langrag-eval run DATA
--evaluator mypkg/citations`` runs an evaluator; ``thelma --metrics gr,mypkg/cc`` scores a metric.

>>> sorted(evaluator_ids())[:3]
['grammar', 'thelma', 'vrag']
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..evaluator import Evaluator
    from ..runtime import Judge

__all__ = ["EVALUATORS", "METRICS", "entry_point_id", "evaluator_ids", "load_evaluator", "plugin_entries"]

EVALUATORS = "langrag_eval.evaluators"
METRICS = "langrag_eval.metrics"

# The package's own evaluators that run on a plain sample file, by id, imported on first use (the
# run layer sits below the capabilities, so it names them rather than importing them).
_BUILTIN = {"vrag": "langrag_eval.grading:VragGrader", "thelma": "langrag_eval.thelma:Thelma",
            "grammar": "langrag_eval.grammar.grading:ReferenceGrader"}
_PART = re.compile(r"[a-z0-9_][a-z0-9_.-]*")


def entry_point_id(ep: EntryPoint) -> str:
    """``ep``'s namespaced id: ``<distribution>/<name>`` (the distribution's name in lower case,
    ``-`` as ``_``), or the name itself when it already holds a namespace."""
    if "/" in ep.name:
        return ep.name
    dist = getattr(ep, "dist", None)
    namespace = re.sub(r"[-.]+", "_", dist.name).lower() if dist is not None else "plugin"
    return f"{namespace}/{ep.name}"


def plugin_entries(group: str) -> dict[str, EntryPoint]:
    """The installed entry points of ``group`` by namespaced id. An id must be ``namespace/name``
    in lower-case letters, digits, ``_``, ``.`` and ``-``; two distributions claiming one id are
    refused, naming both."""
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=group):
        ident = entry_point_id(ep)
        parts = ident.split("/")
        if len(parts) != 2 or not all(_PART.fullmatch(p) for p in parts):
            raise ConfigError(f"entry point {ep.name!r} = {ep.value!r} in {group}: its id {ident!r} is not "
                              "namespace/name in lower-case letters, digits and _")
        if ident in found and found[ident].value != ep.value:
            raise ConfigError(f"two installed packages claim {group} id {ident!r}: "
                              f"{found[ident].value} and {ep.value}")
        found[ident] = ep
    return found


def evaluator_ids() -> list[str]:
    """The evaluators ``langrag-eval run`` can run: the built-in ones, then every installed one."""
    return [*_BUILTIN, *sorted(plugin_entries(EVALUATORS))]


def _factory(ident: str) -> Callable[..., Any]:
    if ident in _BUILTIN:
        module, _, attribute = _BUILTIN[ident].partition(":")
        return getattr(importlib.import_module(module), attribute)
    plugins = plugin_entries(EVALUATORS)
    if ident not in plugins:
        raise ConfigError(f"unknown evaluator {ident!r}; installed: {', '.join(evaluator_ids())} "
                          f"(a package adds one under the entry point group {EVALUATORS})")
    try:
        return plugins[ident].load()
    except Exception as exc:  # noqa: BLE001 - a user's package that fails to import: say which, in one line
        raise ConfigError(f"evaluator {ident!r} ({plugins[ident].value}) failed to load: "
                          f"{type(exc).__name__}: {exc}") from exc


def load_evaluator(ident: str, judge: "Judge") -> "Evaluator[Any, Any]":
    """The evaluator ``ident`` (a built-in id or an installed ``namespace/name``), judging with
    ``judge``: its entry point is an evaluator class or a function, called with the judge when it
    takes an argument, without one when it takes none; what it returns must be an evaluator."""
    factory = _factory(ident)
    try:
        takes_judge = any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                          for p in inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: give it the judge
        takes_judge = True
    evaluator = factory(judge) if takes_judge else factory()
    if not (callable(getattr(evaluator, "aevaluate", None)) and callable(getattr(evaluator, "declare", None))):
        raise ConfigError(f"evaluator {ident!r} made a {type(evaluator).__name__}, not a "
                          "langrag_eval.Evaluator")
    return evaluator
