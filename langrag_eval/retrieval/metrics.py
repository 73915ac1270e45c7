"""Retrieval metrics over graded relevance (0 not, 1 somewhat, 2 very relevant) or binary qrels:
run-level means over the per-query functions of :mod:`langrag_eval.stats.ranking_metrics` (the one
implementation, checked against trec_eval; repeated ids count once, at their first position).

Per query, ``ranked`` is the retrieved ids best first and ``relevance`` maps judged ids to grades
(unjudged ids count as 0). A document is *relevant* when its grade reaches ``threshold``: the
RAG-Fusion paper's Table 4 reports MRR@5 with ``threshold=2`` (very relevant only) and
``threshold=1`` (somewhat or very relevant); :func:`paper_mrr` gives both.

- ``reciprocal_rank``, ``precision``, ``hit_rate`` are always defined (0 when nothing relevant is
  retrieved: that is the retriever's miss, and it is measured).
- ``ndcg`` (gain named by ``gain``: ``"linear"`` ``grade``, as trec_eval, or ``"exponential"``
  ``2**grade - 1``), ``recall`` and ``average_precision`` are ``None`` when the query has no relevant
  document at all: the ideal ranking is empty, so the ratio is undefined. :func:`evaluate_run`
  leaves such queries out of those means and counts them in ``undefined``.

>>> rel = {"a": 2, "b": 1, "c": 0}
>>> reciprocal_rank(["c", "b", "a"], rel, k=5), reciprocal_rank(["c", "b", "a"], rel, k=5, threshold=2)
(0.5, 0.3333333333333333)
>>> round(ndcg(["c", "b", "a"], rel, k=3), 4)
0.6199
>>> paper_mrr({"q1": ["c", "b", "a"]}, {"q1": rel})
{'very_relevant': 0.3333333333333333, 'somewhat_or_very_relevant': 0.5}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from ..errors import ConfigError
from ..stats.ranking_metrics import (
    Gain, average_precision, hit_rate, ndcg, precision, rank_by_score, recall, reciprocal_rank,
)

__all__ = [
    "RunScores",
    "average_precision",
    "evaluate_run",
    "hit_rate",
    "mrr",
    "ndcg",
    "paper_mrr",
    "precision",
    "rank_by_score",
    "recall",
    "reciprocal_rank",
]

Relevance = Mapping[str, int | float]


def mrr(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Relevance], *, k: int | None = None,
        threshold: float = 1) -> float:
    """Mean reciprocal rank over the queries of ``run`` (a query absent from ``qrels`` scores 0)."""
    if not run:
        raise ConfigError("the run holds no queries; MRR of nothing is undefined")
    return sum(reciprocal_rank(r, qrels.get(q, {}), k=k, threshold=threshold) for q, r in run.items()) / len(run)


class RunScores(BaseModel):
    """Means over the queries of a run; ``undefined`` counts queries without any relevant document
    (left out of the recall and MAP means; ndcg leaves out those without any positive grade).
    ``gain`` names nDCG's gain convention."""

    k: int
    threshold: float
    gain: Gain = "linear"
    queries: int
    mrr: float
    ndcg: float | None
    map: float | None = None
    precision: float
    recall: float | None
    hit_rate: float
    undefined: int


def _mean(values: list[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def evaluate_run(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Relevance], *, k: int = 5,
                 threshold: float = 1, gain: Gain = "linear") -> RunScores:
    """All metrics at ``k`` for a run (query id -> ranked doc ids) against qrels (query -> id -> grade)."""
    if not run:
        raise ConfigError("the run holds no queries")
    n = len(run)
    graded = [(r, qrels.get(q, {})) for q, r in run.items()]
    recalls = [recall(r, rel, k=k, threshold=threshold) for r, rel in graded]
    return RunScores(
        k=k, threshold=threshold, gain=gain, queries=n,
        mrr=sum(reciprocal_rank(r, rel, k=k, threshold=threshold) for r, rel in graded) / n,
        ndcg=_mean([ndcg(r, rel, k=k, gain=gain) for r, rel in graded]),
        map=_mean([average_precision(r, rel, k=k, threshold=threshold) for r, rel in graded]),
        precision=sum(precision(r, rel, k=k, threshold=threshold) for r, rel in graded) / n,
        recall=_mean(recalls),
        hit_rate=sum(hit_rate(r, rel, k=k, threshold=threshold) for r, rel in graded) / n,
        undefined=sum(v is None for v in recalls))


def paper_mrr(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Relevance], *, k: int = 5) -> dict[str, float]:
    """MRR@k at the two thresholds of the RAG-Fusion paper's Table 4."""
    return {"very_relevant": mrr(run, qrels, k=k, threshold=2),
            "somewhat_or_very_relevant": mrr(run, qrels, k=k, threshold=1)}
