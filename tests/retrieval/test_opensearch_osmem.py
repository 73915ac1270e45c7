"""OpenSearch backend over real HTTP against osmem-server (see conftest.py for what it can and
cannot show): index creation, bulk ingestion with a failing item, BM25 rankings (never scores),
error mapping, and capability detection from its HTTP 400 "not supported" replies."""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request

import numpy as np
import pytest

from langrag_eval.errors import RetrievalError
from langrag_eval.retrieval import Chunk, HybridSettings, Retriever
from langrag_eval.retrieval.contract import BM25Contract
from langrag_eval.retrieval.opensearch import OpenSearchBackend


class TestOsmemBM25Contract(BM25Contract):
    """The shared contract's text part: BM25 rankings, ingestion and input errors."""

    @pytest.fixture
    def backend(self, osmem_url):
        backend = OpenSearchBackend(osmem_url, index="contract")
        yield backend
        backend.close()



DOCS = [
    Chunk(id="d1", text="The Seine flows through Paris.", metadata={"page": 1}),
    Chunk(id="d2", text="Paris hosts the Louvre museum and the Seine quays.", metadata={"page": 2}),
    Chunk(id="d3", text="Berlin lies on the Spree.", metadata={"page": 3}),
    Chunk(id="d4", text="Madrid is far from any sea.", metadata={"page": 4}),
]


def _get(url: str, path: str) -> dict:
    with urllib.request.urlopen(url + path) as reply:
        return json.loads(reply.read())


@pytest.fixture
def backend(osmem_url):
    b = OpenSearchBackend(osmem_url, index="docs")
    yield b
    b.close()


def test_index_is_created_with_text_and_knn_vector_fields(backend, osmem_url):
    report = backend.index(DOCS, np.eye(4, dtype=np.float32))
    assert report.indexed == 4 and report.failed == []
    props = _get(osmem_url, "/docs/_mapping")["docs"]["mappings"]["properties"]
    assert props["text"]["type"] == "text"
    vec = props["embedding"]
    assert (vec["type"], vec["dimension"], vec["space_type"]) == ("knn_vector", 4, "cosinesimil")
    assert (vec["method"]["name"], vec["method"]["engine"]) == ("hnsw", "faiss")
    assert backend.count() == 4


def test_text_only_index_has_no_vector_field(backend, osmem_url):
    backend.index(DOCS)
    props = _get(osmem_url, "/docs/_mapping")["docs"]["mappings"]["properties"]
    assert "embedding" not in props
    with pytest.raises(RetrievalError, match="no knn_vector field"):
        backend.search(vector=[1.0, 0.0], mode="knn")


def test_bulk_reports_the_failing_item_and_ingests_the_rest(backend):
    # "page" is mapped as a number by the first documents; a string there fails that item only.
    bad = Chunk(id="bad", text="The Seine again.", metadata={"page": "not a number"})
    report = backend.index([*DOCS[:2], bad, *DOCS[2:]])
    assert report.indexed == 4
    assert [fid for fid, _ in report.failed] == ["bad"]
    assert "metadata.page" in report.failed[0][1]
    assert backend.count() == 4
    assert "bad" not in [d.id for d in backend.search(text="Seine", k=10)]


def test_bm25_rankings_ids_and_fields(backend):
    backend.index(DOCS)
    hits = backend.search(text="Seine Paris", k=10)
    assert {d.id for d in hits} == {"d1", "d2"}
    assert hits[0].metadata["page"] in (1, 2) and hits[0].text in (DOCS[0].text, DOCS[1].text)
    assert [d.id for d in backend.search(text="Spree", k=10)] == ["d3"]
    assert backend.search(text="Tokyo", k=10) == []
    assert len(backend.search(text="the", k=1)) == 1


def test_async_and_sync_paths_agree_across_event_loops(backend):
    backend.index(DOCS)
    sync_ids = [d.id for d in backend.search(text="Seine Paris Spree", k=10)]
    for _ in range(2):  # a new loop each time: the async client must not be tied to one
        async_ids = asyncio.run(backend.asearch(text="Seine Paris Spree", k=10))
        assert [d.id for d in async_ids] == sync_ids
    assert asyncio.run(backend.acount()) == 4
    assert [d.id for d in Retriever(backend, k=1).retrieve("Spree")] == ["d3"]


