"""A LlamaIndex retriever over any langrag-eval backend and mode (BM25, KNN, hybrid).

Node ids are the chunk ids, so LlamaIndex's ``RetrieverEvaluator`` (which reads
``node.node.node_id``) scores against the same ids as langrag-eval's retrieval metrics. LlamaIndex's
conventions hold: ``similarity_top_k`` (or ``k``) at construction, ``from_nodes`` /
``from_documents``, a LlamaIndex ``BaseEmbedding`` as the embedder, sync and async retrieval.

>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="a", text="Paris is in France."), Chunk(id="b", text="Rome is in Italy.")])
>>> nodes = LangragRetriever.from_backend(backend, mode="bm25", k=1).retrieve("Where is Rome?")
>>> nodes[0].node.node_id, nodes[0].node.get_content()
('b', 'Rome is in Italy.')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle, TextNode

from langrag_eval.contexts import sequence_of
from langrag_eval.embeddings import Embedder
from langrag_eval.retrieval.base import HybridSettings, Mode, Retriever, SearchBackend
from langrag_eval.retrieval.ingest import retriever_over
from langrag_eval.types import Document

from .models import as_embedder

__all__ = ["LangragRetriever", "as_embedder", "to_node"]


def to_node(doc: Document) -> NodeWithScore:
    """A langrag-eval ``Document`` as a scored LlamaIndex node (node id = chunk id)."""
    return NodeWithScore(node=TextNode(id_=doc.id, text=doc.text, metadata=dict(doc.metadata)),
                         score=doc.score)


class LangragRetriever(BaseRetriever):
    """Wraps a :class:`langrag_eval.retrieval.Retriever`; ``k`` (or LlamaIndex's name for it,
    ``similarity_top_k``) overrides the retriever's own ``k``."""

    def __init__(self, retriever: Retriever, *, k: int | None = None, similarity_top_k: int | None = None,
                 **kwargs: Any) -> None:
        self._langrag = retriever
        self._k = k if k is not None else similarity_top_k
        super().__init__(**kwargs)

    @classmethod
    def from_backend(cls, backend: SearchBackend, *, mode: Mode = "bm25",
                     embedder: Embedder | BaseEmbedding | None = None, k: int = 10,
                     hybrid: HybridSettings = HybridSettings(), **kwargs: Any) -> LangragRetriever:
        """Build the retriever and its wrapper in one step."""
        return cls(Retriever(backend, mode=mode, embedder=as_embedder(embedder), k=k, hybrid=hybrid), **kwargs)

    @classmethod
    def from_nodes(cls, nodes: Sequence[BaseNode | NodeWithScore], *, backend: SearchBackend | None = None,
                   mode: Mode = "bm25", embed_model: Embedder | BaseEmbedding | None = None,
                   similarity_top_k: int = 2, hybrid: HybridSettings = HybridSettings(),
                   **kwargs: Any) -> LangragRetriever:
        """Index LlamaIndex nodes (node ids and metadata kept) into ``backend`` (default: in-process)."""
        core = retriever_over(sequence_of(nodes, field="from_nodes(nodes)"), backend=backend, mode=mode,
                              embedder=as_embedder(embed_model),
                              k=similarity_top_k, hybrid=hybrid)
        return cls(core, **kwargs)

    @classmethod
    def from_documents(cls, documents: Sequence[BaseNode], **kwargs: Any) -> LangragRetriever:
        """LlamaIndex ``Document``\\ s indexed whole, one node each (split them first for chunks)."""
        return cls.from_nodes(sequence_of(documents, field="from_documents(documents)"), **kwargs)

    @property
    def retriever(self) -> Retriever:
        return self._langrag

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [to_node(d) for d in self._langrag.retrieve(query_bundle.query_str, self._k)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [to_node(d) for d in await self._langrag.aretrieve(query_bundle.query_str, self._k)]
