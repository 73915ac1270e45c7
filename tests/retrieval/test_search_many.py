"""Batched search on the embedded backend and the Retriever, and sync searches without an event loop."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from langrag_eval.models.embeddings import FunctionEmbedder
from langrag_eval.errors import RetrievalError
from langrag_eval.retrieval import Chunk, EmbeddedBackend, HybridSettings, Retriever, base
from langrag_eval.retrieval.contract import CORPUS, corpus_vectors

QUERIES = ["capital river", "zebra", "Seine Paris", "reciprocal rank fusion", "東京", "coffee Montréal"]


def _embedder(calls: list[int]) -> FunctionEmbedder:
    """Deterministic 8-d embeddings from a hash of the text; records each call's batch size."""
    def embed(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return np.stack([np.random.default_rng(sum(map(ord, t))).standard_normal(8) for t in texts])
    return FunctionEmbedder(embed, dimension=8)


def _ids(batch):
    return [[(d.id, d.score) for d in docs] for docs in batch]


@pytest.fixture
def backend() -> EmbeddedBackend:
    b = EmbeddedBackend()
    b.index(CORPUS, corpus_vectors())
    return b


# float32 unit roundoff, and gamma_n = n*u / (1 - n*u): the classic bound on a float32 sum or dot
# product of n terms, |computed - exact| <= gamma_n * sum |a_i b_i| (Higham, Accuracy and Stability
# of Numerical Algorithms, 3.1). A batch is one matrix product and a single query a matrix-vector
# product; BLAS kernels sum in different orders, so the two can differ by up to twice the bound.
_U = float(np.finfo(np.float32).eps) / 2


def _gamma(n: int) -> float:
    return n * _U / (1 - n * _U)


def _knn_bound(dimension: int) -> float:
    """Largest difference of one cosinesimil score, (1 + q.x) / 2 for unit q and x, between two
    summation orders: the dot product's 2 * gamma_d * |q||x| (norms 1 within d*u each), halved,
    plus the rounding of 1 + s and of the float32 score in each."""
    return _gamma(dimension) * (1 + dimension * _U) ** 2 + 4 * _U


def _bm25_bound(query: str, score: float) -> float:
    """A BM25 score is a float32 sum of at most one positive term per query token (fewer tokens than
    characters); each term is a few float32 operations (a relative error of 8u covers them)."""
    return 2 * (_gamma(len(query)) + 8 * _U) * abs(score)


def _score_bound(backend, mode: str, query: str, vector, settings) -> float:  # noqa: ANN001
    """The largest difference the two paths may show on one returned score, from float32 bounds.
    Hybrid min-max normalisation (s - lo) / (hi - lo) moves by at most 4 * delta / (hi - lo) when
    s, lo and hi each move by delta; the fused score is the weighted sum of both lists."""
    if mode == "knn":
        return _knn_bound(vector.shape[-1])
    settings = settings or HybridSettings()
    if mode == "bm25":
        best = backend.search(text=query, mode="bm25", k=1)
        return _bm25_bound(query, best[0].score if best else 0.0)
    total = 1e-12  # the normalisation itself runs in float64
    for sub, weight in zip(("bm25", "knn"), settings.weights):
        docs = backend.search(text=query if sub == "bm25" else None, vector=vector if sub == "knn" else None,
                              mode=sub, k=settings.depth)
        scores = [d.score for d in docs]
        if len(scores) < 2 or max(scores) == min(scores):
            continue  # one score, or all equal: min-max gives 1.0 whatever the rounding
        delta = _knn_bound(vector.shape[-1]) if sub == "knn" else _bm25_bound(query, max(scores))
        total += weight * 4 * delta / (max(scores) - min(scores))
    return total


def _assert_within_bounds(backend, mode, batch, single, vectors, settings) -> None:  # noqa: ANN001
    """The same documents in the same order, and every score within the float32 bound."""
    for got, want, query, vector in zip(_ids(batch), _ids(single), QUERIES, vectors):
        assert [d for d, _ in got] == [d for d, _ in want]
        bound = _score_bound(backend, mode, query, np.asarray(vector, dtype=np.float32), settings)
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=0, abs=bound)


