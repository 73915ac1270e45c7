"""The embedded backend: BM25, exact KNN and hybrid search in-process, persisted to a folder.

BM25 ranks and scores as OpenSearch 3.x (see :mod:`.bm25`, :mod:`.analysis`), KNN uses OpenSearch's
score formulas (see :mod:`.dense`), and hybrid search fuses the ``depth`` best hits of each as
:class:`~.base.HybridSettings` says. ``rrf`` and ``server_rrf`` compute the same thing here: RRF over
the two sub-results, which is what OpenSearch's score-ranker pipeline returns for its hybrid query;
``normalization`` reproduces the normalization-processor pipeline (min_max or l2, weighted mean).
RRF applies ``HybridSettings.weights`` as recent score-ranker versions do; keep the default equal
weights to compare with a server whose score-ranker has no weights.

Indexing the same id again replaces the chunk (as OpenSearch's index operation does). With a
``path`` the index is saved after every ``index`` call (only live chunks, so replaced ones are
dropped; see :mod:`.embedded_folder`) and loaded back when the backend is opened on the same
folder; batch your chunks. The backend keeps each chunk's id, text and metadata (in three columns,
not the chunk objects) without copying the text or metadata; a chunk's ``metadata`` dict should
not be changed after the chunk is indexed.

>>> import numpy as np
>>> b = EmbeddedBackend()
>>> vecs = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
>>> b.index([Chunk(id="a", text="red apples"), Chunk(id="b", text="green pears")], vecs).indexed
2
>>> [d.id for d in b.search(text="pears", vector=[0.0, 1.0], mode="hybrid", k=2)]
['b', 'a']
"""

from __future__ import annotations

import asyncio
import json
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import RetrievalError
from ..types import Document
from .analysis import analyze
from .base import Chunk, HybridSettings, IngestReport, Mode
from .bm25 import BM25Index, Postings, Segment, Vocabulary, invert
from .dense import DenseIndex, KnnEngine, Space
from .embedded_folder import SavedIndex, damaged_index_errors, holds_index, load_index, save_index
from .fusion import combine_normalized, rrf

__all__ = ["EmbeddedBackend"]

MAX_K = 10_000  # OpenSearch's limit for knn k; applied to every mode for the same contract
_SLICE = 4096   # vector rows checked or copied at once: temporaries stay a few MB


