"""A LangChain retriever over any langrag-eval backend and mode (BM25, KNN, hybrid), and the RAG
and RAG-Fusion agents as runnables.

A returned ``Document`` has the chunk id as ``id`` and ``metadata["id"]``, the score in
``metadata["score"]`` and the indexed metadata. LangChain's conventions hold: ``k`` and
``search_kwargs`` at construction, ``invoke(q, k=5)`` per call (``mode``, ``hybrid``; anything else is
refused), ``from_documents`` / ``from_texts``, LangChain ``Embeddings`` as the embedder.

>>> r = LangragRetriever.from_texts(["Paris is in France.", "Rome is in Italy."], metadatas=[{"source": "fr"}, {}])
>>> [(d.page_content, d.metadata["source"]) for d in r.invoke("Where is Paris?", k=1)]
[('Paris is in France.', 'fr')]
>>> from langchain_core.language_models import FakeListChatModel
>>> agents = six_runnables(r.retriever.backend, None, FakeListChatModel(responses=["In Italy."]), k=1)
>>> out = agents["rag-bm25"].invoke("Where is Rome?")
>>> out["answer"], [d.page_content for d in out["context"]]
('In Italy.', ['Rome is in Italy.'])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import ConfigDict, Field

from langrag_eval.adapters.recorder import agent_output
from langrag_eval.types import sequence_of
from langrag_eval.models.embeddings import Embedder
from langrag_eval.pipelines import Agent, six_agents
from langrag_eval.retrieval.base import HybridSettings, Mode, Retriever, SearchBackend
from langrag_eval.retrieval.ingest import retriever_over
from langrag_eval.runtime import Judge, synchronous
from langrag_eval.types import Document

from .models import as_embedder, as_judge

__all__ = ["LangragRetriever", "as_runnable", "six_runnables", "to_langchain_document"]


def to_langchain_document(doc: Document) -> LCDocument:
    """A langrag-eval ``Document`` as a LangChain one: id kept, score in the metadata."""
    return LCDocument(id=doc.id, page_content=doc.text, metadata={**doc.metadata, "id": doc.id, "score": doc.score})


class LangragRetriever(BaseRetriever):
    """Wraps a :class:`langrag_eval.retrieval.Retriever`. ``k`` overrides the retriever's own ``k``;
    ``search_kwargs`` (``k``, ``mode``, ``hybrid``) apply to every call unless the call overrides."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any  # a langrag_eval Retriever (kept as Any so pydantic does not copy or validate it)
    k: int | None = None
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    def model_post_init(self, context: Any) -> None:
        Retriever.search_arguments(self.search_kwargs)  # refuse unknown arguments at construction

    @classmethod
    def from_backend(cls, backend: SearchBackend, *, mode: Mode = "bm25",
                     embedder: Embedder | Embeddings | None = None, k: int = 10,
                     hybrid: HybridSettings = HybridSettings(), **kwargs: Any) -> LangragRetriever:
        """Build the retriever and its wrapper in one step."""
        return cls(retriever=Retriever(backend, mode=mode, embedder=as_embedder(embedder), k=k, hybrid=hybrid),
                   **kwargs)

    @classmethod
    def from_documents(cls, documents: Iterable[LCDocument], *, backend: SearchBackend | None = None,
                       mode: Mode = "bm25", embedder: Embedder | Embeddings | None = None, k: int = 4,
                       hybrid: HybridSettings = HybridSettings(), **kwargs: Any) -> LangragRetriever:
        """Index LangChain documents (ids and metadata kept) into ``backend`` (default: in-process)."""
        docs = sequence_of(documents, field="from_documents(documents)")
        return cls(retriever=retriever_over(docs, backend=backend, mode=mode, embedder=as_embedder(embedder), k=k,
                                            hybrid=hybrid), **kwargs)

    @classmethod
    def from_texts(cls, texts: Iterable[str], metadatas: Sequence[dict] | None = None,
                   ids: Sequence[str] | None = None, **kwargs: Any) -> LangragRetriever:
        """Like :meth:`from_documents`, from texts with optional metadata and ids."""
        texts = sequence_of(texts, field="from_texts(texts)")
        docs = [LCDocument(page_content=t, metadata=dict(metadatas[i]) if metadatas else {},
                           id=ids[i] if ids else None) for i, t in enumerate(texts)]
        return cls.from_documents(docs, **kwargs)

    def _search(self, kwargs: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
        search = Retriever.search_arguments({**self.search_kwargs, **kwargs})
        return search.pop("k", self.k), search

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[LCDocument]:
        k, search = self._search(kwargs)
        return [to_langchain_document(d) for d in self.retriever.retrieve(query, k, **search)]

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[LCDocument]:
        k, search = self._search(kwargs)
        return [to_langchain_document(d) for d in await self.retriever.aretrieve(query, k, **search)]


def as_runnable(agent: Agent) -> Runnable[Any, dict[str, Any]]:
    """One agent (``RAGAgent``, ``FusionAgent`` or any :class:`Agent`) as a runnable returning
    :func:`~langrag_eval.adapters.recorder.agent_output`'s dict, ``context`` as LangChain documents."""

    async def ainvoke(value: Any) -> dict[str, Any]:
        out = await agent_output(agent, value)
        return {**out, "context": [to_langchain_document(d) for d in out["context"]]}

    return RunnableLambda(synchronous(ainvoke), afunc=ainvoke, name=agent.name)


def six_runnables(backend: SearchBackend, embedder: Embedder | None, llm: BaseChatModel | Judge, k: int = 5, *,
                  n_variations: int = 4, hybrid: HybridSettings = HybridSettings()) -> dict[str, Runnable]:
    """The paper's six agents (``rag-bm25`` ... ``fusion-hybrid``) as runnables, by name, answering
    with ``llm`` (a LangChain chat model or a langrag-eval :class:`Judge`)."""
    agents = six_agents(backend, embedder, as_judge(llm), k, n_variations=n_variations, hybrid=hybrid)
    return {a.name: as_runnable(a) for a in agents}
