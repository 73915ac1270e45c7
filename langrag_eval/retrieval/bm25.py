"""BM25 over a compact inverted index, scoring as Lucene 8+ ``BM25Similarity`` (OpenSearch 2.x/3.x).

``score(q, d) = sum over query terms t of  idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))``
with ``k1 = 1.2``, ``b = 0.75``, ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, ``dl`` the document
length after Lucene's one-byte encoding, ``avgdl = sumTotalTermFreq / docCount`` and ``N`` the number
of documents with at least one token. The arithmetic follows Lucene's own single-precision steps
(norm cache, per-term score) and sums terms in double precision as Lucene's disjunction does, so
scores agree to the last float bit in practice and ties fall the same way (lower document first).
A query term repeated ``c`` times counts with boost ``c``, as Lucene's rewrite of duplicate clauses.

The postings (:class:`Postings`) hold, per term, the rows that contain it (int32) and the term's
frequency in each (the smallest unsigned type that fits), nothing else: a few bytes per distinct
(term, document) pair. They are built a block of documents at a time with one sort of
``term * block + document`` keys, and blocks or index calls are merged by a linear scatter. The
statistics that change when documents come and go (document count, average length, each term's
document frequency) are taken at :meth:`BM25Index.from_postings` from the live rows only, so an
index after additions and removals scores exactly as one built afresh from the remaining documents.
Those statistics fixed, a term's score in a document does not depend on the query, so
:meth:`BM25Index.from_postings` computes each posting's score once (float32, Lucene's steps) and a
query sums the slices of its terms (a term the query repeats is scored afresh with its boost).
:meth:`BM25Index.search` first tries the postings of the query's rare terms only (see
:mod:`.maxscore`), with the same rows and scores.

>>> index = BM25Index.build([["a", "b"], ["b", "b", "c"]])
>>> rows, scores = index.search(["b", "c"], k=2)
>>> rows.tolist(), [round(float(s), 4) for s in scores]
([1, 0], [0.3991, 0.0903])
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import NamedTuple

import numpy as np

from .analysis import LENGTH_TABLE, encode_lengths
from .maxscore import kth_bound, top_k_essential

__all__ = ["K1", "B", "BM25Index", "Postings", "Segment", "Vocabulary", "invert", "top_k"]

K1 = np.float32(1.2)
B = np.float32(0.75)
_SAMPLE = 4096  # about the most postings of a term its bound on the k-th best score reads
_BLOCK = 4096  # documents inverted at once: the block's token strings and sort keys stay tens of MB


def _tf_dtype(largest: int) -> np.dtype:
    return np.dtype(np.uint8 if largest <= 0xFF else np.uint16 if largest <= 0xFFFF else np.uint32)


class Segment(NamedTuple):
    """Postings of some rows in sparse form, sorted by term, then row: the term ids present
    (ascending), how many postings each has, and the postings' rows and term frequencies. Its size
    follows its postings, not the vocabulary, however many small index calls make segments."""

    present: np.ndarray   # int64
    per_term: np.ndarray  # int64
    docs: np.ndarray      # int32 rows
    tfs: np.ndarray       # uint8, uint16 or uint32

    def kept(self, keep: np.ndarray) -> Segment:
        """Without the rows where the mask ``keep`` (over rows) is False."""
        mask = keep[self.docs]
        if mask.all():
            return self
        seen = np.concatenate(([0], np.cumsum(mask, dtype=np.int64)))
        ends = np.cumsum(self.per_term)
        per_term = seen[ends] - seen[ends - self.per_term]
        some = per_term > 0
        return Segment(self.present[some], per_term[some], self.docs[mask], self.tfs[mask])


def _block_run(term_ids: np.ndarray, lengths: np.ndarray, first_row: int, terms: int) -> Segment:
    """The segment of consecutive documents given by their term ids (``lengths[i]`` for row
    ``first_row + i``)."""
    n_docs = int(lengths.shape[0])
    # One sort orders by term, then document; equal keys are one (term, document) pair.
    # Four-byte keys where they fit sort twice as fast as eight-byte ones.
    kind = np.uint32 if terms * n_docs <= 0xFFFFFFFF else np.int64
    keys = term_ids.astype(kind) * kind(n_docs)
    keys += np.repeat(np.arange(n_docs, dtype=kind), lengths)
    keys.sort()
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    tfs = np.diff(np.append(starts, keys.shape[0]))
    term_of, local = np.divmod(keys[starts], kind(n_docs))
    firsts = np.flatnonzero(np.concatenate(([True], term_of[1:] != term_of[:-1])))
    per_term = np.diff(np.append(firsts, term_of.shape[0]))
    return Segment(term_of[firsts].astype(np.int64), per_term,
                   local.astype(np.int32) + np.int32(first_row), tfs.astype(_tf_dtype(int(tfs.max()))))


def _scatter(runs: Sequence[Segment], terms: int) -> Postings:
    """One CSR over ``terms`` term ids from segments whose rows ascend from one to the next."""
    indptr = np.zeros(terms + 1, np.int64)
    for present, per_term, _, _ in runs:
        indptr[present + 1] += per_term   # term ids are distinct within a segment
    np.cumsum(indptr, out=indptr)
    width = max((r[3].dtype for r in runs), key=lambda d: d.itemsize, default=np.dtype(np.uint8))
    docs, tfs = np.empty(int(indptr[-1]), np.int32), np.empty(int(indptr[-1]), width)
    cursor = indptr[:-1].copy()   # where each term's next posting goes
    for present, per_term, rows, freqs in runs:
        # A posting's place: its term's cursor plus its rank among the term's postings in this run.
        shift = cursor[present] - (np.cumsum(per_term) - per_term)
        dest = np.repeat(shift, per_term) + np.arange(rows.shape[0], dtype=np.int64)
        docs[dest] = rows
        tfs[dest] = freqs
        cursor[present] += per_term
    return Postings(indptr, docs, tfs)


class _Buffer:
    """An append-only numpy array that doubles when full."""

    def __init__(self, dtype: np.dtype | type) -> None:
        self.data = np.empty(1 << 16, dtype)
        self.size = 0

    def append(self, values: np.ndarray) -> tuple[int, int]:
        end = self.size + values.shape[0]
        dtype = np.promote_types(self.data.dtype, values.dtype)
        if end > self.data.shape[0] or dtype != self.data.dtype:
            grown = np.empty(max(end, 2 * self.data.shape[0]), dtype)
            grown[:self.size] = self.data[:self.size]
            self.data = grown
        self.data[self.size:end] = values
        start, self.size = self.size, end
        return start, end


@dataclass(frozen=True)
class Postings:
    """Term-major postings in CSR form: for term id ``t < terms``, the rows
    ``docs[indptr[t]:indptr[t + 1]]`` (ascending) hold it, ``tfs[...]`` times each."""

    indptr: np.ndarray  # int64, one more than the term ids it covers
    docs: np.ndarray    # int32 rows
    tfs: np.ndarray     # uint8, uint16 or uint32

    @property
    def terms(self) -> int:
        return int(self.indptr.shape[0]) - 1

    @classmethod
    def empty(cls, terms: int = 0) -> Postings:
        return cls(np.zeros(terms + 1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.uint8))

    @classmethod
    def from_tokens(cls, term_ids: np.ndarray, lengths: np.ndarray, first_row: int, terms: int) -> Postings:
        """From the term ids of consecutive documents (``lengths[i]`` ids for row ``first_row + i``)."""
        if term_ids.size == 0:
            return cls.empty(terms)
        return _scatter([_block_run(term_ids, lengths, first_row, terms)], terms)

    @classmethod
    def merge(cls, parts: Sequence[Segment], terms: int, keep: np.ndarray | None = None) -> Postings:
        """One CSR over ``terms`` term ids from segments whose rows ascend from one to the next,
        without the rows where ``keep`` (a mask over rows) is False."""
        if keep is not None:
            parts = [part.kept(keep) for part in parts]
        if len(parts) == 1:   # already in term order: only the offsets are new
            present, per_term, docs, tfs = parts[0]
            indptr = np.zeros(terms + 1, np.int64)
            indptr[present + 1] = per_term
            return cls(np.cumsum(indptr, out=indptr), docs, tfs)
        return _scatter(parts, terms)

    def segment(self) -> Segment:
        """The same postings in sparse form (sharing the rows and frequencies)."""
        per_term = np.diff(self.indptr)
        present = np.flatnonzero(per_term)
        return Segment(present, per_term[present], self.docs, self.tfs)


class Vocabulary(dict):
    """Term to id, ids in order of first appearance: ``vocab[term]`` gives a new term the next id
    (``get`` and ``in`` never add one)."""

    def __missing__(self, term: str) -> int:
        self[term] = n = len(self)
        return n


def invert(token_lists: Iterable[Sequence[str]], vocab: Vocabulary,
           first_row: int = 0) -> tuple[Segment, np.ndarray]:
    """Postings and token counts (int64) of documents given as token lists, rows ``first_row`` on;
    new terms are added to ``vocab``.

    Each block of documents is sorted into a run of its own, and the runs are scattered into the
    postings at the end. The runs are appended to a few growing arrays rather than kept as one
    small array each: once merged, a few large allocations go back to the system, where the
    memory of many small ones would stay with the allocator (at 300,000 documents, 160 MiB
    resident after the build instead of 280)."""
    lookup = vocab.__getitem__
    present, per_term, rows, freqs = (_Buffer(t) for t in (np.int64, np.int64, np.int32, np.uint8))
    lengths = array("q")
    spans = []
    it = iter(token_lists)
    while True:
        ids, counts = array("q"), array("q")   # machine integers: no int object outlives its lookup
        # Each document's terms are looked up while its token strings are fresh in the cache.
        for tokens in islice(it, _BLOCK):
            counts.append(len(tokens))
            ids.extend(map(lookup, tokens))
        if not counts:
            break
        if ids:
            run = _block_run(np.array(ids, dtype=np.int64), np.array(counts, dtype=np.int64),
                             first_row + len(lengths), len(vocab))
            spans.append((present.append(run[0]), per_term.append(run[1])[0], rows.append(run[2]),
                          freqs.append(run[3])[0]))
        lengths += counts
    runs = [Segment(present.data[a:b], per_term.data[p:p + b - a], rows.data[c:d], freqs.data[f:f + d - c])
            for (a, b), p, (c, d), f in spans]
    if len(runs) == 1:   # one block is a segment already (copied out of the larger buffers)
        return Segment(*(a.copy() for a in runs[0])), np.array(lengths, dtype=np.int64)
    return _scatter(runs, len(vocab)).segment(), np.array(lengths, dtype=np.int64)


def _idf(doc_count: int, doc_freqs: np.ndarray) -> np.ndarray:
    """Lucene's idf per document frequency (float32), with ``math.log`` as Lucene's ``Math.log``:
    one call per distinct frequency, so numpy's own logarithm never moves the last bit."""
    distinct, where = np.unique(doc_freqs, return_inverse=True)
    logs = [math.log(1.0 + (doc_count - n + 0.5) / (n + 0.5)) for n in distinct.tolist()]
    return np.array(logs, dtype=np.float64).astype(np.float32)[where.reshape(-1)]


