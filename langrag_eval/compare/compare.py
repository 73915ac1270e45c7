"""Run-to-run comparison with paired statistics: did the change from run A to run B help?

Items are paired by content (see :mod:`.pairing`). For every metric the two runs share, on the items
scored in both runs, it reports both means, the difference B - A with an interval, and a paired test,
chosen by the score's scale (:class:`~langrag_eval.results.ScoreScale`), not by the capability:

- binary scores (accept/reject ``accept_rate``, GRAMMAR ``correct``): McNemar's test (exact binomial
  below 25 discordant pairs) and the Agresti-Min interval for matched proportions;
- other scores (1-5 grades, THELMA metrics): Wilcoxon's signed-rank test and a seeded
  paired-bootstrap percentile interval of the mean difference.

``scored_rate`` (vRAG-Eval) and ``grammar_scored_rate`` compare the share of items graded at all,
so answers that became ungradable do not vanish from view; being a check on the data rather than a
quality hypothesis, they stay outside the multiplicity correction. The p-values of all other overall
metrics are adjusted together with Holm's method (family-wise error at most alpha); the per-subject
rows form a second family, adjusted the same way. Items unscored on
either side are counted per metric and listed with both reasons; items found in one run only are
listed too. Items that flipped between accepted and rejected are listed with both judges' reasons;
for grades and THELMA scores, ``movers`` lists the items that fell the most (up to 10 per metric).

>>> from langrag_eval.compare.observations import Observation
>>> from langrag_eval.results import ScoreScale
>>> scales = {"accept_rate": ScoreScale(0, 1, binary=True), "grade": ScoreScale(1, 5)}
>>> a = [Observation(id=str(i), key=str(i), values={"accept_rate": 1.0, "grade": 5.0}, scales=scales)
...      for i in range(40)]
>>> b = [Observation(id=str(i), key=str(i), values={"accept_rate": float(i >= 10), "grade": 5.0 - (i < 10)},
...                  scales=scales) for i in range(40)]
>>> c = compare_observations({"vrag": a}, {"vrag": b})
>>> m = c.metric("accept_rate")
>>> m.diff, m.test, m.p_value < 0.01, len(c.flips)
(-0.25, 'mcnemar-exact', True, 10)
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ArgumentError, ConfigError
from ..runtime import RunStore
from ..stats.paired import (
    bootstrap_mean_difference, holm, mcnemar, paired_proportion_interval, wilcoxon_signed_rank,
)
from .observations import Observation, is_scored_rate, load_observations
from .pairing import Pairing, pair

__all__ = ["Comparison", "MetricComparison", "compare_observations", "compare_runs"]

_MOVERS = 10  # largest falls listed per score metric


@dataclass(frozen=True)
class MetricComparison:
    """One metric (optionally within one subject). ``n``: items scored in both runs; ``diff`` =
    ``mean_b - mean_a`` with the interval ``[low, high]``; ``lost``/``gained``: for accept/reject,
    items accepted only in A / only in B. ``p_adjusted`` is Holm's adjustment within its family."""

    metric: str
    family: str
    kind: str                      # "binary" or "score"
    pairs: int
    n: int
    unscored_a: int
    unscored_b: int
    mean_a: float | None = None
    mean_b: float | None = None
    diff: float | None = None
    low: float | None = None
    high: float | None = None
    level: float = 0.95
    test: str | None = None
    statistic: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    lost: int | None = None
    gained: int | None = None
    subject: str | None = None


