"""Live suite: the OpenSearch backend against a real cluster, compared with the embedded backend.

By default it runs against a local single node that the session fixture ``opensearch_cluster``
(tests/retrieval/conftest.py) starts with scripts/opensearch-node: OpenSearch 2.19.1 from Maven
Central jars with the k-NN (Lucene engine) and neural-search plugins. To run it against a cluster
of your own instead (3.x is the target; 2.19+ works):

    export OPENSEARCH_URL=https://localhost:9200
    export OPENSEARCH_USER=admin OPENSEARCH_PASSWORD='...'   # if the security plugin is on
    export OPENSEARCH_CA_CERTS=/path/to/root-ca.pem            # self-signed TLS; or, test clusters
    # only: export OPENSEARCH_INSECURE=1 (no certificate check)
    export OPENSEARCH_ENGINE=faiss                             # knn engine (default lucene)
    python -m pytest -m opensearch_live tests/retrieval -v

The suite creates indexes named ``langrag-live-<random>`` (one shard, so BM25 statistics are
global) and deletes them afterwards. The test network guard (tests/conftest.py) stays on for every
other host; only the host of the cluster is let through, and only while a live module runs
(the ``cluster`` fixture, tests/retrieval/conftest.py).

What it checks, on one corpus and one set of queries for both backends (the node is the oracle):
- BM25 ids and scores equal to the embedded backend's to float32 rounding (2.x scores with Lucene's
  legacy BM25, every score times k1 + 1 = 2.2; 3.x with the standard one);
- knn recall@10 >= 0.99 against exact brute-force search (knn_candidates=100, the default);
- the server's RRF (hybrid query + score-ranker pipeline) and normalization pipeline equal to
  client-side fusion over the server's own BM25 and knn sub-results, ids and scores; the server's
  normalization pipeline equal to the embedded backend's hybrid search and to the OpenSearch
  backend's client-side fallback;
- a weighted score-ranker pipeline refused or ranked as the unweighted one exactly on the versions
  our limits rule out (the server decides); weighted server_rrf there falls back, weighted, with
  one warning, and differs from the server's unweighted RRF;
- the whole shared backend contract (BM25, knn, hybrid with all three fusions).
Hybrid tests skip, naming the plugin, where neural-search is not loaded; knn tests likewise for
the k-NN plugin, except where servers are required (LANGRAG_REQUIRE_SERVERS=1, CI): they fail.
"""

from __future__ import annotations

import os
import uuid
from types import SimpleNamespace

import numpy as np
import pytest

from langrag_eval.retrieval import Chunk, EmbeddedBackend, HybridSettings, combine_normalized, rrf
from langrag_eval.retrieval.contract import BackendContract

pytestmark = [pytest.mark.opensearch_live]

# The knn engine of the live indexes: lucene (pure Java, on every cluster and on the local node);
# faiss where the cluster has its native library.
ENGINE = os.environ.get("OPENSEARCH_ENGINE", "lucene")

DIM = 32
N_DOCS = 1500
WORDS = ["river", "capital", "mountain", "harbour", "museum", "bridge", "festival", "market", "garden", "castle", "forest", "island", "railway", "library", "theatre", "cathedral", "valley", "desert", "glacier", "volcano", "lake", "canal", "palace", "tower", "stadium", "university", "airport", "harbourfront", "vineyard", "meadow"]


def _corpus(seed: int = 7) -> tuple[list[Chunk], np.ndarray]:
    rng = np.random.default_rng(seed)
    chunks = []
    for i in range(N_DOCS):
        n = int(rng.integers(5, 60))  # short and long documents
        words = rng.choice(WORDS, size=n, p=_zipf(len(WORDS)))
        chunks.append(Chunk(id=f"doc-{i:05d}", text=" ".join(words), metadata={"n": n}))
    vectors = rng.standard_normal((N_DOCS, DIM)).astype(np.float32)
    return chunks, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _zipf(n: int) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1)
    return p / p.sum()


