"""The answer first: one line per measure at the top of the report, each with its figure, the
95 % interval of that figure, how many items it rests on (scored of all) and, where some were not
scored, how many and the commonest cause. Settings and the judge card come after it.

Every interval is computed here by the package's own statistics (:mod:`langrag_eval.stats.intervals`):
Wilson for an accept rate, the percentile bootstrap of the mean (seeded) for THELMA's metrics, the
evaluator's stored interval for a typed summary, the tournament's stored bootstrap interval of the
Bradley-Terry rating.

>>> rows = headline({"vrag": {"items": 10, "scored": 8, "accepted": 6, "accept_rate": 0.75,
...                           "unscored": {"count": 2, "by_cause": {"timeout": 2}}}})
>>> r = rows[0]
>>> r["capability"], r["value"], r["n"], r["unscored"], r["cause"], round(r["low"], 2)
('vRAG-Eval', '75%', '8 of 10', 2, 'timeout', 0.41)
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

__all__ = ["headline", "row", "thelma_intervals", "top_cause"]


def top_cause(causes: Mapping[str, Any] | None) -> str | None:
    counts = Counter({str(k): int(v or 0) for k, v in (causes or {}).items() if v})
    return counts.most_common(1)[0][0] if counts else None


def row(capability: str, what: str, value: str, low: float | None, high: float | None, scored: int,
        total: int, unscored: int, cause: str | None, *, percent: bool = False, link: str = "",
        method: str = "") -> dict[str, Any]:
    """One headline row: the measure, its figure and 95 % interval, what it rests on (``scored``
    of ``total``), the unscored and their commonest ``cause``, the section it links to."""
    def show(v: float | None) -> str:
        if v is None or not math.isfinite(v):
            return "—"
        return f"{v:.0%}" if percent else f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    return {"capability": capability, "what": what, "value": value, "low": low, "high": high,
            "interval": "—" if low is None or high is None else f"[{show(low)}, {show(high)}]",
            "method": method, "n": f"{scored} of {total}", "unscored": unscored, "cause": cause, "link": link}


def thelma_intervals(thelma: Mapping[str, Any], *, seed: int = 0) -> dict[str, tuple[float | None, float | None, str]]:
    """Each THELMA metric's 95 % interval of the mean: the percentile bootstrap over the stored
    per-sample scores (what ``compare`` resamples too), else Student's t from the stored spread.
    A report asks twice (its THELMA section and the headline); the intervals of the same scores
    are computed once (0.4 s a metric at 10,000 samples), keyed by the scores themselves."""
    values: dict[str, list[float]] = {}
    for record in thelma.get("samples") or []:
        for metric, v in ((record or {}).get("scores") or {}).items():
            if isinstance(v, (int, float)) and math.isfinite(v):
                values.setdefault(metric, []).append(float(v))
    return {metric: _interval(tuple(values.get(metric) or ()), int(m.get("n") or 0), _number(m.get("mean")),
                              _number(m.get("std")), seed)
            for metric, m in (thelma.get("metrics") or {}).items()}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


@functools.lru_cache(maxsize=32)
def _interval(scored: tuple[float, ...], n: int, mean: float | None, std: float | None,
              seed: int) -> tuple[float | None, float | None, str]:
    from ..stats.intervals import bootstrap_values, mean_interval

    if len(scored) >= 2 and len(scored) == n:
        e = bootstrap_values(list(scored), seed=seed)
        return e.low, e.high, "bootstrap"
    if n >= 2 and mean is not None and std is not None:
        from scipy.stats import t

        half = float(t.ppf(0.975, n - 1)) * std / math.sqrt(n)
        return max(0.0, mean - half), min(1.0, mean + half), "t"
    e = mean_interval(list(scored))
    return e.low, e.high, "t"


def headline(artifacts: Mapping[str, Any], *, summaries: list[dict[str, Any]] | None = None,
             comparison: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The summary rows of the report: the typed summaries' scores, the comparison, then the rows
    each drawn section's kind gives (:func:`~langrag_eval.report.sections.register_section`'s
    ``headline``), in the order of its sections."""
    from .sections import headline_rows

    rows: list[dict[str, Any]] = []
    for e in summaries or []:
        s = e["summary"]
        lost = sum(s.unscored.values())
        for name, sc in s.scores.items():
            value = "—" if sc.mean is None else (f"{sc.mean:.0%}" if sc.binary else f"{sc.mean:.3g}")
            rows.append(row(e["evaluator"], name, value, sc.low, sc.high, sc.n, s.n, s.n - sc.n if s.n else lost,
                            top_cause(sc.unscored) or top_cause(s.unscored), percent=sc.binary, link="#scores",
                            method=sc.interval))
    if comparison:
        moved = [m for m in comparison.get("metrics") or [] if m.get("low") is not None and m.get("high") is not None
                 and (m["low"] > 0 or m["high"] < 0)]
        rows.append(row("comparison", "metrics whose interval excludes no change",
                        f"{len(moved)} of {len(comparison.get('metrics') or [])}", None, None,
                        len(comparison.get("metrics") or []), len(comparison.get("metrics") or []), 0, None,
                        link="#comparison"))
    return rows + headline_rows(artifacts)