@dataclass
class Comparison:
    """The whole comparison of run B against baseline run A; :meth:`as_dict` is its JSON form."""

    run_a: str
    run_b: str
    level: float
    seed: int
    resamples: int
    correction: str = "holm"
    pairing: dict[str, dict[str, Any]] = field(default_factory=dict)
    metrics: list[MetricComparison] = field(default_factory=list)
    subjects: list[MetricComparison] = field(default_factory=list)
    unscored: list[dict[str, Any]] = field(default_factory=list)
    unpaired: list[dict[str, Any]] = field(default_factory=list)
    flips: list[dict[str, Any]] = field(default_factory=list)
    movers: list[dict[str, Any]] = field(default_factory=list)

    def metric(self, name: str) -> MetricComparison:
        for m in self.metrics:
            if m.metric == name:
                return m
        raise ArgumentError(f"no metric {name!r} in this comparison; metrics: "
                       f"{', '.join(m.metric for m in self.metrics) or 'none'}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _compare_metric(metric: str, family: str, pairs: Sequence[tuple[Observation, Observation]], *,
                    level: float, seed: int, resamples: int, subject: str | None = None) -> MetricComparison:
    both = [(a.values[metric], b.values[metric]) for a, b in pairs
            if metric in a.values and metric in b.values]
    kind = "binary" if _binary(metric, pairs) else "score"
    base = dict(metric=metric, family=family, kind=kind, pairs=len(pairs), n=len(both),
                unscored_a=sum(1 for a, _ in pairs if metric not in a.values),
                unscored_b=sum(1 for _, b in pairs if metric not in b.values), level=level, subject=subject)
    if not both:
        return MetricComparison(**base)  # type: ignore[arg-type]
    xa, xb = [x for x, _ in both], [y for _, y in both]
    mean_a, mean_b = statistics.fmean(xa), statistics.fmean(xb)
    if kind == "binary":
        lost = sum(1 for x, y in both if x > y)
        gained = sum(1 for x, y in both if y > x)
        test = mcnemar(lost, gained)
        interval = paired_proportion_interval(lost, gained, len(both), level=level)
        return MetricComparison(**base, mean_a=mean_a, mean_b=mean_b,  # type: ignore[arg-type]
                                diff=(gained - lost) / len(both),
                                low=interval[0] if interval else None, high=interval[1] if interval else None,
                                test=f"mcnemar-{test.method}", statistic=test.statistic, p_value=test.p_value,
                                lost=lost, gained=gained)
    diffs = [y - x for x, y in both]
    w = wilcoxon_signed_rank(diffs)
    interval = bootstrap_mean_difference(diffs, level=level, resamples=resamples, seed=seed)
    return MetricComparison(**base, mean_a=mean_a, mean_b=mean_b,  # type: ignore[arg-type]
                            diff=mean_b - mean_a,
                            low=interval[0] if interval else None, high=interval[1] if interval else None,
                            test=f"wilcoxon-{w.method}" if w else "wilcoxon (all differences zero)",
                            statistic=w.statistic if w else None, p_value=w.p_value if w else 1.0)


def _adjust(rows: list[MetricComparison]) -> list[MetricComparison]:
    # the share of items graded is a check on the data, not a quality hypothesis: outside the family
    tested = [i for i, r in enumerate(rows) if r.p_value is not None and not is_scored_rate(r.metric)]
    adjusted = holm([rows[i].p_value for i in tested])  # type: ignore[misc]
    out = list(rows)
    for i, p in zip(tested, adjusted):
        out[i] = MetricComparison(**{**asdict(rows[i]), "p_adjusted": p})
    return out


def _binary(metric: str, pairs: Sequence[tuple[Observation, Observation]]) -> bool:
    return any(x.is_binary(metric) or y.is_binary(metric) for x, y in pairs)


def _metrics(observations: Sequence[Observation]) -> list[str]:
    """A family's metrics in the order its scores came (the evaluator's order)."""
    return list(dict.fromkeys(m for o in observations for m in (*o.values, *o.unscored)))


def _fall(flip: dict[str, Any], scales: dict[str, Any]) -> float:
    """How far a flipped item's graded (non-binary) scores moved, each on its own scale's width."""
    a, b = flip["a"]["values"], flip["b"]["values"]
    total = 0.0
    for m in a.keys() & b.keys():
        scale = scales.get(m)
        if scale is None or not scale.binary:
            total += abs(a[m] - b[m]) / ((scale.high - scale.low) if scale is not None else 1.0)
    return total


def _side(o: Observation) -> dict[str, Any]:
    return {"id": o.id, "values": dict(o.values), "reason": o.reason}