QUERIES = ["river capital", "glacier volcano lake", "museum", "palace tower garden", "vineyard meadow",
           "railway airport", "castle forest island", "theatre library university", "canal bridge"]


def _live_backend(cluster, **kwargs):
    from langrag_eval.retrieval.opensearch import OpenSearchBackend
    kwargs.setdefault("engine", ENGINE)
    return OpenSearchBackend(cluster.url, index=f"langrag-live-{uuid.uuid4().hex[:10]}", shards=1,
                             **cluster.backend_options(), **kwargs)


@pytest.fixture(scope="module")
def both(cluster):
    """The same corpus in the embedded backend and in a fresh OpenSearch index (text only where the
    k-NN plugin is missing: BM25 still runs; the tests that need vectors skip naming the plugin)."""
    chunks, vectors = _corpus()
    embedded = EmbeddedBackend()
    embedded.index(chunks, vectors)
    live = _live_backend(cluster)
    report = live.index(chunks, None if "opensearch-knn" in cluster.missing else vectors)
    assert report.failed == [] and report.indexed == N_DOCS
    yield embedded, live, chunks, vectors
    live.delete_index()
    live.close()


def _same_ranking(got, expected, *, scores: bool, rel=1e-4):
    """Ids equal rank by rank except among documents whose expected scores tie (``expected`` may
    be longer than ``got`` so a tie across the cut-off is seen whole); with ``scores``, the
    scores too."""
    assert len(expected) >= len(got)
    for i, doc in enumerate(got):
        ref = expected[i]
        if scores:
            assert doc.score == pytest.approx(ref.score, rel=rel), f"rank {i + 1}: {doc.score} vs {ref.score}"
        tied = {d.id for d in expected if d.score == pytest.approx(ref.score, rel=rel)}
        assert doc.id == ref.id or doc.id in tied, f"rank {i + 1}: {doc.id} vs {ref.id}"


def test_bm25_equals_the_embedded_backend(both):
    embedded, live, _, _ = both
    version = live.probe().version
    # 2.x scores with Lucene's legacy BM25, which multiplies every score by k1 + 1 = 2.2.
    scale = 1.0 if version is None or version >= (3, 0, 0) else 2.2
    for query in QUERIES:
        got = live.search(text=query, k=10)
        assert len(got) == 10, query
        expected = [SimpleNamespace(id=d.id, score=d.score * scale) for d in embedded.search(text=query, k=50)]
        _same_ranking(got, expected, scores=True, rel=2e-6)  # float32 rounding


def test_knn_recall_at_10_against_exact_search(both, cluster):
    cluster.require("opensearch-knn")
    _, live, chunks, vectors = both
    rng = np.random.default_rng(21)
    queries = rng.standard_normal((50, DIM)).astype(np.float32)
    found = 0
    for q in queries:
        exact = {chunks[i].id for i in np.argsort(-(vectors @ (q / np.linalg.norm(q))))[:10]}
        found += len(exact & {d.id for d in live.search(vector=q.tolist(), mode="knn", k=10)})
    recall = found / (10 * len(queries))
    assert recall >= 0.99, recall


def test_server_rrf_equals_client_rrf_over_the_servers_sub_results(both, cluster):
    cluster.require("opensearch-knn")
    cluster.require("neural-search")
    _, live, _, vectors = both
    version = live.probe().version
    if version is not None and version < (2, 19, 0):
        pytest.skip(f"the score-ranker processor needs OpenSearch 2.19+, the cluster is {version}")
    settings = HybridSettings(fusion="server_rrf", rank_constant=60, depth=20)
    for i, query in enumerate(QUERIES):
        vector = vectors[i * 7].tolist()
        lexical = live.search(text=query, k=settings.depth)
        dense = live.search(vector=vector, mode="knn", k=settings.depth)
        expected = rrf([[d.id for d in lexical], [d.id for d in dense]], k=settings.rank_constant)
        got = live.search(text=query, vector=vector, mode="hybrid", k=10, hybrid=settings)
        assert live.fallbacks == {}, f"the cluster did not run server-side RRF: {live.fallbacks}"
        assert len(got) == 10, query
        _same_ranking(got, [SimpleNamespace(id=d, score=s) for d, s in expected], scores=True)


