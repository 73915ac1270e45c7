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
double sum of a few terms can lose; a bound on the k-th best score need not be that score, so
it comes from block maxima (:func:`kth_bound`), one pass where a partition would cost ten. Where
the bounds do not prune enough (few terms, large ``k``, scores alike), or the query's postings are
few enough that summing them all is quicker, the caller sums every posting instead.

>>> import numpy as np
>>> docs = np.concatenate([[3, 5, 7], np.arange(100)]).astype(np.int32)   # a rare and a common term
>>> weights = np.concatenate([[4, 5, 3], np.full(100, 0.25)]).astype(np.float32)
>>> rows, scores = top_k_essential(docs, weights, [(0, 3, 5.0), (3, 103, 0.25)], k=2, size=100)
>>> rows.tolist(), scores.tolist()
([5, 3], [5.25, 4.25])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["kth_bound", "top_k_essential"]

_SLACK = 2.0 ** -40   # relative margin on bounds mixing double sums taken in different orders
_SMALL = 0.15         # below this many postings per row, the full sum is the quicker
_FEW = 64             # rows few enough to look up in every term without narrowing them first
_LOOKUP = 16          # a row looked up in postings (or the reverse) costs as much as summing this many


def _at(held: np.ndarray, scores: np.ndarray, rows: np.ndarray, size: int) -> np.ndarray:
    """The term's score in each of ``rows`` (0 where the term's postings ``held`` lack it), both
    ascending: the shorter of the two is looked up in the longer, or where both are long the
    term's scores are spread over every row and read back."""
    if min(held.shape[0], rows.shape[0]) * _LOOKUP > held.shape[0] + rows.shape[0] + size // 8:
        spread = np.zeros(size, np.float32)
        spread[held] = scores
        return spread[rows]
    if held.shape[0] < rows.shape[0]:
        at = rows.searchsorted(held)
        np.minimum(at, rows.shape[0] - 1, out=at)
        hit = rows.take(at) == held
        out = np.zeros(rows.shape[0], np.float32)
        out[at[hit]] = scores[hit]
        return out
    at = held.searchsorted(rows)
    np.minimum(at, held.shape[0] - 1, out=at)
    out = scores.take(at)
    out *= held.take(at) == rows   # a miss scores 0 (scores are finite)
    return out


def kth_bound(values: np.ndarray, k: int) -> np.float32 | np.float64:
    """A value that at least ``k`` of ``values`` (``k`` or more of them) reach: the k-th largest of
    block maxima where there are many values (each of k blocks holds a value that large), else
    the k-th largest. One pass instead of a partition of every value, which costs ten times more.

    >>> float(kth_bound(np.arange(1000.0), 3))   # three values reach 942 (the third largest is 997)
    942.0
    >>> float(kth_bound(np.arange(100.0), 3))    # few values: the third largest itself
    97.0
    """
    n = values.shape[0]
    if n > 64 * k:
        values = np.maximum.reduceat(values, np.arange(0, n, n // (8 * k)))
        n = values.shape[0]
    return np.partition(values, n - k)[n - k]


def _reached(low: np.ndarray, k: int) -> np.float32:
    """A float32 score at least k of the rows with partial sums ``low`` reach, whatever order
    their terms are summed in (the cast is monotone, so the bound on ``low`` carries over)."""
    return np.float32(kth_bound(low, k) * (1.0 - _SLACK))


def top_k_essential(docs: np.ndarray, weights: np.ndarray, terms: Sequence[tuple[int, int, float]],
                    k: int, size: int,
                    kth: Callable[[int], float] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``k`` best rows and float32 scores of the query whose terms, in query order, own
    ``docs[start:end]`` (rows, ascending) and ``weights[start:end]`` (float32 scores, positive)
    with ``upper`` their largest score, given as ``(start, end, upper)``; ``None`` where the
    bounds prune too little to beat summing every posting. ``kth(i)``, where given, is a score
    that ``k`` of term ``i``'s postings reach (which a caller may keep between queries)."""
    if not 2 <= len(terms) <= 64:   # the margins hold for sums of up to 2**10 terms
        return None
    total = sum(end - start for start, end, _ in terms)
    if total < size * _SMALL:   # summing every posting is quicker than the bookkeeping below
        return None
    best_first = sorted(range(len(terms)), key=lambda i: -terms[i][2])
    floor, spent = 0.0, 0   # floor: a float32 score that at least k documents reach
    for j, i in enumerate(best_first[:-1]):
        start, end, _ = terms[i]
        spent += end - start
        if spent * 4 > total:
            return None
        if end - start >= k:   # a score that k of the term's documents reach
            floor = max(floor, float(kth_bound(weights[start:end], k)) if kth is None else kth(i))
        remainder = 0.0
        for r in sorted(best_first[j + 1:]):   # the most a document holding only these can reach
            remainder += terms[r][2]
        if np.float32(remainder * (1.0 + _SLACK)) < floor:
            break
    else:
        return None
    essential, others = best_first[:j + 1], best_first[j + 1:]
    # Each term's scores in `rows`, where known, so the final sum need not look them up again.
    known: dict[int, np.ndarray] = {}
    if len(essential) == 1:
        start, end, _ = terms[essential[0]]
        rows, low = docs[start:end], weights[start:end].astype(np.float64)
        known[essential[0]] = weights[start:end]
    else:
        spans = [terms[i][:2] for i in sorted(essential)]
        partial = np.bincount(np.concatenate([docs[s:e] for s, e in spans]),
                              weights=np.concatenate([weights[s:e] for s, e in spans]), minlength=size)
        # A boolean scan is far quicker than nonzero on doubles; rows in the postings' own int32,
        # or every look-up below would convert the looked-up postings to int64 first.
        rows = (partial > 0.0).nonzero()[0].astype(docs.dtype)
        low = partial[rows]
    reached = _reached(low, k)   # what k rows reach for sure
    # The other terms, best first: a row whose partial sum plus the others' largest scores stays
    # below what k rows already reach is dropped before the next term is looked up (a few rows
    # are looked up sooner than narrowed).
    for n, i in enumerate(others):
        if n == 0 or rows.shape[0] > _FEW:
            if n:
                reached = max(reached, _reached(low, k))
            rest = sum(terms[r][2] for r in others[n:])
            keep = (((low + rest) * (1.0 + _SLACK)).astype(np.float32) >= reached).nonzero()[0]
            if keep.shape[0] < rows.shape[0]:
                rows, low = rows[keep], low[keep]
                known = {t: part[keep] for t, part in known.items()}
        start, end, _ = terms[i]
        known[i] = _at(docs[start:end], weights[start:end], rows, size)
        low += known[i]
    if rows.shape[0] > _FEW:
        reached = max(reached, _reached(low, k))
        keep = ((low * (1.0 + _SLACK)).astype(np.float32) >= reached).nonzero()[0]
        rows = rows[keep]
        known = {t: part[keep] for t, part in known.items()}
    sums = np.zeros(rows.shape[0])
    for i, (start, end, _) in enumerate(terms):   # query order, in double, as the full sum (a miss adds 0)
        sums += known[i] if i in known else _at(docs[start:end], weights[start:end], rows, size)
    scores = sums.astype(np.float32)
    order = np.lexsort((rows, -scores))[:k]
    return rows[order].astype(np.int64), scores[order]
