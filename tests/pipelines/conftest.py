"""Fixtures: the MiniLM embedder (loaded once per session) and the corpus on the embedded backend."""

from __future__ import annotations

import pytest
from pipeline_corpus import CORPUS

from langrag_eval.models.embeddings import default_embedder
from langrag_eval.retrieval import Chunk, EmbeddedBackend


@pytest.fixture(scope="session")
def minilm():
    return default_embedder()


@pytest.fixture(scope="session")
def chunks() -> list[Chunk]:
    return [Chunk(id=cid, text=text, metadata={"source": "catalogue"}) for cid, text in CORPUS.items()]


@pytest.fixture(scope="session")
def backend(minilm, chunks) -> EmbeddedBackend:
    b = EmbeddedBackend()
    report = b.index(chunks, minilm.embed([c.text for c in chunks]))
    assert report.indexed == len(chunks) and not report.failed
    return b
