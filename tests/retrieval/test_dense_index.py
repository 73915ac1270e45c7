"""The KNN index: rankings against brute force and faiss, batches equal single searches, removal and
compaction, and one owned copy of the vectors (the caller's matrix is not kept)."""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from langrag_eval.errors import RetrievalError
from langrag_eval.retrieval import Chunk, EmbeddedBackend
from langrag_eval.retrieval import dense
from langrag_eval.retrieval.dense import DenseIndex

SPACES = ["cosinesimil", "l2", "innerproduct"]


def _reference(vectors: np.ndarray, query: np.ndarray, space: str) -> np.ndarray:
    """OpenSearch's score formulas in float64, straight from the documentation."""
    v, q = vectors.astype(np.float64), query.astype(np.float64)
    if space == "cosinesimil":
        return (1 + v @ q / np.linalg.norm(v, axis=1) / np.linalg.norm(q)) / 2
    if space == "l2":
        return 1 / (1 + ((v - q) ** 2).sum(axis=1))
    ip = v @ q
    return np.where(ip > 0, ip + 1, 1 / (1 - np.minimum(ip, 0)))


# Small integer vectors: many exact ties (repeated rows), and dot products exact in float32.
int_vectors = st.integers(1, 40).flatmap(lambda n: st.integers(1, 6).flatmap(lambda d: st.tuples(
    arrays(np.float32, (n, d), elements=st.integers(-3, 3).map(float)),
    arrays(np.float32, (5, d), elements=st.integers(-3, 3).map(float)))))


@settings(max_examples=80, deadline=None)
@given(data=int_vectors, space=st.sampled_from(["l2", "innerproduct"]), k=st.integers(1, 45))
def test_exact_rankings_with_ties_go_to_the_lower_key(data, space, k) -> None:
    vectors, queries = data
    index = DenseIndex(vectors, space=space)
    batch = index.search_many(queries, k)
    for q, (keys, scores) in zip(queries, batch):
        expected = _reference(vectors, q, space)
        order = np.lexsort((np.arange(len(vectors)), -expected))[:k]   # score, then lower key
        assert keys.tolist() == order.tolist()
        assert scores.tolist() == pytest.approx(expected[order].tolist(), rel=1e-6)
        single_keys, single_scores = index.search(q, k)
        assert single_keys.tolist() == keys.tolist() and single_scores.tolist() == scores.tolist()


@contextlib.contextmanager
def _chunk_cells(cells: int | None) -> Iterator[None]:
    """Score ``cells`` queries x columns at a time (None: the default) while the block is open."""
    saved = dense._CHUNK_CELLS
    dense._CHUNK_CELLS = cells or saved
    try:
        yield
    finally:
        dense._CHUNK_CELLS = saved


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(2, 900), d=st.integers(1, 4), k=st.integers(1, 40),
       space=st.sampled_from(SPACES), drop=st.sampled_from([0.0, 0.1, 0.3]),
       cells=st.sampled_from([None, 6, 60, 600]))
def test_block_maxima_selection_equals_a_full_sort_when_many_rows_tie(seed, n, d, k, space, drop, cells) -> None:
    """Few distinct small-integer vectors so many scores tie, some rows removed, the scores taken
    in one chunk or in many (down to one column a chunk, so the running floors and the short last
    blocks are used): the keys and scores are a full sort's of the same scores (score, then lower
    key), and for integer arithmetic the formulas' too."""
    rng = np.random.default_rng(seed)
    vectors = rng.integers(-2, 3, size=(n, d)).astype(np.float32)
    vectors[~vectors.any(axis=1), 0] = 1.0   # cosinesimil takes no zero vector
    queries = rng.integers(-2, 3, size=(6, d)).astype(np.float32)
    queries[~queries.any(axis=1), 0] = 1.0
    index = DenseIndex(vectors, space=space)
    removed = np.flatnonzero(rng.random(n) < drop)
    index.remove(removed)
    live = np.setdiff1d(np.arange(n), removed)
    with _chunk_cells(cells):
        batch = index.search_many(queries, k)
        if live.size == 0:
            assert all(len(keys) == 0 for keys, _ in batch)
            return
        full = np.concatenate([s.copy() for _, s in index._chunks(index._queries(queries))]).T
    held = index._keys[:index.size]
    for q, row, (keys, scores) in zip(queries, full, batch):
        order = np.lexsort((held, -row))[:min(k, live.size)]   # dead rows score -inf: last
        assert keys.tolist() == held[order].tolist() and scores.tolist() == row[order].tolist()
        if space != "cosinesimil":   # integer arithmetic: float32 is exact, ties are real ties
            expected = _reference(vectors[live], q, space)
            order = np.lexsort((live, -expected))[:k]
            assert keys.tolist() == live[order].tolist()
            assert scores.tolist() == pytest.approx(expected[order].tolist(), rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 300), d=st.integers(2, 24), k=st.integers(1, 20),
       space=st.sampled_from(SPACES))
def test_random_vectors_match_the_formulas_and_batches_match_single_searches(seed, n, d, k, space) -> None:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, d)).astype(np.float32)
    queries = rng.standard_normal((7, d)).astype(np.float32)
    index = DenseIndex(vectors, space=space)
    for q, (keys, scores) in zip(queries, index.search_many(queries, k)):
        expected = _reference(vectors, q, space)
        # float32 arithmetic: relative 1e-5, and 1e-6 absolute where cosine nears -1
        assert scores.tolist() == pytest.approx(expected[keys].tolist(), rel=1e-5, abs=1e-6)
        assert scores.tolist() == pytest.approx(np.sort(expected)[::-1][:min(k, n)].tolist(), rel=1e-5,
                                                abs=1e-6)
        single_keys, single_scores = index.search(q, k)
        # one query alone goes through a matrix-vector product, a batch through a matrix-matrix one:
        # float32 rounding differs by a few ulps (seen: 1.4e-6 relative for l2 at d=2)
        assert single_scores.tolist() == pytest.approx(scores.tolist(), rel=1e-5, abs=1e-6)


