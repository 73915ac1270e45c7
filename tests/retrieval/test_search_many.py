"""Batched search on the embedded backend and the Retriever, and sync searches without an event loop."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from langrag_eval.embeddings import FunctionEmbedder
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


@pytest.mark.parametrize("mode", ["bm25", "knn", "hybrid"])
def test_search_many_equals_one_search_per_query(backend, mode) -> None:
    vectors = np.random.default_rng(2).standard_normal((len(QUERIES), 8)).astype(np.float32)
    settings = HybridSettings(depth=5, fusion="normalization") if mode == "hybrid" else None
    batch = backend.search_many(texts=None if mode == "knn" else QUERIES,
                                vectors=None if mode == "bm25" else vectors, mode=mode, k=4, hybrid=settings)
    single = [backend.search(text=None if mode == "knn" else q, vector=None if mode == "bm25" else v,
                             mode=mode, k=4, hybrid=settings) for q, v in zip(QUERIES, vectors)]
    assert len(batch) == len(QUERIES)
    for got, want in zip(_ids(batch), _ids(single)):
        assert [d for d, _ in got] == [d for d, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-6)
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
    assert _ids(many) == _ids([retriever.retrieve(q) for q in QUERIES])
    assert _ids(asyncio.run(retriever.aretrieve_many(QUERIES))) == _ids(many)
    assert _ids([asyncio.run(retriever.aretrieve(q)) for q in QUERIES]) == _ids(many)
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
