"""Basic auth and TLS of the OpenSearch backend over real HTTP(S), against a small loopback server
written here that checks credentials like a cluster's security plugin (401/403 replies). It shows
what the client sends and how refusals are reported; it is not an OpenSearch server."""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import logging
import shutil
import ssl
import subprocess
import threading
from typing import ClassVar

import pytest

from langrag_eval.errors import RetrievalError
from langrag_eval.retrieval.opensearch import OpenSearchBackend

USER, PASSWORD = "reader", "pw-7f3!kq"
INFO = {"version": {"number": "3.1.0", "distribution": "opensearch"}}


class _Handler(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str | None]] = []

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        auth = self.headers.get("Authorization")
        self.seen.append(auth)
        good = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if auth != good:
            self._reply(401, {"error": {"type": "security_exception", "reason": "Unauthorized"}, "status": 401})
        elif "_search" in self.path:
            self._reply(403, {"error": {"type": "security_exception",
                                        "reason": "no permissions for [indices:data/read/search]"}, "status": 403})
        else:
            self._reply(200, INFO)

    do_GET = do_POST = do_HEAD = do_PUT = _handle

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass


def _serve(tls_context: ssl.SSLContext | None = None):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    if tls_context is not None:
        server.socket = tls_context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def plain_server():
    _Handler.seen = []
    server = _serve()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_basic_auth_is_sent_and_accepted(plain_server):
    with OpenSearchBackend(plain_server, index="docs", user=USER, password=PASSWORD) as b:
        assert b.probe().version == (3, 1, 0)
    assert _Handler.seen[-1].startswith("Basic ")


def test_credentials_from_the_environment(plain_server, monkeypatch):
    monkeypatch.setenv("OPENSEARCH_URL", plain_server)
    monkeypatch.setenv("OPENSEARCH_USER", USER)
    monkeypatch.setenv("OPENSEARCH_PASSWORD", PASSWORD)
    with OpenSearchBackend(index="docs") as b:
        assert b.probe().version == (3, 1, 0)


def test_wrong_password_is_a_401_error_without_the_secret(plain_server, caplog):
    wrong = "not-the-pw-93k"
    with caplog.at_level(logging.DEBUG), OpenSearchBackend(
            plain_server.replace("http://", f"http://{USER}:{wrong}@"), index="docs") as b:
        with pytest.raises(RetrievalError, match="refused the credentials.*OPENSEARCH_PASSWORD") as info:
            b.search(text="x")
        with pytest.raises(RetrievalError, match="HTTP 401"):
            asyncio.run(b.asearch(text="x"))
        assert wrong not in repr(b)
    assert wrong not in str(info.value) and wrong not in caplog.text
    assert base64.b64encode(f"{USER}:{wrong}".encode()).decode() not in caplog.text


def test_forbidden_search_is_a_403_error(plain_server):
    with OpenSearchBackend(plain_server, index="docs", user=USER, password=PASSWORD) as b, \
            pytest.raises(RetrievalError, match="not allowed to run a BM25 search on index 'docs'.*403"):
        b.search(text="x")


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


@pytest.fixture
def tls_server(tls_files):
    cert, key = tls_files
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    _Handler.seen = []
    server = _serve(context)
    yield f"https://127.0.0.1:{server.server_address[1]}", str(cert)
    server.shutdown()


def test_tls_certificates_are_verified_by_default(tls_server):
    url, _ = tls_server
    with OpenSearchBackend(url, index="docs", user=USER, password=PASSWORD, max_retries=0) as b:
        with pytest.raises(RetrievalError, match="TLS handshake.*ca_certs"):
            b.probe()
        with pytest.raises(RetrievalError, match="TLS handshake"):
            asyncio.run(b.acount())
    assert _Handler.seen == []  # no request, so no credentials, went to an unverified server


def test_tls_with_the_cluster_ca_bundle(tls_server):
    url, cert = tls_server
    with OpenSearchBackend(url, index="docs", user=USER, password=PASSWORD, ca_certs=cert) as b:
        assert b.probe().version == (3, 1, 0)
    with OpenSearchBackend(url, index="docs", user=USER, password=PASSWORD, ca_certs=cert) as b, \
            pytest.raises(RetrievalError, match="403"):  # the async client over TLS as well
        asyncio.run(b.asearch(text="x"))
