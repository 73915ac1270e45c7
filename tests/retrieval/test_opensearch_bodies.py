"""Request bodies and reply parsing of the OpenSearch backend, checked without a server against the
shapes documented for OpenSearch 2.19/3.x (index with knn_vector, match, knn, hybrid, score-ranker
and normalization pipelines). These show the requests are well formed, not what a cluster returns.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from langrag_eval.errors import ConfigError, RetrievalError
from langrag_eval.retrieval import Chunk
from langrag_eval.retrieval import opensearch_requests as osr
from langrag_eval.retrieval.opensearch import OpenSearchBackend
from langrag_eval.retrieval.opensearch_transport import Call, split_credentials, to_retrieval_error


def test_index_body_matches_the_documented_knn_mapping():
    assert osr.index_body(dimension=768) == {
        "settings": {"index": {"knn": True}},
        "mappings": {"properties": {
            "text": {"type": "text"},
            "metadata": {"type": "object"},
            "embedding": {"type": "knn_vector", "dimension": 768, "space_type": "cosinesimil",
                          "method": {"name": "hnsw", "engine": "faiss",
                                     "parameters": {"ef_construction": 128, "m": 16}}}}}}
    lucene = osr.index_body(dimension=4, engine="lucene", space_type="l2", shards=1)
    assert lucene["mappings"]["properties"]["embedding"]["method"]["engine"] == "lucene"
    assert lucene["mappings"]["properties"]["embedding"]["space_type"] == "l2"
    assert lucene["settings"]["index"] == {"knn": True, "number_of_shards": 1}


@pytest.mark.parametrize("engine,space,message", [
    ("nmslib", "cosinesimil", "nmslib.*OpenSearch 3.0"),
    ("annoy", "cosinesimil", "unknown"),
    ("faiss", "hamming2", "unknown"),
])
def test_refused_engines_and_spaces(engine, space, message):
    with pytest.raises(ConfigError, match=message):
        osr.index_body(dimension=4, engine=engine, space_type=space)
    with pytest.raises(ConfigError, match=message):
        OpenSearchBackend("http://localhost:9200", engine=engine, space_type=space)


def test_match_and_knn_bodies():
    body = osr.match_body("capital of france", size=10)
    assert body["size"] == 10 and body["query"] == {"match": {"text": {"query": "capital of france"}}}
    body = osr.knn_body(np.array([0.1, 0.2, 0.3], dtype=np.float32), k=10)
    assert body["size"] == 10
    assert body["query"]["knn"]["embedding"]["k"] == 10
    assert body["query"]["knn"]["embedding"]["vector"] == pytest.approx([0.1, 0.2, 0.3])
    assert set(body["query"]["knn"]["embedding"]) == {"vector", "k"}  # exactly one of k/max_distance/min_score
    json.dumps(body)  # numpy floats were converted
    assert body["_source"] == {"excludes": ["embedding"]}  # vectors are not shipped back


@pytest.mark.parametrize("k", [0, 10_001])
def test_knn_k_range(k):
    with pytest.raises(ConfigError, match="between 1 and 10000"):
        osr.knn_body([0.1], k=k)


def test_knn_refuses_nan_vectors():
    with pytest.raises(ConfigError, match="NaN"):
        osr.knn_body([0.1, float("nan")], k=3)


def test_hybrid_body_matches_the_documented_shape():
    body = osr.hybrid_body("capital of france", [0.1, 0.2, 0.3], size=50, depth=50)
    assert body["size"] == 50
    assert body["query"] == {"hybrid": {"queries": [
        {"match": {"text": {"query": "capital of france"}}},
        {"knn": {"embedding": {"vector": [0.1, 0.2, 0.3], "k": 50}}}]}}
    assert len(body["query"]["hybrid"]["queries"]) <= 5


def test_rrf_pipeline_body():
    assert osr.rrf_pipeline_body(rank_constant=60)["phase_results_processors"] == [
        {"score-ranker-processor": {"combination": {"technique": "rrf", "rank_constant": 60}}}]
    weighted = osr.rrf_pipeline_body(rank_constant=20, weights=(1.0, 3.0))
    comb = weighted["phase_results_processors"][0]["score-ranker-processor"]["combination"]
    assert comb == {"technique": "rrf", "rank_constant": 20, "parameters": {"weights": [0.25, 0.75]}}
    for bad in (0, 10_001):
        with pytest.raises(ConfigError):
            osr.rrf_pipeline_body(rank_constant=bad)


@pytest.mark.parametrize("technique", ["min_max", "l2"])
def test_normalization_pipeline_body(technique):
    body = osr.normalization_pipeline_body(technique=technique, weights=(0.3, 0.7))
    assert body["phase_results_processors"] == [{"normalization-processor": {
        "normalization": {"technique": technique},
        "combination": {"technique": "arithmetic_mean", "parameters": {"weights": [0.3, 0.7]}}}}]


def test_normalization_weights_sum_to_one():
    weights = osr.normalization_pipeline_body(weights=(1.0, 1.0))[
        "phase_results_processors"][0]["normalization-processor"]["combination"]["parameters"]["weights"]
    assert weights == [0.5, 0.5] and sum(weights) == pytest.approx(1.0)
    assert sum(osr.sum_to_one((1.0, 2.0))) == pytest.approx(1.0)
    with pytest.raises(ConfigError):
        osr.sum_to_one((0.0, 0.0))
    with pytest.raises(ConfigError, match="min_max"):
        osr.normalization_pipeline_body(technique="z_score")


def test_pipeline_ids_are_stable_and_distinct():
    a = osr.pipeline_id(osr.rrf_pipeline_body(rank_constant=60))
    assert a == osr.pipeline_id(osr.rrf_pipeline_body(rank_constant=60, weights=(2.0, 2.0)))
    ids = {a, osr.pipeline_id(osr.rrf_pipeline_body(rank_constant=10)),
           osr.pipeline_id(osr.rrf_pipeline_body(rank_constant=60, weights=(1, 3))),
           osr.pipeline_id(osr.normalization_pipeline_body(technique="l2")),
           osr.pipeline_id(osr.normalization_pipeline_body(technique="min_max", weights=(1, 3)))}
    assert len(ids) == 5 and all(i.startswith("langrag-") for i in ids)


def test_bulk_body_and_failures():
    chunks = [Chunk(id="a", text="x", metadata={"p": 1}), Chunk(id="b", text="y")]
    lines = osr.bulk_body(chunks, np.array([[1, 0], [0, 1]], dtype=np.float32))
    assert lines == [{"index": {"_id": "a"}}, {"text": "x", "metadata": {"p": 1}, "embedding": [1.0, 0.0]},
                     {"index": {"_id": "b"}}, {"text": "y", "metadata": {}, "embedding": [0.0, 1.0]}]
    reply = {"errors": True, "items": [
        {"index": {"_id": "a", "status": 201, "result": "created"}},
        {"index": {"_id": "b", "status": 400, "error": {
            "type": "mapper_parsing_exception", "reason": "failed to parse field [embedding]",
            "caused_by": {"type": "illegal_argument_exception", "reason": "Vector dimension mismatch"}}}},
        {"index": {"_id": "c", "status": 429, "error": {"type": "es_rejected_execution_exception",
                                                      "reason": "queue full"}}}]}
    assert osr.bulk_failures(reply) == [
        ("b", "mapper_parsing_exception: failed to parse field [embedding] (Vector dimension mismatch)"),
        ("c", "es_rejected_execution_exception: queue full")]


def test_checked_batch():
    chunks = [Chunk(id="a", text="x"), Chunk(id="b", text=""), Chunk(id="c", text="z")]
    kept, rows, failed = osr.checked_batch(chunks, np.array([[1, 0], [0, 1], [np.inf, 0]]))
    assert [c.id for c in kept] == ["a"] and rows.tolist() == [[1.0, 0.0]]
    assert [i for i, _ in failed] == ["b", "c"] and "no text" in failed[0][1]
    with pytest.raises(RetrievalError, match="dimension mismatch"):
        osr.checked_batch(chunks, np.ones((2, 4)))


def test_hits_and_mapping_parsing():
    reply = {"hits": {"hits": [
        {"_id": "a", "_score": 2.5, "_source": {"text": "A", "metadata": {"k": 1}}},
        {"_id": "b", "_score": 1.0, "_source": {"text": "B"}}]}}
    docs = osr.hits_to_documents(reply)
    assert [(d.id, d.text, d.score, d.metadata) for d in docs] == [("a", "A", 2.5, {"k": 1}),
                                                                   ("b", "B", 1.0, {})]
    assert osr.mapped_dimension({"i": {"mappings": {"properties": {"text": {"type": "text"}}}}}) is None


@pytest.mark.parametrize("info,version", [
    ({"version": {"number": "3.0.0", "distribution": "opensearch"}}, (3, 0, 0)),
    ({"version": {"number": "2.19.2-SNAPSHOT", "distribution": "opensearch"}}, (2, 19, 2)),
    ({"version": {"number": "8.15.0"}, "tagline": "You Know, for Search"}, None),
    ({"version": {"number": "8.15.0", "distribution": "elasticsearch"}}, None),
    ({}, None),
])
def test_parse_version(info, version):
    assert osr.parse_version(info) == version


def test_version_limits():
    assert osr.version_limits((3, 1, 0)) == {}
    assert set(osr.version_limits((2, 19, 0))) == {"server_rrf_weights"}
    assert set(osr.version_limits((3, 0, 5))) == {"server_rrf_weights"}
    assert set(osr.version_limits((2, 18, 0))) == {"server_rrf", "faiss_cosinesimil"}
    assert set(osr.version_limits((2, 9, 0))) == {"hybrid", "server_rrf", "faiss_cosinesimil"}
    assert osr.version_limits(None) == {}


@pytest.mark.parametrize("status,info,expected", [
    (400, {"error": {"type": "unsupported_operation_exception",
                     "reason": "[knn] query is not supported by osmem"}}, True),
    (400, {"error": {"type": "parsing_exception", "reason": "unknown query [hybrid]"}}, True),
    (400, {"error": "no handler found for uri [/_search/pipeline/p] and method [PUT]"}, True),
    (400, {"error": {"type": "illegal_argument_exception",
                     "reason": "Invalid processor type score-ranker-processor"}}, True),
    (400, {"error": {"type": "illegal_argument_exception", "reason": "vector dimension mismatch"}}, False),
    (500, {"error": {"type": "x", "reason": "not supported"}}, False),
])
def test_says_unsupported(status, info, expected):
    assert osr.says_unsupported(status, info) is expected


def test_credentials_are_split_from_the_url_and_hidden(monkeypatch):
    assert split_credentials("https://u:p%40ss@h.example:9200") == ("https://h.example:9200", "u", "p@ss")
    monkeypatch.setenv("OPENSEARCH_URL", "https://cluster.example:9200")
    monkeypatch.setenv("OPENSEARCH_USER", "reader")
    monkeypatch.setenv("OPENSEARCH_PASSWORD", "s3cr3t-pw")
    backend = OpenSearchBackend(index="docs")
    assert backend.url == "https://cluster.example:9200" and backend.verify_certs is True
    assert "s3cr3t-pw" not in repr(backend) and "s3cr3t-pw" not in repr(vars(backend))
    assert backend._options()["http_auth"] == ("reader", "s3cr3t-pw")
    backend = OpenSearchBackend("https://admin:hunter2@h.example:9200", index="docs")
    assert "hunter2" not in repr(backend) and "hunter2" not in backend.url
    monkeypatch.delenv("OPENSEARCH_PASSWORD")
    with pytest.raises(ConfigError, match="without a password"):
        OpenSearchBackend(index="docs")


def test_configuration_errors(monkeypatch):
    monkeypatch.delenv("OPENSEARCH_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENSEARCH_URL"):
        OpenSearchBackend()
    for url in ("localhost:9200", "ftp://h", "https://"):
        with pytest.raises(ConfigError, match="https://host:9200"):
            OpenSearchBackend(url)
    with pytest.raises(ConfigError, match="lowercase"):
        OpenSearchBackend("http://localhost:9200", index="Docs")


def _transport_error(cls_name: str, status, error, info):
    import opensearchpy.exceptions as exc
    return getattr(exc, cls_name)(status, error, info)


@pytest.mark.parametrize("cls_name,status,error,info,message", [
    ("AuthenticationException", 401, "security_exception", {"error": {"type": "security_exception"}},
     "refused the credentials.*OPENSEARCH_USER"),
    ("AuthorizationException", 403, "security_exception", {}, "not allowed to run a BM25 search on index"),
    ("NotFoundError", 404, "index_not_found_exception",
     {"error": {"type": "index_not_found_exception", "reason": "no such index [docs]"}},
     "index 'docs' does not exist"),
    ("ConnectionError", "N/A", "Connection refused", None, "cannot reach OpenSearch.*connection refused"),
    ("SSLError", "N/A", "CERTIFICATE_VERIFY_FAILED", None, "TLS handshake.*ca_certs"),
    ("RequestError", 400, "illegal_argument_exception",
     {"error": {"type": "illegal_argument_exception", "reason": "bad"}}, r"HTTP 400\): illegal_argument"),
])
def test_error_mapping_says_what_to_fix(cls_name, status, error, info, message):
    exc = _transport_error(cls_name, status, error, info)
    err = to_retrieval_error(exc, Call("search", {}, "run a BM25 search"),
                             url="https://h.example:9200", index="docs")
    assert isinstance(err, RetrievalError)
    assert __import__("re").search(message, str(err)), str(err)