@pytest.mark.parametrize("mode", ["bm25", "knn", "hybrid"])
def test_search_many_equals_one_search_per_query(backend, mode) -> None:
    vectors = np.random.default_rng(2).standard_normal((len(QUERIES), 8)).astype(np.float32)
    settings = HybridSettings(depth=5, fusion="normalization") if mode == "hybrid" else None
    batch = backend.search_many(texts=None if mode == "knn" else QUERIES,
                                vectors=None if mode == "bm25" else vectors, mode=mode, k=4, hybrid=settings)
    single = [backend.search(text=None if mode == "knn" else q, vector=None if mode == "bm25" else v,
                             mode=mode, k=4, hybrid=settings) for q, v in zip(QUERIES, vectors)]
    assert len(batch) == len(QUERIES)
    _assert_within_bounds(backend, mode, batch, single, vectors, settings)
    assert _ids(asyncio.run(backend.asearch_many(
        texts=None if mode == "knn" else QUERIES, vectors=None if mode == "bm25" else vectors, mode=mode,
        k=4, hybrid=settings))) == _ids(batch)


def test_search_many_checks_its_arguments(backend) -> None:
    with pytest.raises(RetrievalError, match="one vector per text"):
        backend.search_many(texts=QUERIES, vectors=np.ones((2, 8), np.float32), mode="hybrid")
    with pytest.raises(RetrievalError, match="empty query"):
        backend.search_many(texts=["fine", " "], mode="bm25")
    with pytest.raises(RetrievalError, match="8-dimensional"):
        backend.search_many(vectors=np.ones((2, 5), np.float32), mode="knn")
    assert backend.search_many(texts=[], mode="bm25") == []


@pytest.mark.parametrize("mode", ["bm25", "knn", "hybrid"])
def test_retrieve_many_embeds_once_and_equals_retrieve(backend, mode) -> None:
    calls: list[int] = []
    retriever = Retriever(backend, mode=mode, embedder=_embedder(calls), k=3)
    many = retriever.retrieve_many(QUERIES)
    assert calls == ([] if mode == "bm25" else [len(QUERIES)])
    vectors = _embedder([]).embed(QUERIES)
    _assert_within_bounds(backend, mode, many, [retriever.retrieve(q) for q in QUERIES], vectors, retriever.hybrid)
    assert _ids(asyncio.run(retriever.aretrieve_many(QUERIES))) == _ids(many)  # the same batched path
    _assert_within_bounds(backend, mode, many, [asyncio.run(retriever.aretrieve(q)) for q in QUERIES], vectors,
                          retriever.hybrid)
    with pytest.raises(RetrievalError, match="list of queries"):
        retriever.retrieve_many("one string")


class _AsyncOnly:
    """A backend with only the SearchBackend protocol's async methods."""

    name = "async-only"

    def __init__(self, inner: EmbeddedBackend) -> None:
        self.inner = inner

    async def aindex(self, chunks, vectors=None):
        return await self.inner.aindex(chunks, vectors)

    async def asearch(self, **kwargs):
        return await self.inner.asearch(**kwargs)

    async def acount(self):
        return await self.inner.acount()


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_backends_without_batches_get_one_search_per_query(backend, mode) -> None:
    ours = Retriever(backend, mode=mode, embedder=_embedder([]), k=3)
    plain = Retriever(_AsyncOnly(backend), mode=mode, embedder=_embedder([]), k=3)
    assert _ids(plain.retrieve_many(QUERIES)) == _ids(ours.retrieve_many(QUERIES))
    assert _ids(asyncio.run(plain.aretrieve_many(QUERIES))) == _ids(ours.retrieve_many(QUERIES))


def test_sync_paths_start_no_event_loop(backend, monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a sync search started an event loop")

    monkeypatch.setattr(asyncio, "run", refuse)
    monkeypatch.setattr(asyncio, "new_event_loop", refuse)
    monkeypatch.setattr(base, "run_sync", refuse)
    fresh = EmbeddedBackend()
    assert fresh.index([Chunk(id="x", text="a lone zebra")], np.ones((1, 8), np.float32)).indexed == 1
    assert fresh.count() == 1 and fresh.search(text="zebra")[0].id == "x"
    assert backend.search(vector=corpus_vectors()[3], mode="knn", k=1)[0].id == CORPUS[3].id
    for mode in ("bm25", "knn", "hybrid"):
        retriever = Retriever(backend, mode=mode, embedder=_embedder([]), k=2)
        assert len(retriever.retrieve("capital river")) == 2
        assert len(retriever.retrieve_many(QUERIES[:3])) == 3
