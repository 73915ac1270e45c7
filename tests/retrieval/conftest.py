"""Fixtures for the retrieval tests: an ``osmem-server`` (a static binary from the PyPI package
``osmem-server`` speaking the OpenSearch REST dialect) on a free loopback port.

osmem answers the text path (index creation, ``_bulk``, ``match``) and error replies over real
HTTP; it refuses ``knn``, ``hybrid`` and search pipelines with HTTP 400, and its match scores are
not Lucene BM25. Tests against it check rankings, requests, error mapping and capability
detection, never knn, hybrid or score values. Also the ``lucene`` fixture: real Lucene for the
analyzer and BM25 oracles.
"""

from __future__ import annotations

import sys
from pathlib import Path

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
