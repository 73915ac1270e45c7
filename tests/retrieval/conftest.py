"""Fixtures for the retrieval tests: an ``osmem-server`` (a static binary from the PyPI package
``osmem-server`` speaking the OpenSearch REST dialect) on a free loopback port.

osmem answers the text path (index creation, ``_bulk``, ``match``) and error replies over real
HTTP; it refuses ``knn``, ``hybrid`` and search pipelines with HTTP 400, and its match scores are
not Lucene BM25. Tests against it check rankings, requests, error mapping and capability
detection, never knn, hybrid or score values. The ``opensearch_cluster`` fixture gives the live
suite a real OpenSearch node (scripts/opensearch-node) or the cluster at ``OPENSEARCH_URL``. Also
the ``lucene`` fixture: real Lucene for the
analyzer and BM25 oracles.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest


@pytest.fixture(scope="session")
def osmem_server():
    """One osmem-server process for the session, started on 127.0.0.1 with port 0 (the server
    picks a free port and reports it), stopped at the end."""
    osmem = pytest.importorskip("osmem_server", reason="osmem-server is not installed (extra: test)")
    try:
        server = osmem.OsmemServer.start(addr="127.0.0.1:0", japanese=False, startup_timeout=30)
    except osmem.OsmemError as exc:
        pytest.skip(f"osmem-server could not start here: {exc}")
    yield server
    server.close()


@pytest.fixture
def osmem_url(osmem_server) -> str:
    """The URL of a fresh, empty clone of the osmem cluster for one test (closed afterwards)."""
    clone = osmem_server.clone()
    yield clone.url
    clone.close()


NODE_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "opensearch-node"


class LiveCluster:
    """The cluster the live suite runs against: its URL, and the plugins the node reported missing
    (``missing`` maps a plugin name to why; empty for a cluster the user gave). A cluster of the
    user's may need a CA bundle (``OPENSEARCH_CA_CERTS``) or, for a throwaway one, no certificate
    check (``OPENSEARCH_INSECURE=1``): every backend and command of the live suite gets them."""

    def __init__(self, url: str, missing: dict[str, str], *, local: bool) -> None:
        self.url, self.missing, self.local = url, missing, local  # local: started by the node script
        self.ca_certs = os.environ.get("OPENSEARCH_CA_CERTS") or None
        self.insecure = os.environ.get("OPENSEARCH_INSECURE") == "1"

    def backend_options(self) -> dict:
        """TLS keywords for ``OpenSearchBackend``."""
        return {"ca_certs": self.ca_certs, "verify_certs": not self.insecure}

    def cli_options(self) -> list[str]:
        """The same for a ``langrag-eval`` command line."""
        return ((["--ca-certs", self.ca_certs] if self.ca_certs else [])
                + (["--insecure"] if self.insecure else []))

    def require(self, plugin: str) -> None:
        if plugin in self.missing:
            if plugin == "opensearch-knn" and _required():  # BM25 and KNN must run where servers are required
                pytest.fail(f"plugin {plugin} is not loaded on the local node: {self.missing[plugin]}")
            pytest.skip(f"plugin {plugin} is not loaded on the local node: {self.missing[plugin]}")


def _required() -> bool:
    return os.environ.get("LANGRAG_REQUIRE_SERVERS") == "1" or bool(os.environ.get("CI"))


@pytest.fixture(scope="session")
def opensearch_cluster(request):
    """``OPENSEARCH_URL`` when set; otherwise a local node started by scripts/opensearch-node
    (OpenSearch 2.19.1 from Maven Central jars, cached under ~/.cache/langrag-eval/opensearch) for
    the session and stopped at its end. Without Java or Maven it skips, saying which, except where
    servers are required (``LANGRAG_REQUIRE_SERVERS=1``, as CI sets it, or ``CI`` set)."""
    if os.environ.get("OPENSEARCH_URL"):
        yield LiveCluster(os.environ["OPENSEARCH_URL"], {}, local=False)
        return
    try:
        done = subprocess.run(["bash", str(NODE_SCRIPT), "start"], capture_output=True, text=True,
                              timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        done = subprocess.CompletedProcess([], 1, "", str(exc))
    found = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines()
                 if line.startswith("export "))
    if done.returncode != 0 or "OPENSEARCH_URL" not in found:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        if _required():
            pytest.fail(f"the local OpenSearch node did not start: {why}")
        pytest.skip(f"no OPENSEARCH_URL and the local OpenSearch node did not start: {why}")
    missing = missing_plugins(done.stderr)
    # Once for the session, on the terminal (a fixture's own output is captured); each test that
    # needs the plugin then skips naming it.
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    for line in done.stderr.splitlines():
        if line.startswith("opensearch-node: plugin "):
            if reporter is not None and capture is not None:
                with capture.global_and_fixture_disabled():
                    reporter.write_line(line, yellow=True)
            else:
                print(line, file=sys.stderr)
    try:
        yield LiveCluster(found["OPENSEARCH_URL"], missing, local=True)
    finally:
        subprocess.run(["bash", str(NODE_SCRIPT), "stop", found["OPENSEARCH_NODE_PID"]], timeout=60)


# The node reports a plugin by its name when it could not be fetched, by its class when it failed
# to load; the tests ask by name.
_PLUGIN_NAMES = {"KNNPlugin": "opensearch-knn", "NeuralSearch": "neural-search"}


def missing_plugins(stderr: str) -> dict[str, str]:
    """The plugins scripts/opensearch-node reported left out, by name, each with why: from
    ``opensearch-node: plugin NAME not loaded: why`` (not fetched) and ``opensearch-node: plugin
    CLASS: why (left out)`` (fetched, failed to load)."""
    missing = {}
    for line in stderr.splitlines():
        if line.startswith("opensearch-node: plugin "):
            name, _, why = line.removeprefix("opensearch-node: plugin ").partition(" ")
            name = name.rstrip(":").split(".")[-1]
            missing[_PLUGIN_NAMES.get(name, name)] = why.removeprefix("not loaded: ").removesuffix(" (left out)")
    return missing


def allow_cluster_host(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """Let the network guard (tests/conftest.py) through for the cluster's addresses only."""
    # The guard is tests/conftest.py, by its file: some modules (torch.ops) answer every attribute.
    guard = next((m for m in list(sys.modules.values())
                  if str(getattr(m, "__file__", None) or "").endswith(os.path.join("tests", "conftest.py"))
                  and hasattr(m, "_guarded_connect")), None)
    if guard is None:
        return
    host = urlsplit(url).hostname or ""
    allowed = {host} | {info[4][0] for info in guard._real_getaddrinfo(host, None)}

    def getaddrinfo(name, *args, **kwargs):
        target = guard._real_getaddrinfo if name in allowed else guard._guarded_getaddrinfo
        return target(name, *args, **kwargs)

    def connect(sock, address):
        target = guard._real_connect if isinstance(address, tuple) and address[0] in allowed \
            else guard._guarded_connect
        return target(sock, address)

    def connect_ex(sock, address):
        target = guard._real_connect_ex if isinstance(address, tuple) and address[0] in allowed \
            else guard._guarded_connect_ex
        return target(sock, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture(scope="module")
def cluster(opensearch_cluster):
    """The live cluster for one module of the live suite: its host let through the network guard
    (only while that module runs) and ``OPENSEARCH_URL`` set to it."""
    with pytest.MonkeyPatch.context() as mp:
        allow_cluster_host(mp, opensearch_cluster.url)
        mp.setenv("OPENSEARCH_URL", opensearch_cluster.url)
        yield opensearch_cluster


# Real Lucene (tests/retrieval/lucene/), compiled once per session; skipped where Java is missing.
sys.path.insert(0, str(Path(__file__).parent / "lucene"))
from lucene_oracle import Lucene, OracleUnavailable


@pytest.fixture(scope="session")
def lucene(tmp_path_factory) -> Lucene:
    """BM25Oracle.java compiled against Debian's liblucene8-java (skips with the install command)."""
    try:
        return Lucene.compile(tmp_path_factory.mktemp("lucene"))
    except OracleUnavailable as exc:
        pytest.skip(str(exc))