def _posting_scores(postings: Postings, inverse: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """Each posting's score for its term queried once (float32): Lucene's
    ``weight - weight / (1f + freq * normInverse)`` with weight the term's idf, in float, a block
    of terms at a time so the temporaries stay a few MB."""
    out = np.empty(postings.docs.shape[0], np.float32)
    indptr, per_term = postings.indptr, np.diff(postings.indptr)
    cuts = np.unique(np.searchsorted(indptr, np.arange(0, out.shape[0], 1 << 20), side="right") - 1)
    for first, last in zip(cuts.tolist(), [*cuts[1:].tolist(), postings.terms]):
        start, end = int(indptr[first]), int(indptr[last])
        weight = np.repeat(idf[first:last], per_term[first:last])
        part = out[start:end]
        np.take(inverse, postings.docs[start:end], out=part)
        part *= postings.tfs[start:end]
        part += np.float32(1.0)
        np.divide(weight, part, out=part)
        np.subtract(weight, part, out=part)
    return out


@dataclass
class BM25Index:
    """Postings of the live rows, with the statistics of those rows, per row Lucene's
    ``normInverse`` (the norm cache entry of its encoded length), and per posting its score for a
    query holding its term once."""

    vocab: dict[str, int]
    postings: Postings
    inverse: np.ndarray  # float32 per row
    doc_count: int
    norm_cache: np.ndarray
    weights: np.ndarray  # float32 per posting
    maxima: np.ndarray   # float32 per term: its largest posting score (0 without postings)
    # (term id, k) -> a score k of the term's postings reach (see _kth_best), filled as queries ask
    _kth: dict[tuple[int, int], float] = field(default_factory=dict, repr=False, compare=False)

    @property
    def size(self) -> int:
        return int(self.inverse.shape[0])

    @classmethod
    def build(cls, docs_tokens: Iterable[Sequence[str]]) -> BM25Index:
        """From token lists (one per document), for small indexes and tests."""
        vocab = Vocabulary()
        segment, lengths = invert(docs_tokens, vocab)
        return cls.from_postings(vocab, Postings.merge([segment], len(vocab)), lengths)

    @classmethod
    def from_postings(cls, vocab: dict[str, int], postings: Postings, lengths: np.ndarray,
                      live: np.ndarray | None = None) -> BM25Index:
        """From postings holding only the rows where ``live`` is True (every row when None);
        ``lengths`` gives every row's token count."""
        lengths = np.asarray(lengths, dtype=np.int64)
        counted = lengths if live is None else lengths[live]
        doc_count = int(np.count_nonzero(counted))  # Lucene's docCount: documents holding a term
        sum_ttf = int(counted.sum())
        avgdl = np.float32(sum_ttf / doc_count) if doc_count else np.float32(1.0)
        # Lucene: cache[i] = 1f / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl)), all in float.
        cache = np.float32(1.0) / (K1 * ((np.float32(1.0) - B) + B * LENGTH_TABLE / avgdl))
        cache = cache.astype(np.float32)
        inverse = cache[encode_lengths(lengths)]
        per_term = np.diff(postings.indptr)
        weights = _posting_scores(postings, inverse, _idf(doc_count, per_term))
        maxima = np.zeros(postings.terms, np.float32)
        held = per_term > 0
        if held.any():
            maxima[held] = np.maximum.reduceat(weights, postings.indptr[:-1][held])
        return cls(vocab=vocab, postings=postings, inverse=inverse, doc_count=doc_count,
                   norm_cache=cache, weights=weights, maxima=maxima)

    def idf(self, doc_freq: int) -> np.float32:
        n = self.doc_count
        return np.float32(math.log(1.0 + (n - doc_freq + 0.5) / (doc_freq + 0.5)))

    def _terms(self, tokens: Sequence[str]) -> list[tuple[int, int]]:
        """``(term id, count)`` of each distinct query term with postings, in query order."""
        p = self.postings
        out = []
        for term, count in Counter(tokens).items():
            term_id = self.vocab.get(term)
            if term_id is not None and term_id < p.terms and p.indptr[term_id] < p.indptr[term_id + 1]:
                out.append((term_id, count))
        return out

    def _part(self, term_id: int, count: int) -> np.ndarray:
        """The term's score in each of its postings, for a query holding it ``count`` times."""
        p = self.postings
        start, end = int(p.indptr[term_id]), int(p.indptr[term_id + 1])
        if count == 1:
            return self.weights[start:end]
        # boost `count`: Lucene's steps with weight count * idf, in float, in place
        weight = np.float32(count) * self.idf(end - start)
        part = np.take(self.inverse, p.docs[start:end])
        part *= p.tfs[start:end]
        part += np.float32(1.0)
        np.divide(weight, part, out=part)
        np.subtract(weight, part, out=part)
        return part

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Score of every row (float64 array, 0 where no query term occurs)."""
        return self._sums(self._terms(tokens))

    def _sums(self, terms: list[tuple[int, int]]) -> np.ndarray:
        """:meth:`scores` of a query given as its ``(term id, count)`` pairs (see :meth:`_terms`)."""
        if not terms:
            return np.zeros(self.size, dtype=np.float64)
        p = self.postings
        rows = [p.docs[p.indptr[t]:p.indptr[t + 1]] for t, _ in terms]
        # One pass sums every term's score per document in double (bincount widens the float32
        # weights exactly), in query-term order, as Lucene's disjunction does.
        return np.bincount(np.concatenate(rows), weights=np.concatenate([self._part(t, c) for t, c in terms]),
                           minlength=self.size)

    def search(self, tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` rows and their float32 scores; ties go to the lower row."""
        terms = self._terms(tokens)
        if all(c == 1 for _, c in terms):
            at = self.postings.indptr
            found = top_k_essential(self.postings.docs, self.weights,
                                    [(int(at[t]), int(at[t + 1]), float(self.maxima[t])) for t, _ in terms],
                                    k, self.size, lambda i: self._kth_best(terms[i][0], k))
            if found is not None:
                return found
        return top_k(self._sums(terms), k)

    def _kth_best(self, term_id: int, k: int) -> float:
        """A score that at least ``k`` of the term's postings reach (the term has ``k`` or more),
        from evenly spaced postings where the term has many (see :func:`.maxscore.kth_bound`).
        Kept: common terms recur from query to query."""
        key = (term_id, k)
        found = self._kth.get(key)
        if found is None:
            start, end = int(self.postings.indptr[term_id]), int(self.postings.indptr[term_id + 1])
            part = self.weights[start:end:max(1, (end - start) // max(_SAMPLE, k))]
            found = self._kth[key] = float(kth_bound(part, k))
        return found


def top_k(acc: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best rows of non-negative double sums ``acc`` (0: no match) as Lucene ranks them:
    by the sum cast to float32, ties to the lower row; with those float32 scores."""
    hits = _candidates(acc, k)
    if hits.size == 0:
        return hits.astype(np.int64), np.zeros(0, dtype=np.float32)
    scores = acc[hits].astype(np.float32)  # Lucene returns the double sum cast to float
    if hits.size > k:
        # Keep everything tied with the k-th score so the tie-break below sees all of them.
        kth = np.partition(scores, hits.size - k)[hits.size - k]
        keep = scores >= kth
        hits, scores = hits[keep], scores[keep]
    order = np.lexsort((hits, -scores))[:k]
    return hits[order], scores[order]


def _candidates(acc: np.ndarray, k: int) -> np.ndarray:
    """Rows that may be among the ``k`` best of ``acc`` (every row whose float32 score could equal
    or beat the k-th best), found without sorting every matched row when a bound prunes them."""
    width = acc.shape[0] // (16 * k)
    if width >= 2:
        # The k largest of the block maxima are k rows scoring at least `bound`, so the k-th best
        # row does too; comparing against the float32 just below float32(bound) keeps every row
        # that float32 rounding could tie with it.
        maxima = np.maximum.reduceat(acc, np.arange(0, acc.shape[0], width))
        bound = np.partition(maxima, maxima.shape[0] - k)[maxima.shape[0] - k]
        if bound > 0:
            return np.flatnonzero(acc > np.float64(np.nextafter(np.float32(bound), np.float32(0.0))))
    return np.flatnonzero(acc)  # every BM25 term score is positive: non-zero means matched