def compare_observations(a: Mapping[str, Sequence[Observation]], b: Mapping[str, Sequence[Observation]], *,
                         run_a: str = "A", run_b: str = "B", level: float = 0.95, seed: int = 0,
                         resamples: int = 2000) -> Comparison:
    """Compare every family present in both ``a`` and ``b`` (see :func:`load_observations`)."""
    if not 0.0 < level < 1.0:
        raise ConfigError(f"confidence level {level} must lie between 0 and 1")
    shared = [f for f in a if f in b]
    if not shared:
        raise ConfigError(f"runs {run_a} and {run_b} share no comparable results (run A has "
                          f"{', '.join(a) or 'none'}; run B has {', '.join(b) or 'none'})")
    out = Comparison(run_a=run_a, run_b=run_b, level=level, seed=seed, resamples=resamples)
    overall, by_subject = [], []
    scales: dict[str, Any] = {}
    for family in shared:
        p: Pairing = pair(a[family], b[family])
        order = list(dict.fromkeys([*_metrics(a[family]), *_metrics(b[family])]))
        in_a, in_b = set(_metrics(a[family])), set(_metrics(b[family]))
        scales.update({m: sc for o in (*a[family], *b[family]) for m, sc in o.scales.items()})
        # a metric one run did not compute at all is named, not compared as if all were unscored
        out.pairing[family] = {"by": p.by, "pairs": len(p.pairs), "only_a": len(p.only_a),
                               "only_b": len(p.only_b), "repeated": p.repeated,
                               "metrics_only_a": [m for m in order if m in in_a - in_b],
                               "metrics_only_b": [m for m in order if m in in_b - in_a]}
        out.unpaired += [{"family": family, "run": "a", "id": o.id, "question": o.question} for o in p.only_a]
        out.unpaired += [{"family": family, "run": "b", "id": o.id, "question": o.question} for o in p.only_b]
        metrics = [m for m in order if m in in_a & in_b]
        for m in metrics:
            overall.append(_compare_metric(m, family, p.pairs, level=level, seed=seed, resamples=resamples))
        subjects = sorted({x.subject or y.subject for x, y in p.pairs if x.subject or y.subject})
        for s in subjects:
            group = [(x, y) for x, y in p.pairs if (x.subject or y.subject) == s]
            for m in metrics:
                by_subject.append(_compare_metric(m, family, group, level=level, seed=seed,
                                                  resamples=resamples, subject=s))
        for x, y in p.pairs:
            missing = [m for m in metrics if m in x.unscored or m in y.unscored]
            if missing:
                out.unscored.append({"family": family, "id_a": x.id, "id_b": y.id, "question": x.question,
                                     "subject": x.subject or y.subject, "metrics": missing,
                                     "a": {m: x.unscored[m] for m in missing if m in x.unscored},
                                     "b": {m: y.unscored[m] for m in missing if m in y.unscored}})
            for m in metrics:
                if _binary(m, p.pairs) and not is_scored_rate(m) and m in x.values and m in y.values \
                        and x.values[m] != y.values[m]:
                    out.flips.append({"family": family, "metric": m,
                                      "direction": "lost" if x.values[m] > y.values[m] else "gained",
                                      "question": x.question, "subject": x.subject or y.subject,
                                      "a": _side(x), "b": _side(y)})
        for m in metrics:
            if _binary(m, p.pairs):
                continue
            falls = sorted(((y.values[m] - x.values[m], x, y) for x, y in p.pairs
                            if m in x.values and m in y.values and y.values[m] < x.values[m]),
                           key=lambda t: t[0])
            out.movers += [{"family": family, "metric": m, "change": d, "question": x.question,
                            "subject": x.subject or y.subject, "a": _side(x), "b": _side(y)}
                           for d, x, y in falls[:_MOVERS]]
    out.metrics = _adjust(overall)
    out.subjects = _adjust(by_subject)
    # the largest falls first: a lost item whose grade fell from 5 to 1 before one from 4 to 3
    out.flips.sort(key=lambda f: (f["direction"] != "lost", -_fall(f, scales)))
    return out


def compare_runs(store: RunStore, run_a: str, run_b: str, *, level: float = 0.95, seed: int = 0,
                 resamples: int = 2000, agent: str | None = None, agent_b: str | None = None) -> Comparison:
    """Compare run ``run_b`` against baseline ``run_a`` (ids or unique prefixes) in ``store``.
    ``agent`` picks the GRAMMAR agent of both runs; ``agent_b`` the run's when it is named otherwise."""
    id_a, id_b = store.run(run_a)["id"], store.run(run_b)["id"]
    return compare_observations(load_observations(store, id_a, agent=agent),
                                load_observations(store, id_b, agent=agent_b or agent),
                                run_a=id_a, run_b=id_b, level=level, seed=seed, resamples=resamples)
