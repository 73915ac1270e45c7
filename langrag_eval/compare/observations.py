"""What a stored run says about each item, per score: read by name from the typed scores each
judgment is stored with (:meth:`~langrag_eval.evaluator.Evaluator.scores`), the same way for every
capability, with no knowledge of any capability's result shape.

A *family* is one evaluator's judgments in a run, named after its task (``vrag``, ``thelma`` for
``thelma:batched`` or ``thelma:per_component``, ``grammar`` for ``grammar/correct``, ``mypkg`` for
an installed package's ``mypkg/citations``); its metrics are the names of its scores, in the order
the evaluator gives them. What a family's items mean is read from the evaluator's declaration
stored with the run (:class:`~langrag_eval.results.Declaration`), never from its name: an evaluator
whose items are judged whole also gets a scored rate under the name it declares (1 when the item
was judged at all), so a change that makes answers ungradable shows instead of vanishing from the
other metrics; one that declares ``raw_reason`` has the end of the judge's reply as an item's
reason. Evaluators that index their items pair by what each item asks; the others pair by item id.
A task whose items are ``agent/id`` with an item index per agent (``<task>/<agent>``) is split by
agent. Runs stored before declarations existed read as the evaluators of that time declared.

An item's pairing ``key`` comes from the run's item index (:mod:`langrag_eval.runtime.items`).

>>> from langrag_eval.results import ScoreScale
>>> from langrag_eval.runtime import RunStore, put_item_index
>>> store = RunStore(":memory:")
>>> run = store.open_run("grade", {})
>>> scores = [ScoreScale(0, 1, binary=True).score("accept_rate", 1, reason="ok"),
...           ScoreScale(1, 5).score("grade", 4, reason="ok")]
>>> stored = {"score": 4, "scores": [s.model_dump() for s in scores]}
>>> store.put_judgment(run, "q1", "vrag", stored, scored=True)
>>> put_item_index(store, run, "vrag", [("q1", "Why?", "Because.", None)])
>>> obs = load_observations(store, run)["vrag"][0]
>>> obs.values, obs.reason
({'accept_rate': 1.0, 'grade': 4.0, 'scored_rate': 1.0}, 'ok')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from ..results import Declaration, Score, ScoreScale
from ..run.batch import declared_in_run
from ..runtime import RunStore
from ..runtime.items import get_item_index

__all__ = ["SCORED_RATES", "Observation", "family_of", "is_scored_rate", "load_observations"]

# Runs stored before evaluators' declarations were stored with them: what those evaluators declared.
_BEFORE_DECLARATIONS = {"vrag": Declaration(judged_whole="scored_rate"),
                        "grammar/correct": Declaration(judged_whole="grammar_scored_rate", raw_reason=True)}
# kept for callers of the earlier constant: the scored rates of the package's own evaluators
SCORED_RATES = {"vrag": "scored_rate", "grammar": "grammar_scored_rate"}
_RATE = ScoreScale(0, 1, binary=True)


def family_of(task: str) -> str:
    """A task's family: its name up to the first ``:`` or ``/`` (``thelma:batched`` is ``thelma``)."""
    return task.split(":", 1)[0].split("/", 1)[0]


def is_scored_rate(metric: str) -> bool:
    """True for a family's share of items judged at all (a check on the data, not a quality): the
    name a declaration's ``judged_whole`` gives it ends in ``scored_rate``."""
    return metric == "scored_rate" or metric.endswith("_scored_rate")


@dataclass(frozen=True)
class Observation:
    """One item of one run: scored ``values`` per metric, ``unscored`` reasons per metric, and each
    metric's scale (a metric without one is read as a score on its own range)."""

    id: str
    key: str | None
    subject: str | None = None
    question: str | None = None
    values: dict[str, float] = field(default_factory=dict)
    unscored: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    scales: dict[str, ScoreScale] = field(default_factory=dict)

    def is_binary(self, metric: str) -> bool:
        scale = self.scales.get(metric)
        return scale is not None and scale.binary


def _scores(result: Any) -> list[Score] | None:
    raw = result.get("scores") if isinstance(result, dict) else None
    if not isinstance(raw, list):
        return None
    try:
        return [Score.model_validate(s) for s in raw]
    except ValidationError:
        return None


def _read(declared: Declaration, result: Any, scored: bool) -> tuple[dict[str, float], dict[str, str],
                                                                     str | None, dict[str, ScoreScale]]:
    values, unscored, scales, reason = {}, {}, {}, None
    scores = _scores(result)
    for s in scores or []:
        scales[s.name] = s.scale
        if s.value is not None:
            values[s.name] = float(s.value)
            reason = reason or s.reason
        else:
            unscored[s.name] = f"{s.cause}: {s.reason or ''}".strip()
    rate = declared.judged_whole
    if rate is not None:
        values[rate], scales[rate] = float(scored and scores is not None), _RATE
    if isinstance(result, dict) and isinstance(result.get("raw"), str) and declared.raw_reason:
        reason = result["raw"][-400:]   # a verdict without a reason of its own: the judge's reply ends it
    return values, unscored, (reason if scored else None), scales


