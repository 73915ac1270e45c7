"""Live suite, the write path: ``langrag-eval index`` and the backend against a real OpenSearch node
(the local one from scripts/opensearch-node unless ``OPENSEARCH_URL`` names a cluster; see
test_opensearch_live.py). Upserts, deletes and ``--prune``, per-item bulk errors, refresh, index
settings, reuse checks, timeouts, and a node that goes away between runs or in the middle of one.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

from langrag_eval.cli import main
from langrag_eval.errors import RetrievalError
from langrag_eval.retrieval import Chunk

NODE_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "opensearch-node"
pytestmark = [pytest.mark.opensearch_live]
ENGINE = os.environ.get("OPENSEARCH_ENGINE", "lucene")


def _name() -> str:
    return f"langrag-live-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def index(cluster):
    """A fresh index name on the cluster, deleted afterwards, and a backend opener for it."""
    from langrag_eval.retrieval.opensearch import OpenSearchBackend
    name, opened = _name(), []

    def backend(**kwargs):
        kwargs.setdefault("engine", ENGINE)
        opened.append(OpenSearchBackend(cluster.url, index=name, **cluster.backend_options(), **kwargs))
        return opened[-1]

    yield name, backend
    cleanup = backend()
    cleanup.delete_index()
    for b in opened:
        b.close()


def _index(cluster, name, *paths, extra=(), url=None):
    return main(["index", *paths, "--backend", "opensearch", "--url", url or cluster.url, "--index", name,
                 "--no-embeddings", *cluster.cli_options(), *extra])


def test_cli_upserts_replaces_changed_documents_and_prunes(cluster, index, tmp_path, monkeypatch):
    name, backend = index
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("river capital bridge " * 10)
    (tmp_path / "docs" / "b.txt").write_text("glacier volcano lake")
    assert _index(cluster, name, "docs") == 0
    first = sorted(__import__("asyncio").run(backend().aids()))
    assert len(first) >= 2 and backend().count() == len(first)
    # a changes (its old chunks go), b leaves the folder (kept without --prune, gone with it)
    (tmp_path / "docs" / "a.txt").write_text("museum garden")
    (tmp_path / "docs" / "b.txt").unlink()
    assert _index(cluster, name, "docs") == 0
    assert [d.text for d in backend().search(text="museum", k=5)] == ["museum garden"]
    assert backend().search(text="river", k=5) == []
    assert [d.text for d in backend().search(text="glacier", k=5)] == ["glacier volcano lake"]
    assert _index(cluster, name, "docs", extra=["--prune"]) == 0
    assert backend().search(text="glacier", k=5) == [] and backend().count() == 1


def test_bulk_item_errors_name_the_chunk_and_the_rest_is_searchable(index):
    _, backend = index
    chunks = [Chunk(id="ok-1", text="river", metadata={"n": 1}),
              Chunk(id="bad", text="river bridge", metadata={"n": {"nested": True}}),  # n is a number
              Chunk(id="ok-2", text="river capital", metadata={"n": 2})]
    report = backend().index(chunks)
    assert report.indexed == 2 and [i for i, _ in report.failed] == ["bad"]
    assert "mapper_parsing_exception" in report.failed[0][1]
    # refreshed: searchable at once
    assert sorted(d.id for d in backend().search(text="river", k=10)) == ["ok-1", "ok-2"]


def test_shards_option_sets_a_new_index(cluster, index, tmp_path, monkeypatch):
    name, backend = index
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("river capital")
    assert _index(cluster, name, "a.txt", extra=["--shards", "2", "--timeout", "20"]) == 0
    settings = backend()._sync_client().indices.get_settings(index=name)
    assert settings[name]["settings"]["index"]["number_of_shards"] == "2"


def test_reusing_an_index_checks_engine_space_and_dimension(cluster, index):
    cluster.require("opensearch-knn")
    _, backend = index
    rng = np.random.default_rng(3)
    chunks = [Chunk(id=f"c{i}", text=f"text {i}") for i in range(4)]
    assert backend(engine="lucene", space_type="cosinesimil").index(chunks, rng.random((4, 4))).failed == []
    for kwargs, vectors, what in [({"engine": "lucene", "space_type": "l2"}, rng.random((4, 4)), "space type"),
                                  ({"engine": "faiss"}, rng.random((4, 4)), "engine"),
                                  ({"engine": "lucene"}, rng.random((4, 5)), "dimension")]:
        with pytest.raises(RetrievalError, match=f"^{what} mismatch") as caught:
            backend(**kwargs).index(chunks, vectors)
        assert "\n" not in str(caught.value)
    assert backend().count() == 4  # nothing was written by the refused calls


def test_a_request_past_its_timeout_is_one_line(index):
    _, backend = index
    backend().index([Chunk(id="a", text="river")])
    # A 1 µs limit on loopback is almost always passed before the reply, not always (the reply can
    # already be in the socket): asked up to 20 times, the first request that times out is the case.
    errors = []
    for _ in range(20):
        try:
            backend(timeout=1e-6, max_retries=0).search(text="river", k=1)
        except RetrievalError as exc:
            errors.append(exc)
            break
    assert errors, "no request timed out in 20 tries"
    assert "\n" not in str(errors[0]) and "tim" in str(errors[0]).lower()


def test_a_node_stopped_between_runs_gives_one_line(opensearch_cluster, tmp_path, monkeypatch, capsys):
    """A second local node is started, indexed into, and stopped; the next run fails in one line
    and writes nothing."""
    if not opensearch_cluster.local:
        pytest.skip("needs the local node script (OPENSEARCH_URL names a cluster of the user's)")
    done = subprocess.run(["bash", str(NODE_SCRIPT), "start"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    url = found["OPENSEARCH_URL"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("river capital")
    try:
        assert _index(opensearch_cluster, "langrag-stop", "a.txt", url=url) == 0
    finally:
        subprocess.run(["bash", str(NODE_SCRIPT), "stop", found["OPENSEARCH_NODE_PID"]], timeout=60, check=True)
    capsys.readouterr()
    before = sorted(p.name for p in tmp_path.iterdir())
    assert _index(opensearch_cluster, "langrag-stop", "a.txt", url=url) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "127.0.0.1" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def _start_node(*args: str) -> dict[str, str]:
    done = subprocess.run(["bash", str(NODE_SCRIPT), "start", *args], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())


def test_a_node_stopped_mid_run_loses_nothing_and_a_rerun_completes(opensearch_cluster, tmp_path):
    """The node goes away between two bulk requests of one ingest (stopped by the embedder, which
    runs between them): the run fails in one line, and the node, started again on its data, still
    holds every chunk it had (stale chunks are removed only after every new one is in); the same
    run again leaves exactly the new chunks."""
    from langrag_eval.models.embeddings import FunctionEmbedder
    from langrag_eval.retrieval.chunking import Source
    from langrag_eval.retrieval.ingest import ingest
    from langrag_eval.retrieval.opensearch import OpenSearchBackend
    if not opensearch_cluster.local:
        pytest.skip("needs the local node script (OPENSEARCH_URL names a cluster of the user's)")
    data = tmp_path / "data"
    node = _start_node("--data", str(data))
    calls, stop_at = [], [0]

    def vectors(texts):
        calls.append(list(texts))
        if len(calls) == stop_at[0]:  # between the previous batch's bulk request and the next
            subprocess.run(["bash", str(NODE_SCRIPT), "stop", node["OPENSEARCH_NODE_PID"]], timeout=60,
                           check=True)
        return [[1.0, float(len(t) % 7), float(sum(map(ord, t)) % 11)] for t in texts]

    embedder = FunctionEmbedder(vectors, dimension=3)
    old = [Source(id="a.txt", text="river capital"), Source(id="b.txt", text="glacier volcano")]
    new = [Source(id="a.txt", text="museum garden"), Source(id="c.txt", text="castle forest"),
           Source(id="d.txt", text="railway airport")]
    try:
        backend = OpenSearchBackend(node["OPENSEARCH_URL"], index="langrag-midrun", engine="lucene",
                                    max_retries=0)
        ingest(backend, old, embedder=embedder, index_batch=1)
        before = set(__import__("asyncio").run(backend.aids()))
        backend.close()
        stop_at[0] = len(calls) + 2  # the second batch of the next run
        backend = OpenSearchBackend(node["OPENSEARCH_URL"], index="langrag-midrun", engine="lucene",
                                    max_retries=0)
        with pytest.raises(RetrievalError) as caught:
            ingest(backend, new, embedder=embedder, index_batch=1)
        backend.close()
        assert "\n" not in str(caught.value) and "127.0.0.1" in str(caught.value), caught.value
    finally:
        if Path(f"/proc/{node['OPENSEARCH_NODE_PID']}").exists():
            subprocess.run(["bash", str(NODE_SCRIPT), "stop", node["OPENSEARCH_NODE_PID"]], timeout=60)
    node = _start_node("--data", str(data))
    try:
        backend = OpenSearchBackend(node["OPENSEARCH_URL"], index="langrag-midrun", engine="lucene")
        aids = lambda: set(__import__("asyncio").run(backend.aids()))  # noqa: E731
        after = aids()
        assert before <= after and len(after - before) == 1  # all old chunks, and a's new first batch
        assert [d.text for d in backend.search(text="river", k=5)] == ["river capital"]
        report = ingest(backend, new, embedder=embedder, index_batch=1)
        assert report.failed == [] and report.removed == 1  # a's old chunk, once a's new one is in
        assert sorted(d.split("#")[0] for d in aids()) == ["a.txt", "b.txt", "c.txt", "d.txt"]
        assert backend.search(text="river", k=5) == []
        backend.close()
    finally:
        subprocess.run(["bash", str(NODE_SCRIPT), "stop", node["OPENSEARCH_NODE_PID"]], timeout=60)
