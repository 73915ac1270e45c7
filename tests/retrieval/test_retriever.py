"""Retriever: one backend + mode + embedder; the query is embedded only when the mode needs it."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from langrag_eval.models.embeddings import FunctionEmbedder
from langrag_eval.errors import ConfigError, RetrievalError
from langrag_eval.retrieval import Chunk, EmbeddedBackend, HybridSettings, Retriever

WORDS = ["paris", "berlin", "rome", "zebra"]


def _embed(texts):
    # A bag-of-keywords embedder: deterministic and enough to make knn meaningful in tests.
    return [[float(w in t.lower()) + 0.01 for w in WORDS] for t in texts]


@pytest.fixture
def setup():
    calls = []
    embedder = FunctionEmbedder(lambda t: (calls.append(list(t)), _embed(t))[1], model_id="kw", dimension=4)
    backend = EmbeddedBackend()
    chunks = [Chunk(id=w, text=f"All about {w} and more.") for w in WORDS]
    backend.index(chunks, embedder.embed([c.text for c in chunks]))
    calls.clear()
    return backend, embedder, calls


def test_modes(setup):
    backend, embedder, calls = setup
    assert Retriever(backend, embedder=embedder).retrieve("zebra")[0].id == "zebra"
    assert calls == []  # bm25 never embeds
    knn = Retriever(backend, mode="knn", embedder=embedder, k=2)
    assert knn.name == "knn" and knn.retrieve("rome")[0].id == "rome"
    assert calls == [["rome"]]
    hybrid = Retriever(backend, mode="hybrid", embedder=embedder, hybrid=HybridSettings(depth=3))
    docs = hybrid.retrieve("berlin", k=3)
    assert docs[0].id == "berlin" and len(docs) == 3


async def test_async_and_concurrent(setup):
    backend, embedder, _ = setup
    r = Retriever(backend, mode="hybrid", embedder=embedder, k=1)
    results = await asyncio.gather(*(r.aretrieve(w) for w in WORDS))
    assert [docs[0].id for docs in results] == WORDS


def test_retrieve_inside_a_running_loop(setup):
    backend, embedder, _ = setup

    async def caller():  # e.g. a sync callback invoked from async framework code
        return Retriever(backend, embedder=embedder).retrieve("paris")

    assert asyncio.run(caller())[0].id == "paris"


def test_errors(setup):
    backend, embedder, _ = setup
    with pytest.raises(RetrievalError, match="empty query"):
        Retriever(backend, mode="knn", embedder=embedder).retrieve("  ")
    with pytest.raises(ConfigError):
        Retriever(backend, mode="semantic")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Retriever(backend, k=0)
    with pytest.raises(ConfigError):
        HybridSettings(weights=(-1.0, 1.0))
    with pytest.raises(ConfigError):
        HybridSettings(fusion="max")  # type: ignore[arg-type]
    wrong = FunctionEmbedder(lambda t: np.ones((len(t), 3)), model_id="wrong")
    with pytest.raises(RetrievalError, match="dimension"):
        Retriever(backend, mode="knn", embedder=wrong).retrieve("paris")
