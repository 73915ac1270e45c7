"""Retrieval metrics over graded relevance (0 not, 1 somewhat, 2 very relevant) or binary qrels.

Per query, ``ranked`` is the retrieved ids best first and ``relevance`` maps judged ids to grades
(unjudged ids count as 0). A document is *relevant* when its grade reaches ``threshold``: the
RAG-Fusion paper's Table 4 reports MRR@5 with ``threshold=2`` (very relevant only) and
``threshold=1`` (somewhat or very relevant); :func:`paper_mrr` gives both.

- ``reciprocal_rank``, ``precision``, ``hit_rate`` are always defined (0 when nothing relevant is
  retrieved: that is the retriever's miss, and it is measured).
- ``ndcg`` (linear gain ``grade / log2(rank + 1)``, as trec_eval) and ``recall`` are ``None`` when
  the query has no relevant document at all: the ideal ranking is empty, so the ratio is undefined.
  :func:`evaluate_run` leaves such queries out of those means and counts them in ``undefined``.

>>> rel = {"a": 2, "b": 1, "c": 0}
>>> reciprocal_rank(["c", "b", "a"], rel, k=5), reciprocal_rank(["c", "b", "a"], rel, k=5, threshold=2)
(0.5, 0.3333333333333333)
>>> round(ndcg(["c", "b", "a"], rel, k=3), 4)
0.6199
>>> paper_mrr({"q1": ["c", "b", "a"]}, {"q1": rel})
{'very_relevant': 0.3333333333333333, 'somewhat_or_very_relevant': 0.5}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from ..errors import ConfigError

__all__ = [
    "RunScores",
    "evaluate_run",
    "hit_rate",
    "mrr",
    "ndcg",
    "paper_mrr",
    "precision",
    "recall",
    "reciprocal_rank",
]

Relevance = Mapping[str, int | float]


def _check(k: int | None, threshold: float) -> None:
    if k is not None and k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if threshold <= 0:
        raise ConfigError(f"relevance threshold must be positive, got {threshold}")


def _top(ranked: Sequence[str], k: int | None) -> list[str]:
    seen: set[str] = set()
    unique = [d for d in ranked if not (d in seen or seen.add(d))]  # a repeated id counts once
    return unique if k is None else unique[:k]


def reciprocal_rank(ranked: Sequence[str], relevance: Relevance, *, k: int | None = None,
                    threshold: float = 1) -> float:
    """1 / rank of the first relevant document in the top ``k`` (0 when none)."""
    _check(k, threshold)
    for rank, doc in enumerate(_top(ranked, k), start=1):
        if relevance.get(doc, 0) >= threshold:
            return 1.0 / rank
    return 0.0


def precision(ranked: Sequence[str], relevance: Relevance, *, k: int, threshold: float = 1) -> float:
    """Relevant documents in the top ``k``, divided by ``k``."""
    _check(k, threshold)
    return sum(relevance.get(d, 0) >= threshold for d in _top(ranked, k)) / k


def hit_rate(ranked: Sequence[str], relevance: Relevance, *, k: int, threshold: float = 1) -> float:
    """1.0 when a relevant document is in the top ``k``, else 0.0."""
    return 1.0 if reciprocal_rank(ranked, relevance, k=k, threshold=threshold) > 0 else 0.0


def recall(ranked: Sequence[str], relevance: Relevance, *, k: int, threshold: float = 1) -> float | None:
    """Share of the relevant documents found in the top ``k``; None when there are none."""
    _check(k, threshold)
    relevant = {d for d, g in relevance.items() if g >= threshold}
    if not relevant:
        return None
    return len(relevant & set(_top(ranked, k))) / len(relevant)


def ndcg(ranked: Sequence[str], relevance: Relevance, *, k: int) -> float | None:
    """Normalised discounted cumulative gain at ``k`` with linear gains; None when no grade is > 0."""
    _check(k, 1)
    dcg = sum(relevance.get(d, 0) / math.log2(i + 2) for i, d in enumerate(_top(ranked, k)))
    ideal = sorted((g for g in relevance.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else None


def mrr(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Relevance], *, k: int | None = None,
        threshold: float = 1) -> float:
    """Mean reciprocal rank over the queries of ``run`` (a query absent from ``qrels`` scores 0)."""
    if not run:
        raise ConfigError("the run holds no queries; MRR of nothing is undefined")
    return sum(reciprocal_rank(r, qrels.get(q, {}), k=k, threshold=threshold) for q, r in run.items()) / len(run)


class RunScores(BaseModel):
    """Means over the queries of a run; ``undefined`` counts queries without any relevant document
    (left out of the recall mean; ndcg leaves out those without any positive grade)."""

    k: int
    threshold: float
    queries: int
    mrr: float
    ndcg: float | None
    precision: float
    recall: float | None
    hit_rate: float
    undefined: int


def evaluate_run(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Relevance], *, k: int = 5,
                 threshold: float = 1) -> RunScores:
    """All metrics at ``k`` for a run (query id -> ranked doc ids) against qrels (query -> id -> grade)."""
    if not run:
        raise ConfigError("the run holds no queries")
    n = len(run)
    graded = [(r, qrels.get(q, {})) for q, r in run.items()]
    ndcgs = [v for r, rel in graded if (v := ndcg(r, rel, k=k)) is not None]
    recalls = [v for r, rel in graded if (v := recall(r, rel, k=k, threshold=threshold)) is not None]
    return RunScores(
        k=k, threshold=threshold, queries=n,
        mrr=sum(reciprocal_rank(r, rel, k=k, threshold=threshold) for r, rel in graded) / n,
        ndcg=sum(ndcgs) / len(ndcgs) if ndcgs else None,
        precision=sum(precision(r, rel, k=k, threshold=threshold) for r, rel in graded) / n,
        recall=sum(recalls) / len(recalls) if recalls else None,
        hit_rate=sum(hit_rate(r, rel, k=k, threshold=threshold) for r, rel in graded) / n,
        undefined=n - len(recalls))


def paper_mrr(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Relevance], *, k: int = 5) -> dict[str, float]:
    """MRR@k at the two thresholds of the RAG-Fusion paper's Table 4."""
    return {"very_relevant": mrr(run, qrels, k=k, threshold=2),
            "somewhat_or_very_relevant": mrr(run, qrels, k=k, threshold=1)}