def test_batched_search_agrees_with_faiss_flat() -> None:
    faiss = pytest.importorskip("faiss", reason="faiss-cpu not installed (extra 'faiss')")
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((2000, 32)).astype(np.float32)
    queries = rng.standard_normal((50, 32)).astype(np.float32)
    flat = faiss.IndexFlatL2(32)
    flat.add(vectors)
    distances, found = flat.search(queries, 10)
    ours = DenseIndex(vectors, space="l2").search_many(queries, 10)
    assert [keys.tolist() for keys, _ in ours] == found.tolist()
    assert np.allclose([scores for _, scores in ours], 1 / (1 + distances), rtol=1e-5)


def test_faiss_hnsw_batches_equal_single_searches() -> None:
    pytest.importorskip("faiss", reason="faiss-cpu not installed (extra 'faiss')")
    rng = np.random.default_rng(8)
    vectors = rng.standard_normal((500, 16)).astype(np.float32)
    index = DenseIndex(vectors, keys=np.arange(500) * 3, engine="faiss_hnsw")
    queries = rng.standard_normal((20, 16)).astype(np.float32)
    for q, (keys, scores) in zip(queries, index.search_many(queries, 5)):
        one = index.search(q, 5)
        assert keys.tolist() == one[0].tolist() and np.allclose(scores, one[1])
        assert all(key % 3 == 0 for key in keys.tolist())   # answers keys, not positions


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 6), batches=st.lists(st.integers(1, 30), min_size=1, max_size=6),
       drop=st.floats(0.0, 0.9), space=st.sampled_from(SPACES))
def test_removal_and_compaction_equal_a_fresh_index_of_the_rest(seed, batches, drop, space) -> None:
    rng = np.random.default_rng(seed)
    total = sum(batches)
    vectors = rng.standard_normal((total, 6)).astype(np.float32)
    keys = np.cumsum(rng.integers(1, 4, total))
    index = DenseIndex(dimension=6, space=space)
    at = 0
    for size in batches:
        index.add(vectors[at:at + size], keys[at:at + size])
        at += size
    gone = rng.random(total) < drop
    index.remove(keys[gone])
    index.remove(keys[gone][:3])            # removing twice changes nothing
    index.remove(np.array([-5, 10 ** 9]))   # unknown keys are ignored
    assert index.count == int((~gone).sum())
    queries = rng.standard_normal((4, 6)).astype(np.float32)
    if gone.all():
        assert all(len(k) == 0 for k, _ in index.search_many(queries, 3))
        return
    fresh = DenseIndex(vectors[~gone], keys=keys[~gone], space=space)
    for (k1, s1), (k2, s2) in zip(index.search_many(queries, 10), fresh.search_many(queries, 10)):
        assert k1.tolist() == k2.tolist() and s1.tolist() == s2.tolist()
    assert index.has(keys).tolist() == (~gone).tolist()
    assert np.array_equal(index.vectors(keys[~gone]), fresh.vectors(keys[~gone]))


def test_index_owns_one_copy_and_the_callers_matrix_is_not_kept() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((3000, 64)).astype(np.float32)
    alive = weakref.ref(vectors)
    backend = EmbeddedBackend()
    backend.index([Chunk(id=str(i), text=f"chunk {i}") for i in range(3000)], vectors)
    query = vectors[17].copy()
    nbytes = vectors.nbytes
    del vectors
    gc.collect()
    assert alive() is None   # no row view of the caller's matrix survives indexing
    dense = backend._dense
    assert dense is not None and nbytes <= dense.nbytes <= 1.05 * nbytes  # plus keys and flags
    assert dense._data.flags.owndata
    assert backend.search(vector=query, mode="knn", k=1)[0].id == "17"


def test_queries_are_checked() -> None:
    index = DenseIndex(np.eye(3, dtype=np.float32))
    with pytest.raises(RetrievalError, match="3-dimensional"):
        index.search_many(np.ones((2, 4), dtype=np.float32), 1)
    with pytest.raises(RetrievalError, match="NaN"):
        index.search_many(np.array([[1.0, np.nan, 0.0]], dtype=np.float32), 1)
    with pytest.raises(RetrievalError, match="matrix"):
        index.search_many(np.ones(3, dtype=np.float32), 1)
    with pytest.raises(RetrievalError, match="ascending"):
        index.add(np.ones((1, 3), dtype=np.float32), np.array([1]))
    assert index.search_many(np.zeros((0, 3), dtype=np.float32), 2) == []
    with pytest.raises(RetrievalError, match="at least 1"):
        index.search(np.ones(3, dtype=np.float32), 0)


def test_float16_storage_halves_the_matrix_and_keeps_the_ranking() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((400, 32)).astype(np.float32)
    queries = rng.standard_normal((10, 32)).astype(np.float32)
    full, half = DenseIndex(vectors), DenseIndex(vectors, dtype="float16")
    assert half._data.nbytes * 2 == full._data.nbytes
    for (k1, s1), (k2, s2) in zip(full.search_many(queries, 5), half.search_many(queries, 5)):
        assert k1[0] == k2[0] and np.allclose(s1, s2, atol=2e-3)
