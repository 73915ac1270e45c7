"""The report's monitoring section for ``thelma --traces --window``: a time series per metric (each
window's mean with its 95 % interval, the flagged windows marked), the windows' table, and each
window's worst items with the trace id they came from, linked to the item browser.

What it reads is what the command stored in the ``thelma`` artifact: ``windows`` (the rows of
:func:`langrag_eval.traces.windows.compare_windows`), ``window`` (the size and traces per window) and
``samples`` (each scored sample with its ``window`` and ``trace_id``).

>>> view = windows_view({"windows": [
...     {"window": "d1", "baseline": True, "dropped": [], "metrics": {"sp1": {"n": 3, "mean": 0.9, "low": 0.8, "high": 1.0}}},
...     {"window": "d2", "baseline": False, "dropped": ["sp1"], "metrics": {"sp1": {"n": 3, "mean": 0.3, "low": 0.1, "high": 0.5}}}],
...     "samples": [{"id": "t1", "trace_id": "t1", "window": "d2", "scores": {"sp1": 0.0}}]}, {})
>>> [w["window"] for w in view["rows"] if w["dropped"]], view["worst"]["d2"][0]["trace_id"]
(['d2'], 't1')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from .svg import time_series

__all__ = ["WORST", "windows_view"]

WORST = 3  # items shown per window, lowest mean of their scored metrics first


def _mean(scores: Mapping[str, Any]) -> float | None:
    values = [float(v) for v in scores.values() if isinstance(v, (int, float)) and math.isfinite(v)]
    return sum(values) / len(values) if values else None


def windows_view(thelma: Mapping[str, Any], questions: Mapping[str, str | None]) -> dict[str, Any]:
    """Charts (one per metric), table rows and the worst items of each window."""
    rows = list(thelma.get("windows") or [])
    counts = (thelma.get("window") or {}).get("traces") or {}
    metrics: list[str] = []
    for r in rows:
        for m in r.get("metrics") or {}:
            if m not in metrics:
                metrics.append(m)
    names = {k: (v or {}).get("name") or k for k, v in (thelma.get("metrics") or {}).items()}
    labels = [str(r["window"]) for r in rows]
    base = next((i for i, r in enumerate(rows) if r.get("baseline")), None)
    charts = []
    for metric in metrics:
        cells = [(r.get("metrics") or {}).get(metric) or {} for r in rows]
        charts.append(Markup(time_series(
            labels, [c.get("mean") for c in cells], [c.get("low") for c in cells], [c.get("high") for c in cells],
            flagged=[metric in (r.get("dropped") or []) for r in rows], baseline=base,
            title=f"{metric.upper()} {names.get(metric, '')}: mean per window, 95 % interval".replace("  ", " "))))
    worst: dict[str, list[dict[str, Any]]] = {}
    for record in thelma.get("samples") or []:
        window = record.get("window")
        if window is None:
            continue
        mean = _mean(record.get("scores") or {})
        worst.setdefault(str(window), []).append({
            "id": str(record.get("id")), "trace_id": str(record.get("trace_id") or record.get("id")),
            "mean": mean, "question": questions.get(str(record.get("id"))),
            "scores": {k: v for k, v in (record.get("scores") or {}).items() if v is not None},
            "unscored": sorted((record.get("unscored") or {}))})
    for window, items in worst.items():
        # an item with nothing scored is the least known, not the worst: after the scored ones
        items.sort(key=lambda i: (i["mean"] is None, i["mean"] if i["mean"] is not None else 0.0, i["id"]))
        del items[WORST:]
    table = [{"window": str(r["window"]), "baseline": bool(r.get("baseline")), "dropped": list(r.get("dropped") or []),
              "traces": counts.get(r["window"], 0), "metrics": r.get("metrics") or {}} for r in rows]
    return {"charts": charts, "rows": table, "metrics": metrics, "worst": worst,
            "size": (thelma.get("window") or {}).get("size")}
