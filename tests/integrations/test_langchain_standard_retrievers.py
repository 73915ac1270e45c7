"""LangChain's own standard retriever suite (``langchain-tests`` ``RetrieversIntegrationTests``)
run on the shipped retriever in each mode, with a LangChain ``Embeddings`` (the framework's own
deterministic fake) as the embedder for the vector modes."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_tests")

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_langrag import LangragRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

TEXTS = ["The sensor measures air pressure.", "The sensor reports temperature every second.",
         "The sensor runs on a coin cell.", "The sensor fits in a 3 mm package.",
         "The radar sensor sees through thin walls.", "Invoices are stored for ten years."]


def _core(mode: str):
    docs = [Document(page_content=t, id=f"d{i}", metadata={"source": f"sheet-{i}.pdf"})
            for i, t in enumerate(TEXTS)]
    embedder = None if mode == "bm25" else DeterministicFakeEmbedding(size=16)
    return LangragRetriever.from_documents(docs, mode=mode, embedder=embedder, k=4).retriever


class _Standard(RetrieversIntegrationTests):
    mode = "bm25"

    @property
    def retriever_constructor(self) -> type[LangragRetriever]:
        return LangragRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"retriever": _core(self.mode)}

    @property
    def retriever_query_example(self) -> str:
        return "What does the sensor do?"


class TestBM25Retriever(_Standard):
    mode = "bm25"


class TestKNNRetriever(_Standard):
    mode = "knn"


class TestHybridRetriever(_Standard):
    mode = "hybrid"


class TestRetrieverWithSearchKwargs(_Standard):
    """``search_kwargs`` at construction (LangChain's VectorStoreRetriever convention) and per call."""

    mode = "hybrid"

    @property
    def retriever_constructor_params(self) -> dict:
        return {"retriever": _core("bm25"), "search_kwargs": {"mode": "bm25"}}
