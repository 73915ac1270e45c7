"""What a stored run says about each item, per metric: read from the run store's judgments.

Three families of graded runs can be compared:

- ``vrag`` (``langrag-eval grade``, ``VragGrader.evaluate_many``): ``accept_rate`` (1 accepted,
  0 rejected) and ``grade`` (1-5), from the judgments of task ``vrag``; and ``scored_rate`` (1 when
  the item was graded at all), so a change that makes answers ungradable (empty, failing) shows
  instead of vanishing from the accept rate;
- ``thelma`` (``langrag-eval thelma``, ``Thelma.evaluate_many``): ``sp1 sp2 sqc rp rqc sd gr`` in 0..1;
- ``grammar`` (``langrag-eval grammar evaluate``, ``evaluate_answers``): ``correct`` (1 or 0) of
  one agent, and ``grammar_scored_rate`` like ``scored_rate``.

Every metric here is better when higher. An item's pairing ``key`` comes from the run's item index
(:mod:`langrag_eval.runtime.items`); ``key`` is None for runs stored before the index existed.

>>> from langrag_eval.runtime import RunStore, put_item_index
>>> store = RunStore(":memory:")
>>> run = store.open_run("grade", {})
>>> store.put_judgment(run, "q1", "vrag", {"score": 4, "accepted": True, "reason": "ok"}, scored=True)
>>> put_item_index(store, run, "vrag", [("q1", "Why?", "Because.", None)])
>>> obs = load_observations(store, run)["vrag"][0]
>>> obs.values, obs.reason
({'accept_rate': 1.0, 'grade': 4.0, 'scored_rate': 1.0}, 'ok')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..runtime import RunStore
from ..runtime.items import get_item_index

__all__ = ["FAMILIES", "METRIC_FAMILY", "BINARY", "SCORED", "Observation", "load_observations"]

FAMILIES: dict[str, tuple[str, ...]] = {
    "vrag": ("accept_rate", "grade", "scored_rate"),
    "thelma": ("sp1", "sp2", "sqc", "rp", "rqc", "sd", "gr"),
    "grammar": ("correct", "grammar_scored_rate"),
}
METRIC_FAMILY = {m: fam for fam, metrics in FAMILIES.items() for m in metrics}
SCORED = frozenset({"scored_rate", "grammar_scored_rate"})   # 1 graded, 0 unscored: never unscored
BINARY = frozenset({"accept_rate", "correct"}) | SCORED
_THELMA_TASKS = ("thelma:per_component", "thelma:batched")
_GRAMMAR_TASK = "grammar/correct"


@dataclass(frozen=True)
class Observation:
    """One item of one run: scored ``values`` per metric, ``unscored`` reasons per metric."""

    id: str
    key: str | None
    subject: str | None = None
    question: str | None = None
    values: dict[str, float] = field(default_factory=dict)
    unscored: dict[str, str] = field(default_factory=dict)
    reason: str | None = None


def _why(result: dict[str, Any]) -> str:
    return f"{result.get('cause', 'unscored')}: {result.get('reason', '')}".strip()


def _is_unscored(result: Any) -> bool:
    return isinstance(result, dict) and result.get("scored") is False


def _vrag(result: Any) -> tuple[dict[str, float], dict[str, str], str | None]:
    if _is_unscored(result):
        return {"scored_rate": 0.0}, {m: _why(result) for m in ("accept_rate", "grade")}, None
    if not isinstance(result, dict) or not isinstance(result.get("score"), int):
        return {"scored_rate": 0.0}, {m: "unreadable stored judgment" for m in ("accept_rate", "grade")}, None
    return ({"accept_rate": 1.0 if result.get("accepted") else 0.0, "grade": float(result["score"]),
             "scored_rate": 1.0}, {}, result.get("reason"))


def _thelma(result: Any) -> tuple[dict[str, float], dict[str, str], str | None]:
    if _is_unscored(result):
        return {}, {m: _why(result) for m in FAMILIES["thelma"]}, None
    values, unscored = {}, {}
    for metric, outcome in ((result or {}).get("metrics") or {}).items():
        if _is_unscored(outcome):
            unscored[metric] = _why(outcome)
        elif isinstance(outcome, dict) and isinstance(outcome.get("score"), (int, float)):
            values[metric] = float(outcome["score"])
        else:
            unscored[metric] = "unreadable stored judgment"
    return values, unscored, None


def _grammar(result: Any) -> tuple[dict[str, float], dict[str, str], str | None]:
    if _is_unscored(result):
        return {"grammar_scored_rate": 0.0}, {"correct": _why(result)}, None
    if not isinstance(result, dict) or not isinstance(result.get("correct"), bool):
        return {"grammar_scored_rate": 0.0}, {"correct": "unreadable stored judgment"}, None
    raw = result.get("raw")
    return ({"correct": 1.0 if result["correct"] else 0.0, "grammar_scored_rate": 1.0}, {},
            raw[-400:] if isinstance(raw, str) else None)


def _build(store: RunStore, run_id: str, index_task: str, read: Any,
           judgments: list[dict[str, Any]], strip: str = "") -> list[Observation]:
    index = get_item_index(store, run_id, index_task)
    by_item = {j["item"]: j for j in judgments}
    # The index is the run's current item set, in input order: a run continued after rows left its
    # input keeps their judgments in the store, but they are no longer part of it. Without an
    # index (runs made before it existed), every judgment, in judgment order.
    order = [i for i in index if i in by_item] if index is not None else list(by_item)
    out = []
    for item in order:
        values, unscored, reason = read(by_item[item]["result"])
        entry = (index or {}).get(item) or {}
        out.append(Observation(id=item[len(strip):] if strip and item.startswith(strip) else item,
                               key=entry.get("key"), subject=entry.get("subject"),
                               question=entry.get("question"), values=values, unscored=unscored,
                               reason=reason))
    return out


def load_observations(store: RunStore, run_id: str, *,
                      agent: str | None = None) -> dict[str, list[Observation]]:
    """Every comparable family in run ``run_id`` (a unique prefix works), items in input order.
    ``agent`` picks one agent of a GRAMMAR run that graded several."""
    run_id = store.run(run_id)["id"]
    judgments = store.judgments(run_id)
    tasks = Counter(j["task"] for j in judgments)
    families: dict[str, list[Observation]] = {}
    if tasks.get("vrag"):
        families["vrag"] = _build(store, run_id, "vrag", _vrag,
                                  [j for j in judgments if j["task"] == "vrag"])
    thelma_tasks = [t for t in _THELMA_TASKS if tasks.get(t)]
    if thelma_tasks:
        task = max(thelma_tasks, key=lambda t: tasks[t])
        families["thelma"] = _build(store, run_id, task, _thelma,
                                    [j for j in judgments if j["task"] == task])
    if tasks.get(_GRAMMAR_TASK):
        rows = [j for j in judgments if j["task"] == _GRAMMAR_TASK]
        agents = sorted({j["item"].split("/", 1)[0] for j in rows})
        if agent is None and len(agents) > 1:
            raise ConfigError(f"run {run_id} graded {len(agents)} GRAMMAR agents ({', '.join(agents)}); "
                              "name one with --agent")
        chosen = agent or agents[0]
        if chosen not in agents:
            raise ConfigError(f"run {run_id} has no GRAMMAR agent {chosen!r}; agents: {', '.join(agents)}")
        prefix = chosen + "/"
        families["grammar"] = _build(store, run_id, f"{_GRAMMAR_TASK}/{chosen}", _grammar,
                                     [j for j in rows if j["item"].startswith(prefix)], strip=prefix)
    return families