def _sub_results(live, query, vector, depth):
    lexical = live.search(text=query, k=depth)
    dense = live.search(vector=vector, mode="knn", k=depth)
    return [[(d.id, d.score) for d in lexical], [(d.id, d.score) for d in dense]]


def test_server_normalization_counts_a_missing_document_as_zero(both, cluster):
    """The server's normalization pipeline is the oracle for combine_normalized's default rule."""
    cluster.require("opensearch-knn")
    cluster.require("neural-search")
    _, live, _, vectors = both
    settings = HybridSettings(fusion="normalization", weights=(0.3, 0.7), depth=20)
    discriminating = 0
    for i, query in enumerate(QUERIES):
        vector = vectors[i * 11].tolist()
        subs = _sub_results(live, query, vector, settings.depth)
        got = live.search(text=query, vector=vector, mode="hybrid", k=10, hybrid=settings)
        assert live.fallbacks == {}, live.fallbacks
        zero = combine_normalized(subs, weights=settings.weights)
        skip = combine_normalized(subs, weights=settings.weights, missing="skip")
        _same_ranking(got, [SimpleNamespace(id=d, score=s) for d, s in zero], scores=True)
        discriminating += [d for d, _ in zero[:10]] != [d for d, _ in skip[:10]]
    assert discriminating > 0, "no query tells the two rules apart"


def test_embedded_and_client_side_normalization_equal_the_servers(both, cluster):
    """Both places our normalization rule runs, against the server's normalization pipeline: the
    embedded backend on the same corpus (min_max does not see Lucene 2.x's BM25 scale nor the
    (1 + cos) / 2 of cosinesimil), and the OpenSearch backend's client-side fallback."""
    from langrag_eval.retrieval.opensearch import OpenSearchBackend
    cluster.require("opensearch-knn")
    cluster.require("neural-search")
    embedded, live, _, vectors = both
    settings = HybridSettings(fusion="normalization", weights=(0.3, 0.7), depth=20)
    fallback = OpenSearchBackend(cluster.url, index=live.index_name, engine=ENGINE, **cluster.backend_options())
    fallback.capabilities.unavailable["normalization"] = "turned off to check the client-side fusion"
    try:
        for i, query in enumerate(QUERIES):
            vector = vectors[i * 13].tolist()
            server = live.search(text=query, vector=vector, mode="hybrid", k=10, hybrid=settings)
            assert live.fallbacks == {}, live.fallbacks
            expected = [SimpleNamespace(id=d.id, score=d.score) for d in server]
            for backend in (fallback, embedded):
                got = backend.search(text=query, vector=vector, mode="hybrid", k=10, hybrid=settings)
                _same_ranking(got[:9], expected, scores=True)  # the 10th may tie past the server's cut
        assert "normalization" in fallback.fallbacks  # the client-side path did run
    finally:
        fallback.close()


def _server_rrf(live, query, vector, *, weights, depth=20):
    """The server's own RRF of the hybrid query, through a score-ranker pipeline built here (with
    ``weights`` when given): the ranked ids, or None when the server refuses the pipeline."""
    from opensearchpy.exceptions import RequestError

    from langrag_eval.retrieval import opensearch_requests as osr
    body = osr.rrf_pipeline_body(rank_constant=60, weights=weights)
    pid = f"langrag-live-rrf-{uuid.uuid4().hex[:8]}"
    client = live._sync_client()
    try:
        client.search_pipeline.put(id=pid, body=body)
    except RequestError:
        return None
    try:
        query_body = osr.hybrid_body(query, vector, size=depth, depth=depth, knn_k=100)
        reply = client.search(index=live.index_name, body=query_body, search_pipeline=pid)
        return [hit["_id"] for hit in reply["hits"]["hits"]][:10]
    finally:
        client.search_pipeline.delete(id=pid)


