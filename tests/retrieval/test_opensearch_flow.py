"""Control flow of the OpenSearch backend with a scripted in-process client: which requests it
sends for each hybrid fusion, when it falls back to client-side fusion, and how it combines the
replies. The replies are canned, so nothing here says what a real cluster returns; the live suite
(test_opensearch_live.py) checks that against a cluster.
"""

from __future__ import annotations

import logging
from types import SimpleNamespace

import opensearchpy.exceptions as ose
import pytest

from langrag_eval.errors import RetrievalError
from langrag_eval.retrieval import HybridSettings, rrf
from langrag_eval.retrieval.fusion import combine_normalized
from langrag_eval.retrieval.opensearch import OpenSearchBackend

BM25 = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
KNN = [("c", 0.99), ("d", 0.8), ("a", 0.7)]
SERVER_FUSED = [("c", 0.0325), ("a", 0.0323)]


def _reply(pairs):
    return {"hits": {"hits": [{"_id": i, "_score": s, "_source": {"text": i.upper()}} for i, s in pairs]}}


class ScriptedClient:
    """Answers like a cluster of the given version; ``refuse`` maps an api name to an exception."""

    def __init__(self, version="3.1.0", refuse=None):
        self.calls: list[tuple[str, dict]] = []
        self.version, self.refuse = version, refuse or {}
        self.indices = SimpleNamespace(get_mapping=self._api("indices.get_mapping"),
                                       exists=self._api("indices.exists"))
        self.search_pipeline = SimpleNamespace(put=self._api("search_pipeline.put"))
        self.info, self.search = self._api("info"), self._api("search")

    def _api(self, name):
        def call(**kwargs):
            self.calls.append((name, kwargs))
            if name in self.refuse:
                raise self.refuse[name]
            if name == "info":
                return {"version": {"number": self.version, "distribution": "opensearch"}}
            if name == "indices.get_mapping":
                return {"i": {"mappings": {"properties": {"embedding": {"type": "knn_vector", "dimension": 2}}}}}
            if name == "search":
                query = kwargs["body"]["query"]
                return _reply(SERVER_FUSED if "hybrid" in query else BM25 if "match" in query else KNN)
            return {"acknowledged": True}
        return call

    def names(self):
        return [name for name, _ in self.calls]


def _backend(client):
    return OpenSearchBackend(index="i", client=client)


def _hybrid(backend, fusion, **kw):
    return backend.search(text="q", vector=[1.0, 0.0], mode="hybrid", k=3,
                          hybrid=HybridSettings(fusion=fusion, depth=3, **kw))


def test_server_rrf_creates_the_pipeline_once_and_searches_through_it():
    client = ScriptedClient()
    backend = _backend(client)
    docs = _hybrid(backend, "server_rrf")
    assert [(d.id, d.score) for d in docs] == SERVER_FUSED
    _hybrid(backend, "server_rrf")
    assert client.names().count("search_pipeline.put") == 1
    put = dict(client.calls)["search_pipeline.put"]
    assert put["id"] == "langrag-rrf-k60"
    search = [kw for name, kw in client.calls if name == "search"][-1]
    assert search["search_pipeline"] == "langrag-rrf-k60" and "hybrid" in search["body"]["query"]
    assert backend.fallbacks == {}


def test_normalization_pipeline_sends_weights_summing_to_one():
    client = ScriptedClient()
    _hybrid(_backend(client), "normalization", weights=(1.0, 3.0), normalization="l2")
    put = dict(client.calls)["search_pipeline.put"]
    proc = put["body"]["phase_results_processors"][0]["normalization-processor"]
    assert proc["normalization"] == {"technique": "l2"}
    assert proc["combination"]["parameters"]["weights"] == [0.25, 0.75]


def test_client_rrf_fuses_the_two_sub_results():
    client = ScriptedClient()
    docs = _hybrid(_backend(client), "rrf")
    expected = rrf([[i for i, _ in BM25], [i for i, _ in KNN]], k=60)[:3]
    assert [d.id for d in docs] == [i for i, _ in expected]
    assert [d.score for d in docs] == pytest.approx([s for _, s in expected])
    assert "search_pipeline.put" not in client.names() and "info" not in client.names()


def test_old_server_falls_back_without_trying_the_pipeline(caplog):
    client = ScriptedClient(version="2.15.0")
    backend = _backend(client)
    with caplog.at_level(logging.WARNING, logger="langrag_eval.retrieval.opensearch"):
        docs = _hybrid(backend, "server_rrf")
    assert "search_pipeline.put" not in client.names()
    assert [d.id for d in docs] == [i for i, _ in rrf([[i for i, _ in BM25], [i for i, _ in KNN]])[:3]]
    assert "2.19" in backend.fallbacks["server_rrf"]
    assert "fusing client-side with RRF" in caplog.text
    # normalization exists since 2.10, so a 2.15 server is asked for it
    _hybrid(backend, "normalization")
    assert "search_pipeline.put" in client.names()


def test_refused_hybrid_query_falls_back_to_client_normalization():
    refusal = ose.RequestError(400, "parsing_exception",
                               {"error": {"type": "parsing_exception", "reason": "unknown query [hybrid]"}})
    client = ScriptedClient()
    client.search = _refusing_hybrid(client, refusal)
    backend = _backend(client)
    docs = _hybrid(backend, "normalization", weights=(0.4, 0.6))
    expected = combine_normalized([BM25, KNN], weights=(0.4, 0.6))[:3]
    assert [d.id for d in docs] == [i for i, _ in expected]
    assert [d.score for d in docs] == pytest.approx([s for _, s in expected])
    assert "unknown query [hybrid]" in backend.capabilities.unavailable["hybrid"]


def _refusing_hybrid(client, refusal):
    plain = client.search

    def search(**kwargs):
        if "hybrid" in kwargs["body"]["query"]:
            client.calls.append(("search", kwargs))
            raise refusal
        return plain(**kwargs)
    return search


def test_other_errors_are_not_mistaken_for_missing_features():
    refusal = ose.AuthorizationException(403, "security_exception", {"error": {"type": "security_exception"}})
    backend = _backend(ScriptedClient(refuse={"search_pipeline.put": refusal}))
    with pytest.raises(RetrievalError, match="HTTP 403"):
        _hybrid(backend, "server_rrf")
    assert backend.fallbacks == {}


def test_server_results_are_cut_to_k():
    client = ScriptedClient()
    docs = OpenSearchBackend(index="i", client=client).search(
        text="q", vector=[1.0, 0.0], mode="hybrid", k=1, hybrid=HybridSettings(fusion="server_rrf"))
    assert [d.id for d in docs] == ["c"]
    body = next(kw for n, kw in client.calls if n == "search")["body"]
    # 50 hits per sub-query; the knn one visits knn_candidates (100), as a plain knn search does
    assert body["size"] == 50 and body["query"]["hybrid"]["queries"][1]["knn"]["embedding"]["k"] == 100


async def test_async_api_with_only_a_sync_client_given():
    client = ScriptedClient()
    docs = await OpenSearchBackend(index="i", client=client).asearch(text="q", k=2)
    assert [d.id for d in docs] == ["a", "b", "c"]  # the scripted reply, uncut: size is the server's job
    assert client.calls[0][1]["body"]["size"] == 2