async def test_concurrent_async_searches(backend):
    await backend.aindex(DOCS)
    results = await asyncio.gather(*[backend.asearch(text=q, k=1) for q in ("Seine", "Spree", "sea")] * 5)
    assert [r[0].id for r in results[:3]] == ["d1", "d3", "d4"]


def test_missing_index_is_a_typed_error(osmem_url):
    with OpenSearchBackend(osmem_url, index="nowhere") as b:
        with pytest.raises(RetrievalError, match="index 'nowhere' does not exist"):
            b.search(text="anything")
        assert b.count() == 0


def test_unreachable_cluster_is_a_typed_error(osmem_url):
    port = int(osmem_url.rsplit(":", 1)[1])
    with OpenSearchBackend(f"http://127.0.0.1:{port}", index="docs") as alive:
        alive.probe()  # the clone answers
    with OpenSearchBackend("http://127.0.0.1:9", index="docs", max_retries=0) as b:
        with pytest.raises(RetrievalError, match="cannot reach OpenSearch at http://127.0.0.1:9"):
            b.search(text="x")
        with pytest.raises(RetrievalError, match="cannot reach"):
            asyncio.run(b.asearch(text="x"))


def test_input_errors(backend):
    backend.index(DOCS, np.eye(4, dtype=np.float32))
    with pytest.raises(RetrievalError, match="empty query"):
        backend.search(text="  ")
    with pytest.raises(RetrievalError, match="dimension mismatch"):
        backend.index([Chunk(id="x", text="x")], np.ones((1, 3), np.float32))
    with pytest.raises(RetrievalError, match="dimension mismatch"):
        backend.search(vector=[1.0, 0.0, 0.0], mode="knn")


def test_version_is_read_from_the_server(backend):
    caps = backend.probe()
    assert caps.version is not None and caps.version >= (3, 0, 0)
    assert caps.unavailable == {}  # a 3.x version rules nothing out; replies decide the rest


def test_knn_not_supported_reply_is_detected(backend):
    backend.index(DOCS, np.eye(4, dtype=np.float32))
    with pytest.raises(RetrievalError, match="cannot run knn queries.*not supported"):
        backend.search(vector=[1.0, 0.0, 0.0, 0.0], mode="knn")
    assert "knn" in backend.capabilities.unavailable


@pytest.mark.parametrize("fusion", ["server_rrf", "normalization"])
def test_refused_search_pipeline_falls_back_with_a_logged_reason(backend, caplog, fusion):
    backend.index(DOCS, np.eye(4, dtype=np.float32))
    # The pipeline PUT gets HTTP 400; the client-side fallback then needs knn, which this
    # server also refuses: the fallback path is exercised, the hybrid result is not.
    with caplog.at_level(logging.WARNING, logger="langrag_eval.retrieval.opensearch"), \
            pytest.raises(RetrievalError, match="cannot run knn"):
        backend.search(text="Seine", vector=[1.0, 0.0, 0.0, 0.0], mode="hybrid",
                       hybrid=HybridSettings(fusion=fusion))  # type: ignore[arg-type]
    assert "search pipeline refused" in backend.fallbacks[fusion]
    assert "no handler found" in backend.capabilities.unavailable[fusion]
    assert any("fusing client-side" in r.getMessage() and fusion in r.getMessage() for r in caplog.records)


def test_hybrid_with_client_rrf_stops_at_the_unsupported_knn(backend):
    backend.index(DOCS, np.eye(4, dtype=np.float32))
    with pytest.raises(RetrievalError, match="cannot run knn"):
        backend.search(text="Seine", vector=[1.0, 0.0, 0.0, 0.0], mode="hybrid")
    with pytest.raises(RetrievalError, match="cannot run knn"):  # remembered: no second request
        backend.search(text="Seine", vector=[1.0, 0.0, 0.0, 0.0], mode="hybrid",
                       hybrid=HybridSettings(fusion="server_rrf"))
    assert backend.fallbacks == {}