def test_the_server_applies_rrf_weights_only_where_its_version_says(both, cluster):
    """The oracle for the server_rrf_weights limit is the server: a weighted score-ranker pipeline
    is refused (2.19) or ranks as the unweighted one (3.0) exactly where the reported version is
    ruled out; from 3.1 the weights change the ranking."""
    from langrag_eval.retrieval import opensearch_requests as osr
    cluster.require("opensearch-knn")
    cluster.require("neural-search")
    _, live, _, vectors = both
    version = live.probe().version
    if version is None or version < (2, 19, 0):
        pytest.skip(f"the score-ranker processor needs OpenSearch 2.19+, the cluster is {version}")
    ruled_out = "server_rrf_weights" in osr.version_limits(version)
    refused = applied = 0
    for i, query in enumerate(QUERIES):
        vector = vectors[i * 5].tolist()
        weighted = _server_rrf(live, query, vector, weights=(0.05, 0.95))
        if weighted is None:
            refused += 1
            continue
        applied += weighted != _server_rrf(live, query, vector, weights=None)
    if ruled_out:
        assert applied == 0, f"OpenSearch {version} applied RRF weights; lift the limit for it"
    else:
        assert refused == 0 and applied > 0, f"OpenSearch {version} does not apply RRF weights"


def test_weighted_server_rrf_falls_back_with_one_warning(both, cluster, caplog):
    """neural-search 2.19-3.0 does not apply RRF weights: the backend fuses client-side (weighted)
    and says so once, never returning unweighted RRF."""
    cluster.require("opensearch-knn")
    cluster.require("neural-search")
    _, live, _, vectors = both
    version = live.probe().version
    if version is not None and version >= (3, 1, 0):
        pytest.skip(f"OpenSearch {version} applies RRF weights")
    settings = HybridSettings(fusion="server_rrf", weights=(0.2, 0.8), depth=20)
    with caplog.at_level("WARNING", logger="langrag_eval.retrieval.opensearch"):
        for i, query in enumerate(QUERIES[:3]):
            vector = vectors[i].tolist()
            subs = _sub_results(live, query, vector, settings.depth)
            expected = rrf([[d for d, _ in sub] for sub in subs], weights=settings.weights)
            got = live.search(text=query, vector=vector, mode="hybrid", k=10, hybrid=settings)
            _same_ranking(got, [SimpleNamespace(id=d, score=s) for d, s in expected], scores=True)
    warnings = [r for r in caplog.records if "server_rrf" in r.getMessage()]
    assert len(warnings) == 1 and "weights" in warnings[0].getMessage()
    # Not what the server's unweighted RRF would have returned (its pipeline is the oracle).
    unweighted = HybridSettings(fusion="server_rrf", depth=20)
    assert any([d.id for d in live.search(text=q, vector=vectors[i].tolist(), mode="hybrid", k=10,
                                          hybrid=settings)]
               != [d.id for d in live.search(text=q, vector=vectors[i].tolist(), mode="hybrid", k=10,
                                             hybrid=unweighted)]
               for i, q in enumerate(QUERIES[:3]))


def test_scroll_lists_every_id(both):
    _, live, chunks, _ = both
    import asyncio
    assert sorted(asyncio.run(live.aids())) == sorted(c.id for c in chunks)  # 1,500 ids: two scroll pages


class TestLiveContract(BackendContract):
    """The shared backend contract, all parts, against the cluster."""

    fusions = ("rrf", "server_rrf", "normalization")

    @pytest.fixture
    def backend(self, cluster):
        cluster.require("opensearch-knn")  # the contract indexes vectors
        backend = _live_backend(cluster)
        yield backend
        backend.delete_index()
        backend.close()
