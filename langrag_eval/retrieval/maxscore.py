"""Exact top-k BM25 from the postings of a query's high-scoring terms (MaxScore, Turtle & Flood 1995).

A query's common terms have long postings and small scores. Given each term's largest posting
score, a document holding only terms whose largest scores sum below what ``k`` documents are
known to reach cannot be among the ``k`` best: the sum over the other ("essential") terms' postings
finds every document that can. Those candidates are narrowed by the same bound, and the few left
are scored over every query term, in query order, in double, as the full sum does; so rows and
float32 scores are exactly :func:`~.bm25.top_k` of the full sums, ties to the lower row included.

Every bound holds under rounding: a double sum of non-negative terms never decreases when a term
grows (rounding is monotone), the float32 cast is monotone too, and the one bound that adds a
partial sum to a remainder carries a relative margin (``_SLACK``) far above the few half-ulps a
double sum of a few terms can lose. Where the bounds do not prune enough (few terms, large ``k``,
scores alike) the caller sums every posting instead.

>>> import numpy as np
>>> docs = np.concatenate([[3, 5, 7], np.arange(100)]).astype(np.int32)   # a rare and a common term
>>> weights = np.concatenate([[4, 5, 3], np.full(100, 0.25)]).astype(np.float32)
>>> rows, scores = top_k_essential(docs, weights, [(0, 3, 5.0), (3, 103, 0.25)], k=2, size=100)
>>> rows.tolist(), scores.tolist()
([5, 3], [5.25, 4.25])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["top_k_essential"]

_SLACK = 2.0 ** -40   # relative margin on bounds mixing double sums taken in different orders
_LOOKUP = 16          # a row looked up in a term's postings costs about this many summed postings


def _at(held: np.ndarray, scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The term's score in each of ``rows`` (0 where the term's postings ``held`` lack it)."""
    at = np.minimum(np.searchsorted(held, rows), held.shape[0] - 1)
    return np.where(held[at] == rows, scores[at], np.float32(0.0))


def _kth(values: np.ndarray, k: int) -> np.float32:
    """The k-th largest of float32 ``values``."""
    return np.partition(values, values.shape[0] - k)[values.shape[0] - k]


def top_k_essential(docs: np.ndarray, weights: np.ndarray, terms: Sequence[tuple[int, int, float]],
                    k: int, size: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``k`` best rows and float32 scores of the query whose terms, in query order, own
    ``docs[start:end]`` (rows, ascending) and ``weights[start:end]`` (float32 scores, positive)
    with ``upper`` their largest score, given as ``(start, end, upper)``; ``None`` where the
    bounds prune too little to beat summing every posting."""
    if not 2 <= len(terms) <= 64:   # the margins hold for sums of up to 2**10 terms
        return None
    total = sum(end - start for start, end, _ in terms)
    best_first = sorted(range(len(terms)), key=lambda i: -terms[i][2])
    floor, spent = 0.0, 0   # floor: a float32 score that at least k documents reach
    for j, i in enumerate(best_first[:-1]):
        start, end, _ = terms[i]
        spent += end - start
        if spent * 4 > total:
            return None
        if end - start >= k:   # the term's k-th best score: k documents score at least that
            floor = max(floor, float(_kth(weights[start:end], k)))
        remainder = 0.0
        for r in sorted(best_first[j + 1:]):   # the most a document holding only these can reach
            remainder += terms[r][2]
        if np.float32(remainder * (1.0 + _SLACK)) < floor:
            break
    else:
        return None
    essential, others = best_first[:j + 1], best_first[j + 1:]
    if len(essential) == 1:
        start, end, _ = terms[essential[0]]
        rows, low = docs[start:end], weights[start:end].astype(np.float64)
    else:
        spans = [terms[i][:2] for i in sorted(essential)]
        partial = np.bincount(np.concatenate([docs[s:e] for s, e in spans]),
                              weights=np.concatenate([weights[s:e] for s, e in spans]), minlength=size)
        rows = np.flatnonzero(partial > 0.0)   # a boolean scan: far quicker than nonzero on doubles
        low = partial[rows]
    # The other terms, best first: a row whose partial sum plus the others' largest scores stays
    # below what k rows already reach is dropped before the next term is looked up.
    for n, i in enumerate(others):
        if rows.shape[0] * _LOOKUP > total:
            return None
        reached = _kth((low * (1.0 - _SLACK)).astype(np.float32), k)
        rest = sum(terms[r][2] for r in others[n:])
        keep = ((low + rest) * (1.0 + _SLACK)).astype(np.float32) >= reached
        rows, low = rows[keep], low[keep]
        start, end, _ = terms[i]
        low += _at(docs[start:end], weights[start:end], rows)
    reached = _kth((low * (1.0 - _SLACK)).astype(np.float32), k)
    rows = rows[(low * (1.0 + _SLACK)).astype(np.float32) >= reached]
    sums = np.zeros(rows.shape[0])
    for start, end, _ in terms:   # query order, in double, as the full sum (a miss adds 0)
        sums += _at(docs[start:end], weights[start:end], rows)
    scores = sums.astype(np.float32)
    order = np.lexsort((rows, -scores))[:k]
    return rows[order].astype(np.int64), scores[order]
