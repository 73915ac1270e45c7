"""Dense vector search with OpenSearch's k-NN score formulas: exact (numpy) or faiss HNSW.

OpenSearch turns a distance into a score that grows with similarity; the same formulas are used
here so the embedded and OpenSearch backends return comparable scores:

- ``cosinesimil``: ``(1 + cos) / 2``
- ``l2``: ``1 / (1 + d^2)`` (squared Euclidean distance)
- ``innerproduct``: ``ip + 1`` when ``ip > 0``, else ``1 / (1 - ip)``

The index owns exactly one copy of the vectors (float32, or float16 to halve it), copied in from
the caller's rows and stored transposed, one column per vector: a row of queries times that
matrix streams it once, about 1.5x faster than matrix @ vector for 100k x 384 on two cores. For
``cosinesimil`` the copy holds unit vectors, since only directions are scored. Vectors carry integer
keys (the caller's row numbers); searches answer keys. ``search_many`` scores a batch of queries a
chunk of columns at a time into one reused buffer, one row per column (on two loaded cores that
product was steadier than queries x columns, numpy's own ``Q @ X.T``: 0.49x numpy's search against
0.64x at 10k and load 6, and as quick on idle cores), and keeps from each chunk only the columns
reaching the query's (k+1)-th largest block maximum so far: one pass over scores still in cache, no
partition of every row, no index array per score and no score matrix of the whole corpus.

``exact`` scans every vector; ``faiss_hnsw`` builds a faiss HNSW graph (``m = 16``,
``ef_construction = 128``, OpenSearch's defaults; extra ``faiss``) on first search after a change:
approximate, for large corpora, and faiss keeps its own copy of the vectors in the graph.

>>> index = DenseIndex(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32), space="cosinesimil")
>>> keys, scores = index.search(np.array([1.0, 0.0], dtype=np.float32), k=2)
>>> keys.tolist(), scores.tolist()
([0, 1], [1.0, 0.5])
>>> [(k.tolist(), s.tolist()) for k, s in index.search_many(np.eye(2, dtype=np.float32), k=1)]
[([0], [1.0]), ([1], [1.0])]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from ..errors import ConfigError, RetrievalError

__all__ = ["DenseIndex", "KnnEngine", "Space", "to_score"]

Space = Literal["cosinesimil", "l2", "innerproduct"]
KnnEngine = Literal["exact", "faiss_hnsw"]
# Scores computed at once: columns x queries of float32 (8 MiB), one buffer reused chunk after
# chunk, so no score matrix of the whole corpus is allocated (100 queries: about 21,000 columns a
# chunk); 4 to 32 MiB made no steady difference at 100k and 300k columns.
_CHUNK_CELLS = 1 << 21
_FEW_COLUMNS = 64
_BLOCKS = 16   # blocks per chunk for each of the k + 1 wanted: about k + 1 of them are read again


def to_score(similarity: np.ndarray, space: Space) -> np.ndarray:
    """OpenSearch score from cosine (``cosinesimil``), squared distance (``l2``) or inner product."""
    s = np.array(similarity, dtype=np.float32)   # a copy, scored in place
    _to_score_in_place(s, space)
    return s


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", m, m))[:, None]
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def _to_score_in_place(s: np.ndarray, space: Space) -> None:
    """:func:`to_score` written over the float32 array ``s``."""
    if space == "cosinesimil":
        s += np.float32(1.0)
        s *= np.float32(0.5)   # the same float32 as / 2 (both exact halvings), at multiply's cost
    elif space == "l2":
        np.maximum(s, np.float32(0.0), out=s)
        s += np.float32(1.0)
        np.divide(np.float32(1.0), s, out=s)
    elif space == "innerproduct":
        # the reciprocal branch only serves s <= 0; clamping keeps the discarded side finite
        below = np.minimum(s, np.float32(0.0))
        s[...] = np.where(s > 0, s + np.float32(1.0), np.float32(1.0) / (np.float32(1.0) - below))
    else:
        raise ConfigError(f"vector space {space!r} is unknown; use cosinesimil, l2 or innerproduct")


class DenseIndex:
    """Vectors searched by one space. ``keys`` default to row numbers of ``vectors``."""

    def __init__(self, vectors: np.ndarray | None = None, *, space: Space = "cosinesimil",
                 engine: KnnEngine = "exact", keys: np.ndarray | None = None,
                 dimension: int | None = None, dtype: Literal["float32", "float16"] = "float32") -> None:
        if space not in ("cosinesimil", "l2", "innerproduct"):
            raise ConfigError(f"vector space {space!r} is unknown; use cosinesimil, l2 or innerproduct")
        if engine not in ("exact", "faiss_hnsw"):
            raise ConfigError(f"knn engine {engine!r} is unknown; use 'exact' or 'faiss_hnsw'")
        if dtype not in ("float32", "float16"):
            raise ConfigError(f"vector dtype {dtype!r} is unknown; use 'float32' or 'float16'")
        if vectors is None and dimension is None:
            raise ConfigError("give vectors or a dimension")
        self.space, self.engine, self.dtype = space, engine, np.dtype(dtype)
        self.dimension = int(dimension if vectors is None else np.shape(vectors)[1])
        self.size = 0          # columns in use, dead ones included
        self._data = np.zeros((self.dimension, 0), dtype=self.dtype)
        self._keys = np.zeros(0, dtype=np.int64)
        self._alive = np.zeros(0, dtype=bool)
        self._dead = 0
        self._sq_norms = np.zeros(0, dtype=np.float32) if space == "l2" else None
        self._faiss: Any = None
        if vectors is not None:
            n = int(np.shape(vectors)[0])
            self.add(vectors, np.arange(n, dtype=np.int64) if keys is None else keys)

    @property
    def count(self) -> int:
        """Live vectors."""
        return self.size - self._dead

    @property
    def nbytes(self) -> int:
        """Bytes this index holds for its vectors (matrix, keys, flags, norms), capacity included."""
        extra = 0 if self._sq_norms is None else self._sq_norms.nbytes
        return self._data.nbytes + self._keys.nbytes + self._alive.nbytes + extra

    # ---- changes ---------------------------------------------------------------------------------
    def add(self, vectors: np.ndarray, keys: np.ndarray, *, stored: bool = False) -> None:
        """Copy ``vectors`` (one row each, float32-convertible) in under ``keys`` (ascending, above
        every key already held, so positions stay in key order and ties go to the lower key).
        ``stored``: the rows are ones :meth:`vectors` returned (unit vectors for cosinesimil), copied
        in as they are; normalising a unit vector again can move its last bit."""
        # C order: einsum sums a strided row in another order, so a Fortran-ordered matrix would
        # get other squared norms (and unit vectors) than the same rows read back from a file
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        if rows.ndim != 2 or rows.shape[1] != self.dimension or rows.shape[0] != keys.shape[0]:
            raise RetrievalError(f"vectors of shape {rows.shape} do not fit {keys.shape[0]} keys of "
                                 f"{self.dimension} dimensions")
        if keys.size and ((np.diff(keys) <= 0).any() or (self.size and keys[0] <= self._keys[self.size - 1])):
            raise RetrievalError("vector keys must be ascending and above the keys already indexed")
        n = rows.shape[0]
        self._reserve(self.size + n)
        end = self.size + n
        cols = self._data[:, self.size:end]
        normalise = self.space == "cosinesimil" and not stored
        if self.dtype != np.float32 and normalise:
            cols[...] = _unit(rows).T   # normalise in float32, then round to float16
        else:
            cols[...] = rows.T
        if self._sq_norms is not None or (normalise and self.dtype == np.float32):
            # einsum sums the squares without a squared copy of the matrix
            sq = np.einsum("ij,ij->i", rows, rows)
            if self._sq_norms is not None:
                self._sq_norms[self.size:end] = sq
            if normalise and self.dtype == np.float32:
                norms = np.sqrt(sq)
                np.divide(cols, norms, out=cols, where=norms > 0)
        self._keys[self.size:end] = keys
        self._alive[self.size:end] = True
        self.size = end
        self._faiss = None

    def _find(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each key: whether a live vector holds it, and its column where it does."""
        wanted = np.asarray(keys, dtype=np.int64).reshape(-1)
        at = np.minimum(np.searchsorted(self._keys[:self.size], wanted), max(self.size - 1, 0))
        if self.size == 0:
            return np.zeros(len(wanted), dtype=bool), at
        found = (self._keys[at] == wanted) & self._alive[at]
        return found, at

    def has(self, keys: np.ndarray) -> np.ndarray:
        """Whether each key has a live vector."""
        return self._find(keys)[0]

    def vectors(self, keys: np.ndarray) -> np.ndarray:
        """The stored vectors (unit vectors for cosinesimil) of live ``keys``, one row each, float32."""
        found, at = self._find(keys)
        if not found.all():
            raise RetrievalError(f"no vector under keys {np.asarray(keys)[~found][:5].tolist()}")
        return self._data[:, at].T.astype(np.float32)

    def remove(self, keys: np.ndarray) -> None:
        """Forget the vectors under ``keys`` (unknown keys are ignored); space is reclaimed once a
        quarter of the columns are dead, and the dead columns are squeezed out before the next exact
        search."""
        found, at = self._find(keys)
        hit = np.unique(at[found])
        self._alive[hit] = False
        self._dead += int(hit.size)
        if hit.size:
            self._faiss = None
        if self._dead * 4 > self.size:
            self._compact()

    def reserve(self, extra: int) -> None:
        """Make room for ``extra`` more vectors at once, so adding them in slices moves nothing."""
        self._reserve(self.size + extra, exact=True)

    def _reserve(self, need: int, exact: bool = False) -> None:
        capacity = self._data.shape[1]
        if need <= capacity:
            return
        # growth by an eighth keeps appends amortised O(n) while wasting at most an eighth
        new = need if exact or capacity == 0 else max(need, capacity + capacity // 8)
        data = np.zeros((self.dimension, new), dtype=self.dtype)
        data[:, :self.size] = self._data[:, :self.size]
        self._data = data
        self._keys = np.resize(self._keys, new)
        self._alive = np.resize(self._alive, new)
        if self._sq_norms is not None:
            self._sq_norms = np.resize(self._sq_norms, new)

    def _compact(self) -> None:
        live = np.flatnonzero(self._alive[:self.size])
        # live positions only move down, so copying in ascending blocks never overwrites a column
        # before it is read; no second full-size matrix is allocated
        step = 4096
        for start in range(0, live.size, step):
            src = live[start:start + step]
            self._data[:, start:start + src.size] = self._data[:, src]
        for name in ("_keys", "_alive", "_sq_norms"):
            arr = getattr(self, name)
            if arr is not None:
                arr[:live.size] = arr[live]
        self.size, self._dead = int(live.size), 0
        self._alive[:self.size] = True

    # ---- search ----------------------------------------------------------------------------------
    def _queries(self, queries: np.ndarray) -> np.ndarray:
        q = np.asarray(queries, dtype=np.float32)
        if q.shape[-1] != self.dimension:
            raise RetrievalError(f"query vector has {q.shape[-1]} dimensions but the index holds "
                                 f"{self.dimension}-dimensional vectors; embed the query with the "
                                 f"model used at indexing time")
        if not np.all(np.isfinite(q)):
            raise RetrievalError("query vector holds NaN or infinite values")
        return _unit(q) if self.space == "cosinesimil" else q

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` keys and scores, best first; ties go to the lower key."""
        return self.search_many(np.asarray(query, dtype=np.float32).reshape(1, -1), k)[0]

    def search_many(self, queries: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`search` for each row of ``queries`` (shape ``(m, dimension)``), scored together."""
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim != 2:
            raise RetrievalError(f"queries have shape {q.shape}; give a (queries, {self.dimension}) matrix")
        q = self._queries(q)
        if k < 1:
            raise RetrievalError(f"k must be at least 1, got {k}")
        if self.count == 0:
            empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
            return [empty for _ in range(len(q))]
        k = min(k, self.count)
        if self.engine == "faiss_hnsw":
            return self._faiss_search(q, k)
        if len(q) == 0:
            return []
        if self._dead:
            # Scored in place, the live columns would fall into other chunks than in an index holding
            # only them (one built without removals, or read back from its folder), and BLAS picks
            # its kernel by the product's shape: OpenBLAS scores a small tail chunk in one run over
            # the dimensions but a large one in blocks of them, which rounds differently. Without
            # dead columns the same live vectors meet the same products, so the same scores.
            self._compact()
        cols, rows, scores = self._candidates(q, k)
        order = np.lexsort((cols, -scores, rows))   # by query, then best score, then lower key
        # every query has at least k candidates: its k best are the first k from its start
        at = np.searchsorted(rows[order], np.arange(len(q)))[:, None] + np.arange(k)
        picked = order[at]
        return list(zip(self._keys[cols[picked]], scores[picked]))

    def _chunks(self, q: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
        """The scores of ``q`` against every column (none dead), a chunk of columns at a time:
        ``(first column, scores of shape (columns, queries))``. Each chunk is scored in place
        in one reused buffer, with the float32 steps of :func:`to_score` (for l2 the distance is
        ``|q|^2 - (2 x.q - |x|^2)``)."""
        m = len(q)
        step = max(1, _CHUNK_CELLS // m)
        buffer = np.empty(m * min(step, self.size), dtype=np.float32)
        q_sq = np.einsum("ij,ij->i", q, q) if self._sq_norms is not None else None
        for start in range(0, self.size, step):
            end = min(start + step, self.size)
            out = buffer[:(end - start) * m].reshape(end - start, m)
            data = self._data[:, start:end]
            if end - start < _FEW_COLUMNS:
                # OpenBLAS scores a single query against a matrix of a few columns with one kernel when
                # the columns are contiguous (an index exactly that size) and another when they are a
                # slice of a wider buffer (room to grow, or dead columns squeezed out), which rounds
                # otherwise: a few columns are always scored from a contiguous copy
                data = np.ascontiguousarray(data)
            np.matmul((data if self.dtype == np.float32 else data.astype(np.float32)).T, q.T, out=out)
            if q_sq is None:
                _to_score_in_place(out, self.space)
            else:
                out *= np.float32(2.0)
                out -= self._sq_norms[start:end, None]   # type: ignore[index]
                np.subtract(q_sq, out, out=out)
                _to_score_in_place(out, "l2")
            yield start, out

    def _candidates(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Columns, query rows and scores holding, for every query, each column that scores at
        least its (k+1)-th largest block maximum: at least k + 1 columns (or all of them), so its
        k best and every column tying the k-th.

        In each chunk of scores, block ``j`` of ``b`` is columns ``j, j + b, j + 2b ...``, so the
        block maxima are one elementwise maximum of contiguous slabs. A query's running floor is
        the (k+1)-th largest block maximum seen so far; only blocks reaching it are read, and of
        those only the cells reaching it are kept (the final floor is at least as high, so nothing
        it keeps is lost). One pass over scores still in cache, instead of a partition of every
        query's scores and its index array."""
        m = len(q)
        top = np.full((k + 1, m), -np.inf, dtype=np.float32)   # each query's k + 1 largest block maxima
        floor = top[0]
        kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for start, scores in self._chunks(q):
            size = scores.shape[0]
            b = min(_BLOCKS * (k + 1), size)
            whole = size // b * b
            maxima = scores[:whole].reshape(whole // b, b, m).max(axis=0)
            tail = size - whole
            if tail:
                np.maximum(maxima[:tail], scores[whole:], out=maxima[:tail])
            merged = np.concatenate([top, maxima])
            merged.partition(b, axis=0)
            top, floor = merged[b:], merged[b]
            blocks, queries = np.nonzero(maxima >= floor)
            cells = blocks[:, None] + np.arange(0, size, b)   # block j's columns in this chunk
            inside = cells < size
            values = scores.reshape(-1)[np.where(inside, cells, 0) * m + queries[:, None]]
            hit = inside & (values >= floor[queries][:, None])
            kept.append((cells[hit] + start, np.broadcast_to(queries[:, None], hit.shape)[hit], values[hit]))
        cols, rows, values = (np.concatenate(part) for part in zip(*kept))
        keep = values >= floor[rows]
        return cols[keep], rows[keep], values[keep]

    def _faiss_search(self, q: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        if self._faiss is None:
            self._faiss = self._build_faiss()
        index, keys = self._faiss
        index.hnsw.efSearch = max(100, k)
        sims, found = index.search(np.ascontiguousarray(q), k)
        out = []
        for s, f in zip(sims, found):
            keep = f >= 0
            out.append((keys[f[keep]], to_score(s[keep], self.space)))
        return out

    def _build_faiss(self) -> tuple[Any, np.ndarray]:
        try:
            import faiss
        except ImportError:
            raise ConfigError("knn engine 'faiss_hnsw' needs the extra: pip install 'langrag-eval[faiss]'") from None
        metric = faiss.METRIC_L2 if self.space == "l2" else faiss.METRIC_INNER_PRODUCT
        index = faiss.IndexHNSWFlat(self.dimension, 16, metric)
        index.hnsw.efConstruction = 128
        live = np.flatnonzero(self._alive[:self.size])
        for start in range(0, live.size, 65536):   # faiss copies them in; add a slice at a time
            cols = live[start:start + 65536]
            index.add(np.ascontiguousarray(self._data[:, cols].T, dtype=np.float32))
        return index, self._keys[live].copy()
