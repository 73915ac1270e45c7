"""A LangChain retriever over any langrag-eval backend and mode (BM25, KNN, hybrid).

Each returned ``Document`` carries the chunk id as ``Document.id`` and in ``metadata["id"]``, and the
backend's score in ``metadata["score"]``, so evaluators and RRF can key passages by id.

>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="a", text="Paris is in France."), Chunk(id="b", text="Rome is in Italy.")])
>>> docs = LangragRetriever.from_backend(backend, mode="bm25", k=1).invoke("Where is Rome?")
>>> docs[0].id, docs[0].metadata["id"], docs[0].page_content
('b', 'b', 'Rome is in Italy.')
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from langrag_eval.embeddings import Embedder
from langrag_eval.retrieval.base import HybridSettings, Mode, Retriever, SearchBackend
from langrag_eval.types import Document

__all__ = ["LangragRetriever", "to_langchain_document"]


def to_langchain_document(doc: Document) -> LCDocument:
    """A langrag-eval ``Document`` as a LangChain one: id kept, score in the metadata."""
    return LCDocument(id=doc.id, page_content=doc.text,
                      metadata={**doc.metadata, "id": doc.id, "score": doc.score})


class LangragRetriever(BaseRetriever):
    """Wraps a :class:`langrag_eval.retrieval.Retriever`; ``k`` overrides the retriever's own ``k``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any  # a langrag_eval Retriever (kept as Any so pydantic does not copy or validate it)
    k: int | None = None

    @classmethod
    def from_backend(cls, backend: SearchBackend, *, mode: Mode = "bm25", embedder: Embedder | None = None,
                     k: int = 10, hybrid: HybridSettings = HybridSettings(), **kwargs: Any) -> LangragRetriever:
        """Build the retriever and its wrapper in one step."""
        return cls(retriever=Retriever(backend, mode=mode, embedder=embedder, k=k, hybrid=hybrid),
                   **kwargs)

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[LCDocument]:
        return [to_langchain_document(d) for d in self.retriever.retrieve(query, self.k)]

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[LCDocument]:
        return [to_langchain_document(d) for d in await self.retriever.aretrieve(query, self.k)]