class EmbeddedBackend:
    """In-process search backend; in memory when ``path`` is None, else persisted to that folder."""

    name = "embedded"

    def __init__(self, path: str | Path | None = None, *, space: Space | None = None,
                 knn_engine: KnnEngine = "exact") -> None:
        self.path = Path(path) if path is not None else None
        self.knn_engine: KnnEngine = knn_engine
        self.space: Space = space or "cosinesimil"
        self.dimension: int | None = None
        self._lock = threading.RLock()
        # Each chunk's fields by row, in indexing order; a replaced or removed chunk's row stays (not
        # live), so rows never move while a search that started before the change reads them. Kept
        # as columns: making a search's documents reads three lists, not a thousand chunk objects.
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._metadata: list[dict[str, Any]] = []
        self._live = bytearray()   # 1 where the row's chunk is current
        self._lengths = array("q")  # each row's token count
        self._row_of: dict[str, int] = {}
        self._vocab = Vocabulary()
        # Postings, one segment per index call; merged into one (live rows only) when compiled.
        self._segments: list[Segment] = []
        # The one copy of the vectors, keyed by row; rows indexed without a vector have none.
        self._dense: DenseIndex | None = None
        self._compiled: BM25Index | None = None
        if self.path is not None and holds_index(self.path):
            with damaged_index_errors(self.path):   # loading the vectors reads the files too
                self._restore(load_index(self.path, space))

    # ---- ingestion -------------------------------------------------------------------------------
    async def aindex(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> IngestReport:
        """Add or replace ``chunks`` (with one vector row each when given); bad chunks are reported.
        The vectors are copied in (see :mod:`.dense`); the caller's matrix is not kept."""
        return await asyncio.to_thread(self._index, list(chunks), vectors)

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> IngestReport:
        """Sync form of :meth:`aindex`, with no event loop."""
        return self._index(list(chunks), vectors)

    def _check_vectors(self, chunks: list[Chunk], vectors: Any) -> np.ndarray | None:
        if vectors is None:
            return None
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(chunks):
            raise RetrievalError(f"vectors have shape {matrix.shape} for {len(chunks)} chunks; "
                                 f"give one row per chunk, shape ({len(chunks)}, dimension)")
        if self.dimension is not None and matrix.shape[1] != self.dimension:
            raise RetrievalError(f"vectors have {matrix.shape[1]} dimensions but this index holds "
                                 f"{self.dimension}-dimensional vectors; use the same embedding model "
                                 f"or a new index")
        return matrix

    def _refusal(self, chunk: Chunk, finite: bool, nonzero: bool) -> str | None:
        if not chunk.id:
            return "chunk has an empty id"
        if not chunk.text or not chunk.text.strip():
            return "chunk has no text"
        if not finite:
            return "vector holds NaN or infinite values"
        if self.space == "cosinesimil" and not nonzero:
            return "zero vector has no direction; cosinesimil cannot score it"
        if self.path is not None:
            try:
                json.dumps(chunk.metadata)
            except (TypeError, ValueError) as exc:
                return f"metadata cannot be saved as JSON: {exc}"
        return None

    def _index(self, chunks: list[Chunk], vectors: Any) -> IngestReport:
        with self._lock:
            matrix = self._check_vectors(chunks, vectors)
            failed: list[tuple[str, str]] = []
            accepted: dict[str, tuple[Chunk, int]] = {}
            finite, nonzero = np.ones(len(chunks), dtype=bool), np.ones(len(chunks), dtype=bool)
            for at in range(0, 0 if matrix is None else len(matrix), _SLICE):
                # a slice at a time: no full-size boolean copies of the matrix
                part = matrix[at:at + _SLICE]  # type: ignore[index]
                finite[at:at + _SLICE] = np.isfinite(part).all(axis=1)
                nonzero[at:at + _SLICE] = part.any(axis=1)
            for i, chunk in enumerate(chunks):
                reason = self._refusal(chunk, bool(finite[i]), bool(nonzero[i]))
                if reason is not None:
                    failed.append((chunk.id, reason))
                else:
                    accepted.pop(chunk.id, None)  # a repeated id: the last one wins, as in a bulk request
                    accepted[chunk.id] = (chunk, i)
            if accepted:
                first = len(self._ids)
                self._append([c for c, _ in accepted.values()])
                if matrix is not None:
                    self._add_vectors(matrix, np.fromiter((i for _, i in accepted.values()), np.int64,
                                                          count=len(accepted)),
                                      np.arange(first, first + len(accepted), dtype=np.int64))
                if matrix is not None:
                    self.dimension = int(matrix.shape[1])
                self._compiled = None
                if self.path is not None:
                    self._save()
            return IngestReport(indexed=len(accepted), failed=failed)

    # ---- removal: what re-indexing a changed corpus needs ------------------------------------------
    def ids(self) -> list[str]:
        """The ids of every chunk the index holds now."""
        with self._lock:
            return list(self._row_of)

    async def aids(self) -> list[str]:
        return self.ids()

    def delete(self, ids: Sequence[str]) -> int:
        """Remove the chunks ``ids`` (unknown ids are ignored); returns how many were removed."""
        with self._lock:
            rows = [self._row_of.pop(i) for i in dict.fromkeys(ids) if i in self._row_of]
            for row in rows:
                self._live[row] = 0
            if rows:
                if self._dense is not None:
                    self._dense.remove(np.asarray(rows, dtype=np.int64))
                self._compiled = None
                if self.path is not None:
                    self._save()
            return len(rows)

    async def adelete(self, ids: Sequence[str]) -> int:
        return await asyncio.to_thread(self.delete, list(ids))

    def _add_vectors(self, matrix: np.ndarray, picks: np.ndarray, keys: np.ndarray,
                     stored: bool = False) -> None:
        """Copy rows ``picks`` of ``matrix`` into the dense index under ``keys`` (backend rows);
        ``stored``: the rows were saved from a dense index (see :meth:`DenseIndex.add`)."""
        if self._dense is None:
            self._dense = DenseIndex(dimension=matrix.shape[1], space=self.space, engine=self.knn_engine)
        whole = len(picks) == len(matrix) and bool((picks == np.arange(len(matrix))).all())
        self._dense.reserve(len(picks))
        for at in range(0, len(picks), _SLICE):   # a subset is gathered a slice at a time
            rows = matrix[at:at + _SLICE] if whole else matrix[picks[at:at + _SLICE]]
            self._dense.add(rows, keys[at:at + _SLICE], stored=stored)

    def _append(self, chunks: list[Chunk]) -> None:
        first = len(self._ids)
        replaced = []
        for row, chunk in enumerate(chunks, start=first):
            old = self._row_of.get(chunk.id)
            if old is not None:
                self._live[old] = 0
                replaced.append(old)
            self._row_of[chunk.id] = row
        self._ids.extend(c.id for c in chunks)
        self._texts.extend(c.text for c in chunks)
        self._metadata.extend(c.metadata for c in chunks)
        self._live.extend(b"\x01" * len(chunks))
        segment, lengths = invert((analyze(c.text) for c in chunks), self._vocab, first)
        self._segments.append(segment)
        self._lengths.frombytes(lengths.tobytes())
        if replaced and self._dense is not None:
            self._dense.remove(np.asarray(replaced, dtype=np.int64))

    # ---- compiled view ---------------------------------------------------------------------------
    def _compile(self) -> BM25Index:
        """The BM25 index of the live rows, rebuilt after a change (the dense index is kept current).
        The segments are merged into one without the rows no longer live, and kept that way."""
        with self._lock:
            if self._compiled is not None:
                return self._compiled
            live = np.array(self._live, dtype=bool)   # copies: the bytearray stays resizable
            postings = Postings.merge(self._segments, len(self._vocab), None if live.all() else live)
            self._segments = [postings.segment()]
            self._compiled = BM25Index.from_postings(self._vocab, postings,
                                                     np.array(self._lengths, dtype=np.int64), live)
            return self._compiled

    # ---- search ----------------------------------------------------------------------------------
    # The searches run in the caller's thread: sync callers get no event loop, async callers get
    # the answer without a thread hop (a search is a few milliseconds of numpy).
    def count(self) -> int:
        return len(self._row_of)  # one entry per live id

    async def acount(self) -> int:
        return self.count()

    async def asearch(self, *, text: str | None = None, vector: Sequence[float] | None = None,
                      mode: Mode = "bm25", k: int = 10, hybrid: HybridSettings | None = None) -> list[Document]:
        """The ``k`` best chunks for ``text`` (bm25), ``vector`` (knn) or both (hybrid)."""
        return self.search(text=text, vector=vector, mode=mode, k=k, hybrid=hybrid)

    def search(self, *, text: str | None = None, vector: Sequence[float] | None = None,
               mode: Mode = "bm25", k: int = 10, hybrid: HybridSettings | None = None) -> list[Document]:
        """Sync form of :meth:`asearch`."""
        return self.search_many(texts=None if text is None else [text],
                                vectors=None if vector is None else [vector], mode=mode, k=k,
                                hybrid=hybrid)[0]

    async def asearch_many(self, *, texts: Sequence[str] | None = None,
                           vectors: Sequence[Sequence[float]] | np.ndarray | None = None, mode: Mode = "bm25",
                           k: int = 10, hybrid: HybridSettings | None = None) -> list[list[Document]]:
        """:meth:`asearch` for many queries at once (``texts[i]`` with ``vectors[i]``); the KNN part
        scores the whole batch together, one pass over the vectors (see :mod:`.dense`)."""
        return self.search_many(texts=texts, vectors=vectors, mode=mode, k=k, hybrid=hybrid)

    def search_many(self, *, texts: Sequence[str] | None = None,
                    vectors: Sequence[Sequence[float]] | np.ndarray | None = None, mode: Mode = "bm25",
                    k: int = 10, hybrid: HybridSettings | None = None) -> list[list[Document]]:
        """Sync form of :meth:`asearch_many`."""
        n = self._check_search(texts, vectors, mode, k)
        bm25 = self._compile()
        if mode == "bm25":
            return [self._documents(*bm25.search(analyze(t), k)) for t in texts]  # type: ignore[union-attr]
        with self._lock:   # the dense index changes in place when chunks are indexed
            if self._row_of and (self._dense is None or self._dense.count == 0):
                raise RetrievalError("this index holds no vectors: index chunks with vectors to use "
                                     f"{mode} search, or search with mode='bm25'")
            depth = k if mode == "knn" else (hybrid or HybridSettings()).depth
            semantic = self._knn_many(vectors, n, depth)
        if mode == "knn":
            return [self._documents(*hits) for hits in semantic]
        settings = hybrid or HybridSettings()
        return [self._documents(*self._fuse(bm25.search(analyze(t), settings.depth), hits, settings, k))
                for t, hits in zip(texts, semantic)]  # type: ignore[arg-type]

    @staticmethod
    def _check_search(texts: Sequence[str] | None, vectors: Any, mode: str, k: int) -> int:
        """The number of queries, after the argument checks every search shares."""
        if not 1 <= k <= MAX_K:
            raise RetrievalError(f"k must be between 1 and {MAX_K}, got {k}")
        if mode not in ("bm25", "knn", "hybrid"):
            raise RetrievalError(f"search mode {mode!r} is unknown; use bm25, knn or hybrid")
        if mode in ("bm25", "hybrid") and (texts is None or any(t is None or not t.strip() for t in texts)):
            raise RetrievalError(f"empty query: {mode} search needs query text")
        if mode in ("knn", "hybrid") and (vectors is None or any(v is None for v in vectors)):
            raise RetrievalError(f"{mode} search needs a query vector; embed the query first "
                                 f"(Retriever does this with its embedder)")
        n = len(texts) if mode == "bm25" else len(vectors)  # type: ignore[arg-type]
        if mode == "hybrid" and len(texts) != n:  # type: ignore[arg-type]
            raise RetrievalError(f"hybrid search got {len(texts)} texts and {n} vectors; "  # type: ignore[arg-type]
                                 f"give one vector per text")
        return n

    def _knn_many(self, vectors: Any, n: int, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        if self._dense is None:  # an empty index: nothing to find, and no dimension to check against
            return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))] * n
        try:
            matrix = np.asarray(vectors, dtype=np.float32)
        except ValueError:   # ragged rows
            raise RetrievalError("query vectors differ in length; embed every query with one model") from None
        return self._dense.search_many(matrix, k)

    def _fuse(self, lexical: tuple[np.ndarray, np.ndarray], semantic: tuple[np.ndarray, np.ndarray],
              settings: HybridSettings, k: int) -> tuple[np.ndarray, np.ndarray]:
        ids = [[self._ids[r] for r in rows] for rows, _ in (lexical, semantic)]
        if settings.fusion in ("rrf", "server_rrf"):
            fused = rrf(ids, k=settings.rank_constant, weights=settings.weights)
        else:
            fused = combine_normalized(
                [list(zip(ids[i], scores.tolist())) for i, (_, scores) in enumerate((lexical, semantic))],
                method=settings.normalization, weights=settings.weights)
        top = fused[:k]
        return (np.asarray([self._row_of[d] for d, _ in top], dtype=np.int64),
                np.asarray([s for _, s in top], dtype=np.float64))

    def _documents(self, rows: np.ndarray, scores: np.ndarray) -> list[Document]:
        # The model's own validator on a dict: the same Document as Document(...), without the
        # keyword-argument wrapper (a third of the cost of a thousand documents); validation copies
        # the metadata, so each document holds its own dict.
        make = Document.__pydantic_validator__.validate_python
        ids, texts, metadata = self._ids, self._texts, self._metadata
        return [make({"id": ids[r], "text": texts[r], "score": s, "metadata": metadata[r]})
                for r, s in zip(rows.tolist(), scores.tolist())]

    # ---- persistence (the folder's layout is in .embedded_folder) ---------------------------------
    def _save(self) -> None:
        """Write the live chunks to the folder (a fresh one, swapped in)."""
        assert self.path is not None
        postings = self._compile().postings   # live rows only
        save_index(self.path, ids=self._ids, texts=self._texts, metadata=self._metadata,
                   live=np.array(self._live, dtype=bool), lengths=np.array(self._lengths, dtype=np.int64),
                   postings=postings, vocabulary=self._vocab, dense=self._dense, space=self.space,
                   dimension=self.dimension)

    def _restore(self, saved: SavedIndex) -> None:
        """Take over a folder's index (on a fresh backend); its rows are all live."""
        self.space = saved.space
        self._vocab = saved.vocabulary
        self._segments = [saved.postings.segment()]
        self._lengths.frombytes(saved.lengths.tobytes())
        self._row_of = {chunk_id: i for i, chunk_id in enumerate(saved.ids)}
        self._ids, self._texts, self._metadata = saved.ids, saved.texts, saved.metadata
        self._live = bytearray(b"\x01" * len(saved.ids))
        self.dimension = saved.dimension
        picks = np.flatnonzero(saved.has_vector)
        if picks.size:
            # as saved: the unit vectors of cosinesimil normalised again could differ in the last bit
            self._add_vectors(saved.vectors, picks, picks, stored=True)
