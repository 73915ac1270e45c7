"""A LlamaIndex retriever over any langrag-eval backend and mode, and the six agents as query engines
(``source_nodes`` the passages the answer came from; ``metadata`` the agent, a Fusion agent's
``variations`` or the ``error``). Node ids are chunk ids, so LlamaIndex's ``RetrieverEvaluator``
scores the same ids as the core's metrics.

>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="a", text="Paris is in France."), Chunk(id="b", text="Rome is in Italy.")])
>>> [n.node.node_id for n in LangragRetriever.from_backend(backend, k=1).retrieve("Rome?")]
['b']
>>> engines = six_query_engines(backend, None, Judge(ScriptedModel(["In Italy."])), k=1)
>>> response = engines["rag-bm25"].query("Rome?")
>>> response.response, [n.node.node_id for n in response.source_nodes]
('In Italy.', ['b'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.response.schema import Response
from llama_index.core.llms import LLM
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle, TextNode

from langrag_eval.types import sequence_of
from langrag_eval.models.embeddings import Embedder
from langrag_eval.adapters.recorder import agent_response
from langrag_eval.pipelines import six_agents
from langrag_eval.retrieval.base import HybridSettings, Mode, Retriever, SearchBackend
from langrag_eval.retrieval.ingest import retriever_over
from langrag_eval.runtime import Judge, synchronous
from langrag_eval.types import Document

from .models import as_embedder, as_judge

__all__ = ["LangragQueryEngine", "LangragRetriever", "six_query_engines", "to_node"]

AnyEmbedder = Embedder | BaseEmbedding | None


def to_node(doc: Document) -> NodeWithScore:
    """A langrag-eval ``Document`` as a scored LlamaIndex node (node id = chunk id)."""
    return NodeWithScore(node=TextNode(id_=doc.id, text=doc.text, metadata=dict(doc.metadata)), score=doc.score)


class LangragRetriever(BaseRetriever):
    """A :class:`langrag_eval.retrieval.Retriever`; ``k`` (or ``similarity_top_k``) overrides its ``k``."""

    def __init__(self, retriever: Retriever, *, k: int | None = None, similarity_top_k: int | None = None,
                 **kwargs: Any) -> None:
        self.retriever, self._k = retriever, k if k is not None else similarity_top_k
        super().__init__(**kwargs)

    @classmethod
    def from_backend(cls, backend: SearchBackend, *, mode: Mode = "bm25", embedder: AnyEmbedder = None,
                     k: int = 10, hybrid: HybridSettings = HybridSettings(), **kwargs: Any) -> LangragRetriever:
        return cls(Retriever(backend, mode=mode, embedder=as_embedder(embedder), k=k, hybrid=hybrid), **kwargs)

    @classmethod
    def from_nodes(cls, nodes: Sequence[BaseNode | NodeWithScore], *, backend: SearchBackend | None = None,
                   mode: Mode = "bm25", embed_model: AnyEmbedder = None, similarity_top_k: int = 2,
                   hybrid: HybridSettings = HybridSettings(), **kwargs: Any) -> LangragRetriever:
        """Index LlamaIndex nodes (ids and metadata kept) into ``backend`` (default: in-process)."""
        nodes = sequence_of(nodes, field="from_nodes(nodes)")
        return cls(retriever_over(nodes, backend=backend, mode=mode, embedder=as_embedder(embed_model),
                                  k=similarity_top_k, hybrid=hybrid), **kwargs)

    @classmethod
    def from_documents(cls, documents: Sequence[BaseNode], **kwargs: Any) -> LangragRetriever:
        """LlamaIndex ``Document``\\ s indexed whole, one node each (split them first for chunks)."""
        return cls.from_nodes(sequence_of(documents, field="from_documents(documents)"), **kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [to_node(d) for d in self.retriever.retrieve(query_bundle.query_str, self._k)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [to_node(d) for d in await self.retriever.aretrieve(query_bundle.query_str, self._k)]


class LangragQueryEngine(CustomQueryEngine):
    """One agent (``RAGAgent``, ``FusionAgent`` or any :class:`Agent`) as a query engine."""

    agent: Any  # an Agent; Any so pydantic neither copies nor validates it

    async def acustom_query(self, query_str: str) -> Response:
        answer, docs, meta = agent_response(self.agent.name, query_str, await self.agent.arun(query_str))
        return Response(response=answer, source_nodes=[to_node(d) for d in docs], metadata=meta)

    custom_query = synchronous(acustom_query)


def six_query_engines(backend: SearchBackend, embedder: Embedder | None, llm: LLM | Judge, k: int = 5, *,
                      n_variations: int = 4, hybrid: HybridSettings = HybridSettings()
                      ) -> dict[str, LangragQueryEngine]:
    """The paper's six agents (``rag-bm25`` ... ``fusion-hybrid``) as query engines answering with ``llm``."""
    agents = six_agents(backend, embedder, as_judge(llm), k, n_variations=n_variations, hybrid=hybrid)
    return {a.name: LangragQueryEngine(agent=a) for a in agents}
