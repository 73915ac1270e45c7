"""THELMA over a dataset: a resumable batch (``run_batch``), then per-metric means with spread,
the per-dataset Table 2 diagnosis and judge calls and tokens per sample.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ThelmaScript
>>> script = ThelmaScript(default=1)
>>> samples = [ThelmaSample(id=str(i), query="Who?", sources=["Ada."], response="Ada.") for i in range(3)]
>>> report = evaluate_dataset_sync(Thelma(Judge(script.model()), metrics=("rp", "gr")), samples)
>>> report.summary["metrics"]["rp"]["mean"], report.summary["metrics"]["rp"]["n"]
(1.0, 3)
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import DataError
from ..results import Unscored
from ..runtime import RunStore, put_item_index, run_batch, run_sync
from .aggregate import METRIC_NAMES
from .diagnosis import Thresholds, diagnose_dataset
from .evaluator import Thelma
from .sample import ThelmaResult, ThelmaSample

__all__ = ["ThelmaReport", "evaluate_dataset", "evaluate_dataset_sync", "summarize"]


class ThelmaReport(BaseModel):
    """Per-sample results (input order) and the dataset summary (see :func:`summarize`)."""

    model_config = ConfigDict(frozen=True)

    results: list[ThelmaResult]
    summary: dict[str, Any]


async def evaluate_dataset(thelma: Thelma, samples: Sequence[ThelmaSample], *, store: RunStore | None = None,
                           run_id: str | None = None, limit: int = 8) -> ThelmaReport:
    """Score every sample once per run; with a store and run id a restarted run reads finished
    samples back instead of judging them again. Samples are keyed by id (else by content)."""
    keys = [s.key() for s in samples]
    duplicates = [k for k, c in Counter(keys).items() if c > 1]
    if duplicates:
        raise DataError(f"sample ids must be unique for a resumable run; repeated: {duplicates[:5]}",
                        field="id")

    async def one(sample: ThelmaSample) -> ThelmaResult:
        result = await thelma.evaluate(sample)
        return result if result.id else result.model_copy(update={"id": sample.key()})

    task = f"thelma:{thelma.mode}"
    if store is not None and run_id is not None:
        # THELMA has no reference answer: an item is what it asks (sources and response are the app's)
        put_item_index(store, run_id, task, ((s.key(), s.query, None, None) for s in samples))
    results = await run_batch(samples, one, key=ThelmaSample.key, task=task,
                              result_type=ThelmaResult, store=store, run_id=run_id, limit=limit,
                              description="THELMA")
    done = [r for r in results if isinstance(r, ThelmaResult)]  # evaluate() never returns Unscored
    return ThelmaReport(results=done, summary=summarize(done, thelma.thresholds, mode=thelma.mode))


def evaluate_dataset_sync(thelma: Thelma, samples: Sequence[ThelmaSample], **kwargs: Any) -> ThelmaReport:
    """:func:`evaluate_dataset` from synchronous code."""
    return run_sync(evaluate_dataset(thelma, samples, **kwargs))


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
    for metric in METRIC_NAMES:
        outcomes = [r.metrics[metric] for r in results if metric in r.metrics]
        if not outcomes:
            continue
        scores = [v.score for v in outcomes if not isinstance(v, Unscored)]
        causes = Counter(v.cause for v in outcomes if isinstance(v, Unscored))
        metrics[metric] = {"name": METRIC_NAMES[metric], **_spread(scores), "n": len(scores),
                           "unscored": sum(causes.values()), "causes": dict(causes)}
    n = len(results)
    totals = {k: sum(getattr(r.usage, k) for r in results)
              for k in ("calls", "cached", "failed", "repairs", "prompt_tokens", "completion_tokens")}
    usage = {"samples": n, **totals,
             "calls_per_sample": totals["calls"] / n if n else None,
             "tokens_per_sample": (totals["prompt_tokens"] + totals["completion_tokens"]) / n if n else None}
    t = thresholds or Thresholds()
    return {"version": 1, "mode": mode, "metrics": metrics,
            "diagnosis": diagnose_dataset([r.scores() for r in results], t),
            "thresholds": {"default_low": t.default_low, "default_high": t.default_high,
                           "low": dict(t.low), "high": dict(t.high)},
            "usage": usage}
