"""A local stand-in for the LangSmith API, written from its reference, for the real ``langsmith``
client: it takes the tracer's run uploads (``POST /runs/batch``: ``{"post": [...], "patch": [...]}``,
and single ``POST /runs`` / ``PATCH /runs/{id}``), answers ``GET /info`` (asking for JSON batches, not
the multipart endpoint, through ``batch_ingest_config``) and serves ``POST /runs/query`` (what
``Client.list_runs`` calls) from the runs it stored, a page at a time."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import JsonHandler, loopback

PAGE = 3  # small, so the client follows the cursor


class Store:
    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def put(self, run: dict[str, Any]) -> None:
        with self.lock:
            self.runs.setdefault(str(run["id"]), {}).update({k: v for k, v in run.items() if v is not None})


def _handler(store: Store) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def _body(self) -> Any:
            n = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(n) or b"null")

        def do_GET(self) -> None:  # noqa: N802
            if self.path.startswith("/info"):
                self._send({"version": "0.0-local", "batch_ingest_config": {"use_multipart_endpoint": False, "size_limit": 100, "size_limit_bytes": 20_971_520,
                                                    "scale_up_qsize_trigger": 1000, "scale_up_nthreads_limit": 16,
                                                    "scale_down_nempty_trigger": 4},
                            "instance_flags": {}})
            else:
                self._send({"detail": "not found"}, 404)

        def do_PATCH(self) -> None:  # noqa: N802
            if self.path.startswith("/runs/"):
                store.put({**self._body(), "id": self.path.split("/")[2]})
                self._send({})
            else:
                self._send({"detail": "not found"}, 404)

        def do_POST(self) -> None:  # noqa: N802
            body = self._body()
            if self.path == "/runs/batch":
                for run in body.get("post", []) + body.get("patch", []):
                    store.put(run)
                self._send({})
            elif self.path == "/runs":
                store.put(body)
                self._send({})
            elif self.path == "/runs/query":
                with store.lock:
                    runs = sorted(store.runs.values(), key=lambda r: r.get("dotted_order", ""))
                start = int(body.get("cursor") or 0)
                page = [_as_run(r) for r in runs[start:start + PAGE]]
                nxt = start + PAGE if start + PAGE < len(runs) else None
                self._send({"runs": page, "cursors": {"next": str(nxt) if nxt else None}})
            else:
                self._send({"detail": "not found"}, 404)

    return Handler


def _as_run(r: dict[str, Any]) -> dict[str, Any]:
    # the stored upload as the query endpoint returns a run (session_id, status, child ids)
    return {**r, "session_id": r.get("session_id") or "00000000-0000-0000-0000-000000000001",
            "status": "error" if r.get("error") else "success"}


@contextlib.contextmanager
def serving() -> Iterator[tuple[str, Store]]:
    store = Store()
    with loopback(_handler(store)) as url:
        yield url, store