def _build(declared: Declaration, judgments: list[dict[str, Any]], index: dict[str, Any] | None,
           strip: str = "") -> list[Observation]:
    by_item = {j["item"]: j for j in judgments}
    # The index is the run's current item set, in input order: a run continued after rows left its
    # input keeps their judgments in the store, but they are no longer part of it.
    order = [i for i in index if i in by_item] if index is not None else list(by_item)
    out = []
    for item in order:
        values, unscored, reason, scales = _read(declared, by_item[item]["result"], by_item[item]["scored"])
        entry = (index or {}).get(item) or {}
        out.append(Observation(id=item[len(strip):] if strip and item.startswith(strip) else item,
                               key=entry.get("key"), subject=entry.get("subject"),
                               question=entry.get("question"), values=values, unscored=unscored,
                               reason=reason, scales=scales))
    return out


def load_observations(store: RunStore, run_id: str, *,
                      agent: str | None = None) -> dict[str, list[Observation]]:
    """Every comparable family in run ``run_id`` (a unique prefix works), items in input order:
    each task whose judgments carry typed scores and whose items are indexed (in a run made before
    the item index existed: every such task, paired by id). Where one family has several tasks
    (THELMA batched and per component), the one with the most judgments. ``agent`` picks one agent
    of a GRAMMAR run that graded several."""
    run_id = store.run(run_id)["id"]
    judgments = store.judgments(run_id)
    with_scores: Counter[str] = Counter()
    names: dict[str, set[str]] = {}
    for j in judgments:
        if (scores := _scores(j["result"])) is not None:
            with_scores[j["task"]] += 1
            names.setdefault(j["task"], set()).update(s.name for s in scores)
    tasks = Counter(j["task"] for j in judgments)
    declared = {**_BEFORE_DECLARATIONS, **declared_in_run(store, run_id, with_scores)}
    indexed = {t for t in tasks if get_item_index(store, run_id, t) is not None}
    by_agent: dict[str, list[str]] = {}
    for task in tasks:
        if task in indexed:
            continue
        items = [j["item"] for j in judgments if j["task"] == task]
        agents = sorted({i.split("/", 1)[0] for i in items}) if all("/" in i for i in items) else []
        if any(get_item_index(store, run_id, f"{task}/{a}") is not None for a in agents):
            indexed.add(task)
            by_agent[task] = agents
    groups: dict[str, list[tuple[set[str], str]]] = {}
    for task in tasks:   # judgment order: the first family judged comes first
        # every task with typed scores is compared: by what its items ask where it indexed them,
        # else by item id (an evaluator without an item index does not drop out beside vRAG)
        if task in with_scores:
            group = groups.setdefault(family_of(task), [])
            # tasks of one family scoring the same metrics are one evaluator's alternatives (THELMA
            # batched or per component): the one with the most judgments; tasks scoring other
            # metrics (one trajectory match per mode, one conversation judge per criterion) are each kept
            at = next((i for i, (metrics, _) in enumerate(group) if metrics & names[task]), None)
            if at is None:
                group.append((set(names[task]), task))
            elif tasks[task] > tasks[group[at][1]]:
                group[at] = (group[at][0] | names[task], task)
    chosen_task = {(family if len(group) == 1 else task): task
                   for family, group in groups.items() for _, task in group}
    families: dict[str, list[Observation]] = {}
    for family, task in chosen_task.items():
        rows = [j for j in judgments if j["task"] == task]
        if task not in by_agent:
            families[family] = _build(_declared(declared, task), rows, get_item_index(store, run_id, task))
            continue
        agents = by_agent[task]
        if agent is None and len(agents) > 1:
            raise ConfigError(f"run {run_id} graded {len(agents)} agents in {task} ({', '.join(agents)}); "
                              "name one with --agent")
        pick = agent or agents[0]
        if pick not in agents:
            raise ConfigError(f"run {run_id} has no agent {pick!r} in {task}; agents: {', '.join(agents)}")
        prefix = pick + "/"
        families[family] = _build(_declared(declared, task),
                                  [j for j in rows if j["item"].startswith(prefix)],
                                  get_item_index(store, run_id, f"{task}/{pick}"), strip=prefix)
    return families


def _declared(declared: dict[str, Declaration], task: str) -> Declaration:
    return declared.get(task) or Declaration()
