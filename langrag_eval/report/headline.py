"""The answer first: one line per capability at the top of the report, each with its figure, the
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

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

__all__ = ["headline", "thelma_intervals"]


def _top(causes: Mapping[str, Any] | None) -> str | None:
    counts = Counter({str(k): int(v or 0) for k, v in (causes or {}).items() if v})
    return counts.most_common(1)[0][0] if counts else None


def _row(capability: str, what: str, value: str, low: float | None, high: float | None, scored: int,
         total: int, unscored: int, cause: str | None, *, percent: bool = False, link: str = "",
         method: str = "") -> dict[str, Any]:
    def show(v: float | None) -> str:
        if v is None or not math.isfinite(v):
            return "—"
        return f"{v:.0%}" if percent else f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    return {"capability": capability, "what": what, "value": value, "low": low, "high": high,
            "interval": "—" if low is None or high is None else f"[{show(low)}, {show(high)}]",
            "method": method, "n": f"{scored} of {total}", "unscored": unscored, "cause": cause, "link": link}


def thelma_intervals(thelma: Mapping[str, Any], *, seed: int = 0) -> dict[str, tuple[float | None, float | None, str]]:
    """Each THELMA metric's 95 % interval of the mean: the percentile bootstrap over the stored
    per-sample scores (what ``compare`` resamples too), else Student's t from the stored spread."""
    from ..stats.intervals import bootstrap_values, mean_interval

    values: dict[str, list[float]] = {}
    for record in thelma.get("samples") or []:
        for metric, v in ((record or {}).get("scores") or {}).items():
            if isinstance(v, (int, float)) and math.isfinite(v):
                values.setdefault(metric, []).append(float(v))
    out: dict[str, tuple[float | None, float | None, str]] = {}
    for metric, m in (thelma.get("metrics") or {}).items():
        scored = values.get(metric) or []
        n = int(m.get("n") or 0)
        if len(scored) >= 2 and len(scored) == n:
            e = bootstrap_values(scored, seed=seed)
            out[metric] = (e.low, e.high, "bootstrap")
        elif n >= 2 and m.get("mean") is not None and m.get("std") is not None:
            from scipy.stats import t

            half = float(t.ppf(0.975, n - 1)) * float(m["std"]) / math.sqrt(n)
            out[metric] = (max(0.0, m["mean"] - half), min(1.0, m["mean"] + half), "t")
        else:
            e = mean_interval(scored)
            out[metric] = (e.low, e.high, "t")
    return out


def headline(artifacts: Mapping[str, Any], *, summaries: list[dict[str, Any]] | None = None,
             tournament_view: Mapping[str, Any] | None = None, comparison: Mapping[str, Any] | None = None
             ) -> list[dict[str, Any]]:
    """The summary rows of the report, in the order of its sections."""
    rows: list[dict[str, Any]] = []
    for e in summaries or []:
        s = e["summary"]
        lost = sum(s.unscored.values())
        for name, sc in s.scores.items():
            value = "—" if sc.mean is None else (f"{sc.mean:.0%}" if sc.binary else f"{sc.mean:.3g}")
            rows.append(_row(e["evaluator"], name, value, sc.low, sc.high, sc.n, s.n, s.n - sc.n if s.n else lost,
                             _top(sc.unscored) or _top(s.unscored), percent=sc.binary, link="#scores",
                             method=sc.interval))
    if comparison:
        moved = [m for m in comparison.get("metrics") or [] if m.get("low") is not None and m.get("high") is not None
                 and (m["low"] > 0 or m["high"] < 0)]
        rows.append(_row("comparison", "metrics whose interval excludes no change",
                         f"{len(moved)} of {len(comparison.get('metrics') or [])}", None, None,
                         len(comparison.get("metrics") or []), len(comparison.get("metrics") or []), 0, None,
                         link="#comparison"))
    vrag = artifacts.get("vrag")
    if isinstance(vrag, dict) and vrag.get("items") is not None:
        from ..stats.intervals import wilson

        scored, total = int(vrag.get("scored") or 0), int(vrag.get("items") or 0)
        accepted = int(vrag.get("accepted") or round((vrag.get("accept_rate") or 0) * scored))
        e = wilson(accepted, scored) if scored else None
        unscored = vrag.get("unscored") or {}
        rows.append(_row("vRAG-Eval", "accept rate", "—" if e is None or e.value is None else f"{e.value:.0%}",
                         e.low if e else None, e.high if e else None, scored, total,
                         int(unscored.get("count") or total - scored), _top(unscored.get("by_cause")),
                         percent=True, link="#vrag", method="wilson"))
    thelma = artifacts.get("thelma")
    if isinstance(thelma, dict) and thelma.get("metrics"):
        intervals = thelma_intervals(thelma)
        total = len(thelma.get("samples") or []) or None
        for metric, m in thelma["metrics"].items():
            n, lost = int(m.get("n") or 0), int(m.get("unscored") or 0)
            low, high, method = intervals.get(metric, (None, None, ""))
            rows.append(_row("THELMA", f"{metric.upper()} {m.get('name') or ''}".strip(),
                             "—" if m.get("mean") is None else f"{m['mean']:.3g}", low, high, n,
                             total or n + lost, lost, _top(m.get("causes")), link="#thelma", method=method))
    tour = artifacts.get("tournament")
    if isinstance(tour, dict) and tour and tournament_view is None:
        from .views import tournament_view as view_of

        tournament_view = view_of(tour)
    if isinstance(tour, dict) and tournament_view is not None:
        games = tour.get("games") or {}
        played = [r for r in tournament_view["ranking"] if r.get("games")]
        if tournament_view.get("separated") and played:
            top = played[0]
            what, value = "leader (Bradley-Terry rating)", f"{top['agent']} {top.get('bt_rating') or 0:,.0f}"
            low, high = top.get("bt_low"), top.get("bt_high")
        else:
            what, value, low, high = "ranking", "tied: no agent separated" if played else "no game played", None, None
        rows.append(_row("tournament", what, value, low, high, int(games.get("played") or 0),
                         int(games.get("scheduled") or games.get("played") or 0), int(games.get("unscored") or 0),
                         "unscored game" if games.get("unscored") else None, link="#tournament", method="bootstrap"))
    grammar = artifacts.get("grammar")
    for agent, a in sorted(((grammar or {}).get("agents") or {}).items()) if isinstance(grammar, dict) else []:
        overall = (a or {}).get("overall") or {}
        accuracy = overall.get("accuracy")
        items = int((a or {}).get("items") or 0)
        # GRAMMAR's accuracy is robustness times the share outside gap groups (its eq. 2), not a
        # plain proportion: no interval is claimed for it
        rows.append(_row("GRAMMAR", f"accuracy of {agent}", "—" if accuracy is None else f"{accuracy:.0%}",
                         None, None, items, items, 0, None, link="#grammar"))
    windows = (thelma or {}).get("windows") if isinstance(thelma, dict) else None
    if windows:
        flagged = [w for w in windows if w.get("dropped")]
        rows.append(_row("monitoring", "windows with a flagged drop", f"{len(flagged)} of {len(windows)}", None,
                         None, len(windows), len(windows), 0, None, link="#windows"))
    return rows
