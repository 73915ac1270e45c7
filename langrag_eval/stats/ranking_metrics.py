"""Ranking metrics, written once: reciprocal rank, precision, recall, hit rate, average precision
and nDCG of one ranked list against graded relevance. Retrieval and tournament reports both call
these; each agrees with trec_eval to 1e-9 (tests/stats/test_ranking_metrics_trec_eval.py).

Conventions, chosen to match trec_eval:

* ``ranked`` is the retrieved ids, best first. **A repeated id counts once, at its first (best)
  position; later copies are removed before ranks are counted**, so they neither take a rank nor
  add gain. trec_eval reads a run as one score per (query, document), so the same list given to it
  with each id scored by its first rank yields the same numbers.
* ``relevance`` maps judged ids to grades; an unjudged id has grade 0. A document is *relevant*
  when its grade reaches ``threshold`` (trec_eval's ``-l``/``relevance_level``, default 1).
* ``k`` cuts the de-duplicated list (trec_eval's ``P_k``, ``recall_k``, ``map_cut_k``,
  ``ndcg_cut_k``, ``success_k``; reciprocal rank at ``k`` is trec_eval's ``recip_rank`` on the
  top ``k``). Precision at ``k`` divides by ``k`` even when fewer documents were retrieved.
* nDCG's gain is named: ``"linear"`` (the grade itself, trec_eval's ``ndcg``) or
  ``"exponential"`` (``2**grade - 1``, Burges et al. 2005). The ideal ranking orders every
  positively graded judged document of the query, whatever ``threshold`` is (as trec_eval).
* ``recall``, ``average_precision`` and ``ndcg`` are ``None`` when the query has no relevant
  document (no positive grade, for nDCG): the ratio is undefined. trec_eval prints 0 there; callers
  here count such queries instead of averaging them in as 0.

A run given as scores, not as a list, is ordered as trec_eval orders it by :func:`rank_by_score`:
score descending, ties broken by document id descending.

>>> rel = {"a": 2, "b": 1, "c": 0}
>>> reciprocal_rank(["c", "b", "a"], rel), reciprocal_rank(["c", "b", "a"], rel, threshold=2)
(0.5, 0.3333333333333333)
>>> round(ndcg(["c", "b", "a"], rel, k=3), 4), round(ndcg(["c", "b", "a"], rel, k=3, gain="exponential"), 4)
(0.6199, 0.5869)
>>> reciprocal_rank(["c", "c", "c", "b"], rel)    # the repeats of c take no rank
0.5
>>> rank_by_score({"x": 1.0, "y": 2.0, "z": 1.0})
['y', 'z', 'x']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from ..errors import ConfigError

__all__ = [
    "GAINS",
    "Gain",
    "average_precision",
    "dedupe",
    "hit_rate",
    "ndcg",
    "precision",
    "rank_by_score",
    "recall",
    "reciprocal_rank",
]

Relevance = Mapping[str, int | float]
Gain = Literal["linear", "exponential"]
GAINS: tuple[Gain, ...] = ("linear", "exponential")


def _check(k: int | None, threshold: float) -> None:
    if k is not None and k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if threshold <= 0:
        raise ConfigError(f"relevance threshold must be positive, got {threshold}")


def dedupe(ranked: Sequence[str], k: int | None = None) -> list[str]:
    """``ranked`` without repeats (each id at its first position), cut to ``k``.

    >>> dedupe(["a", "b", "a", "c"], 2)
    ['a', 'b']
    """
    seen: set[str] = set()
    unique = [d for d in ranked if not (d in seen or seen.add(d))]
    return unique if k is None else unique[:k]


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Ids ordered as trec_eval orders a run: score descending, then id descending on ties."""
    return [d for d, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def reciprocal_rank(ranked: Sequence[str], relevance: Relevance, *, k: int | None = None,
                    threshold: float = 1) -> float:
    """1 / rank of the first relevant document in the top ``k`` (0 when none)."""
    _check(k, threshold)
    for rank, doc in enumerate(dedupe(ranked, k), start=1):
        if relevance.get(doc, 0) >= threshold:
            return 1.0 / rank
    return 0.0


def precision(ranked: Sequence[str], relevance: Relevance, *, k: int, threshold: float = 1) -> float:
    """Relevant documents in the top ``k``, divided by ``k``."""
    _check(k, threshold)
    return sum(relevance.get(d, 0) >= threshold for d in dedupe(ranked, k)) / k


def hit_rate(ranked: Sequence[str], relevance: Relevance, *, k: int, threshold: float = 1) -> float:
    """1.0 when a relevant document is in the top ``k``, else 0.0 (trec_eval's ``success_k``)."""
    return 1.0 if reciprocal_rank(ranked, relevance, k=k, threshold=threshold) > 0 else 0.0


def _relevant(relevance: Relevance, threshold: float) -> set[str]:
    return {d for d, g in relevance.items() if g >= threshold}


def recall(ranked: Sequence[str], relevance: Relevance, *, k: int | None = None,
           threshold: float = 1) -> float | None:
    """Share of the relevant documents found in the top ``k``; None when there are none."""
    _check(k, threshold)
    relevant = _relevant(relevance, threshold)
    if not relevant:
        return None
    return len(relevant.intersection(dedupe(ranked, k))) / len(relevant)


def average_precision(ranked: Sequence[str], relevance: Relevance, *, k: int | None = None,
                      threshold: float = 1) -> float | None:
    """Mean of the precision at each relevant document's rank in the top ``k``, over all relevant
    documents of the query (found or not); None when there are none. MAP is its mean over queries."""
    _check(k, threshold)
    relevant = _relevant(relevance, threshold)
    if not relevant:
        return None
    found, total = 0, 0.0
    for rank, doc in enumerate(dedupe(ranked, k), start=1):
        if doc in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


def _gain(grade: float, gain: Gain) -> float:
    return grade if gain == "linear" else 2.0 ** grade - 1.0


def ndcg(ranked: Sequence[str], relevance: Relevance, *, k: int | None = None,
         gain: Gain = "linear") -> float | None:
    """Normalised discounted cumulative gain at ``k``: gains ``grade`` (``"linear"``) or
    ``2**grade - 1`` (``"exponential"``) discounted by ``log2(rank + 1)``; None when no grade is > 0."""
    _check(k, 1)
    if gain not in GAINS:
        raise ConfigError(f"nDCG gain must be one of {', '.join(GAINS)}; got {gain!r}")
    ideal = sorted((g for g in relevance.values() if g > 0), reverse=True)[:k]
    idcg = sum(_gain(g, gain) / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg <= 0:
        return None
    # Negative grades add no gain (trec_eval's ndcg counts only positive gains).
    dcg = sum(_gain(g, gain) / math.log2(i + 2) for i, d in enumerate(dedupe(ranked, k))
              if (g := relevance.get(d, 0)) > 0)
    return dcg / idcg
