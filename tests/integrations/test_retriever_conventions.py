"""Retrievers following their framework's conventions: per-call ``k`` and search arguments (unknown
ones refused), ``from_documents`` / ``from_texts`` / ``from_nodes`` keeping ids and metadata,
framework embedding objects adapted (not failing at the first query), async retrieval, and ingest
keeping the user's own ``metadata["source"]``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("llama_index.core")

from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_langrag import LangragRetriever as LCRetriever
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import TextNode
from llama_index.evaluation.langrag import LangragRetriever as LIRetriever

from langrag_eval.errors import ConfigError
from langrag_eval.retrieval import EmbeddedBackend, Retriever
from langrag_eval.retrieval.chunking import Source, chunk_sources

TEXTS = [f"Sensor model {i} measures pressure and temperature." for i in range(8)]


def test_per_call_k_mode_and_unknown_arguments() -> None:
    r = LCRetriever.from_texts(TEXTS, ids=[f"s{i}" for i in range(8)], k=2)
    assert len(r.invoke("sensor pressure")) == 2
    assert len(r.invoke("sensor pressure", k=5)) == 5
    assert len(r.batch(["sensor", "pressure"], k=3)[1]) == 3
    with pytest.raises(ConfigError, match="unknown search argument.*filter"):
        r.invoke("sensor", filter={"lang": "en"})
    with pytest.raises(ConfigError, match="unknown search argument.*score_threshold"):
        LCRetriever(retriever=r.retriever, search_kwargs={"score_threshold": 0.5})
    with pytest.raises(ConfigError, match="k must be"):
        r.invoke("sensor", k=0)


async def test_langchain_embeddings_work_from_construction_to_async_query() -> None:
    r = LCRetriever.from_documents([LCDocument(page_content=t, id=f"s{i}", metadata={"source": f"{i}.pdf"})
                                    for i, t in enumerate(TEXTS)],
                                   mode="knn", embedder=DeterministicFakeEmbedding(size=8), k=3)
    sync_docs, async_docs = r.invoke("Sensor model 3"), await r.ainvoke("Sensor model 3")
    assert [d.id for d in sync_docs] == [d.id for d in async_docs] and len(sync_docs) == 3
    assert all(d.metadata["source"] == f"{d.id[1:]}.pdf" for d in sync_docs)
    assert [d.id for d in await r.ainvoke("Sensor model 3", k=1)] == [sync_docs[0].id]


def test_llamaindex_from_nodes_with_a_base_embedding() -> None:
    nodes = [TextNode(text=t, id_=f"n{i}", metadata={"source": f"{i}.md"}) for i, t in enumerate(TEXTS)]
    r = LIRetriever.from_nodes(nodes, mode="hybrid", embed_model=MockEmbedding(embed_dim=8), similarity_top_k=3)
    got = r.retrieve("Sensor model 5 pressure")
    assert len(got) == 3 and all(n.node.metadata["source"] == f"{n.node.node_id[1:]}.md" for n in got)
    backend = EmbeddedBackend()
    wrapped = LIRetriever.from_backend(backend, mode="knn", embedder=MockEmbedding(embed_dim=8))
    assert wrapped.retriever.embedder.dimension == 8  # adapted, usable before any query


def test_a_framework_embedding_the_core_cannot_use_is_refused_at_construction() -> None:
    with pytest.raises(ConfigError, match="DeterministicFakeEmbedding has no embed"):
        Retriever(EmbeddedBackend(), mode="knn", embedder=DeterministicFakeEmbedding(size=4))


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from(["source", "lang", "url", "chunk_index"]),
                       st.text(min_size=1, max_size=10), max_size=4))
def test_chunking_keeps_the_users_source(meta: dict) -> None:
    chunks = chunk_sources([Source(id="doc-1", text="One sentence. " * 60, metadata=meta)], size=200, overlap=20)
    for c in chunks:
        assert c.metadata["source"] == meta.get("source", "doc-1")
        assert c.id.startswith("doc-1#")
        assert {k: v for k, v in c.metadata.items() if k in meta and k != "chunk_index"} == \
            {k: v for k, v in meta.items() if k != "chunk_index"}
