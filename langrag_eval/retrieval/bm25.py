"""BM25 over a vectorised inverted index, scoring as Lucene 8+ ``BM25Similarity`` (OpenSearch 2.x/3.x).

``score(q, d) = sum over query terms t of  idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))``
with ``k1 = 1.2``, ``b = 0.75``, ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, ``dl`` the document
length after Lucene's one-byte encoding, ``avgdl = sumTotalTermFreq / docCount`` and ``N`` the number
of documents with at least one token. The arithmetic follows Lucene's own single-precision steps
(norm cache, per-term score) and sums terms in double precision as Lucene's disjunction does, so
scores agree to the last float bit in practice and ties fall the same way (lower document first).
A query term repeated ``c`` times counts with boost ``c``, as Lucene's rewrite of duplicate clauses.

>>> index = BM25Index.build([["a", "b"], ["b", "b", "c"]])
>>> rows, scores = index.search(["b", "c"], k=2)
>>> rows.tolist(), [round(float(s), 4) for s in scores]
([1, 0], [0.3991, 0.0903])
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .analysis import LENGTH_TABLE, encode_lengths

__all__ = ["K1", "B", "BM25Index"]

K1 = np.float32(1.2)
B = np.float32(0.75)


@dataclass
class BM25Index:
    """Postings in CSR form: for term id ``t``, ``docs[indptr[t]:indptr[t+1]]`` (ascending) and
    ``tfn``, Lucene's ``freq * normInverse`` for each posting, computed once in float."""

    vocab: dict[str, int]
    indptr: np.ndarray
    docs: np.ndarray
    tfn: np.ndarray
    norms: np.ndarray
    doc_count: int
    norm_cache: np.ndarray

    @property
    def size(self) -> int:
        return int(self.norms.shape[0])

    @classmethod
    def build(cls, docs_tokens: Sequence[Sequence[str]]) -> BM25Index:
        """From token lists (one per document), for small indexes and tests."""
        vocab: dict[str, int] = {}
        terms, tfs, counts, lengths = [], [], [], []
        for tokens in docs_tokens:
            tf = Counter(vocab.setdefault(t, len(vocab)) for t in tokens)
            ordered = sorted(tf)
            terms.extend(ordered)
            tfs.extend(tf[t] for t in ordered)
            counts.append(len(ordered))
            lengths.append(len(tokens))
        return cls.from_forward(vocab, np.asarray(terms, np.int32), np.asarray(tfs, np.int32),
                                np.asarray(counts, np.int64), np.asarray(lengths, np.int64))

    @classmethod
    def from_forward(cls, vocab: dict[str, int], terms: np.ndarray, tfs: np.ndarray,
                     counts: np.ndarray, lengths: np.ndarray) -> BM25Index:
        """From a forward index: per document ``counts[d]`` entries of (term id, tf), documents in order."""
        n_docs = int(counts.shape[0])
        doc_of_entry = np.repeat(np.arange(n_docs, dtype=np.int32), counts)
        # A stable sort by term keeps each posting list in ascending document order.
        order = np.argsort(terms, kind="stable")
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(vocab)), out=indptr[1:])
        lengths = np.asarray(lengths, dtype=np.int64)
        doc_count = int(np.count_nonzero(lengths))  # Lucene's docCount: documents holding a term
        sum_ttf = int(lengths.sum())
        avgdl = np.float32(sum_ttf / doc_count) if doc_count else np.float32(1.0)
        # Lucene: cache[i] = 1f / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl)), all in float.
        cache = np.float32(1.0) / (K1 * ((np.float32(1.0) - B) + B * LENGTH_TABLE / avgdl))
        norms = encode_lengths(lengths)
        docs = doc_of_entry[order]
        cache = cache.astype(np.float32)
        tfn = tfs[order].astype(np.float32) * cache[norms[docs]]
        return cls(vocab=vocab, indptr=indptr, docs=docs, tfn=tfn, norms=norms,
                   doc_count=doc_count, norm_cache=cache)

    def idf(self, doc_freq: int) -> np.float32:
        n = self.doc_count
        return np.float32(math.log(1.0 + (n - doc_freq + 0.5) / (doc_freq + 0.5)))

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Score of every document (float64 array, 0 where no query term occurs)."""
        docs, parts = [], []
        for term, count in Counter(tokens).items():
            term_id = self.vocab.get(term)
            if term_id is None:
                continue
            start, end = int(self.indptr[term_id]), int(self.indptr[term_id + 1])
            if start == end:
                continue
            weight = np.float32(count) * self.idf(end - start)
            # Lucene: weight - weight / (1f + freq * normInverse), in float.
            parts.append(weight - weight / (np.float32(1.0) + self.tfn[start:end]))
            docs.append(self.docs[start:end])
        if not parts:
            return np.zeros(self.size, dtype=np.float64)
        # One pass sums every term's contribution per document in double, as Lucene's disjunction.
        return np.bincount(np.concatenate(docs), weights=np.concatenate(parts).astype(np.float64),
                           minlength=self.size)

    def search(self, tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` document positions and their float32 scores; ties go to the lower position."""
        acc = self.scores(tokens)
        hits = np.flatnonzero(acc)  # every BM25 term score is positive: non-zero means matched
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
