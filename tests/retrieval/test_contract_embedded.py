"""The shared backend contract, run against the embedded backend in memory, persisted, and with faiss."""

from __future__ import annotations

import pytest

from langrag_eval.retrieval import EmbeddedBackend
from langrag_eval.retrieval.contract import BackendContract, HybridContract, KnnContract


class TestEmbeddedInMemory(BackendContract):
    fusions = ("rrf", "server_rrf", "normalization")

    @pytest.fixture
    def backend(self):
        return EmbeddedBackend()


class TestEmbeddedPersisted(BackendContract):
    @pytest.fixture
    def backend(self, tmp_path):
        return EmbeddedBackend(tmp_path / "index")


class TestEmbeddedFaissHnsw(KnnContract, HybridContract):
    @pytest.fixture
    def backend(self):
        pytest.importorskip("faiss", reason="faiss-cpu not installed (extra 'faiss')")
        return EmbeddedBackend(knn_engine="faiss_hnsw")
