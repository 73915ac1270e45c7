"""THELMA's dataset summary: per-metric means with spread, the per-dataset Table 2 diagnosis and
judge calls and tokens per sample. The batch itself is :meth:`Thelma.aevaluate_many`.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ThelmaScript
>>> from langrag_eval import Sample
>>> from langrag_eval.thelma import Thelma
>>> thelma = Thelma(Judge(ThelmaScript(default=1).model()), metrics=("rp", "gr"))
>>> samples = [Sample(id=str(i), question="Who?", contexts=["Ada."], answer="Ada.") for i in range(3)]
>>> summary = thelma.summarize(thelma.evaluate_many(samples)).details
>>> summary["metrics"]["rp"]["mean"], summary["metrics"]["rp"]["n"]
(1.0, 3)
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any


from ..results import Unscored
from .diagnosis import Thresholds, diagnose_dataset
from .metrics import diagnosis_rules, metric_ids, metric_name
from .sample import ThelmaResult

__all__ = ["summarize"]


def _spread(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "std": None, "min": None, "max": None}
    return {"mean": statistics.fmean(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values)}


def summarize(results: Sequence[ThelmaResult], thresholds: Thresholds | None = None, *,
              mode: str = "per_component") -> dict[str, Any]:
    """Per metric: mean, sample standard deviation (0.0 for one score, None for none), min, max,
    ``n`` scored and ``unscored`` with a count per cause; the dataset diagnosis; and usage per sample."""
    metrics: dict[str, Any] = {}
    present = {m for r in results for m in r.metrics}
    for metric in [*(m for m in metric_ids() if m in present), *sorted(present - set(metric_ids()))]:
        outcomes = [r.metrics[metric] for r in results if metric in r.metrics]
        if not outcomes:
            continue
        scores = [v.score for v in outcomes if not isinstance(v, Unscored)]
        causes = Counter(v.cause for v in outcomes if isinstance(v, Unscored))
        metrics[metric] = {"name": metric_name(metric), **_spread(scores), "n": len(scores),
                           "unscored": sum(causes.values()), "causes": dict(causes)}
    n = len(results)
    totals = {k: sum(getattr(r.usage, k) for r in results)
              for k in ("calls", "cached", "failed", "repairs", "prompt_tokens", "completion_tokens")}
    usage = {"samples": n, **totals,
             "calls_per_sample": totals["calls"] / n if n else None,
             "tokens_per_sample": (totals["prompt_tokens"] + totals["completion_tokens"]) / n if n else None}
    t = thresholds or Thresholds()
    return {"version": 1, "mode": mode, "metrics": metrics,
            "diagnosis": diagnose_dataset([r.score_values() for r in results], t, diagnosis_rules()),
            "thresholds": {"default_low": t.default_low, "default_high": t.default_high,
                           "low": dict(t.low), "high": dict(t.high)},
            "usage": usage}
