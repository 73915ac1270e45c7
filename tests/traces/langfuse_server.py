"""A local stand-in for the Langfuse API, written from its public reference, for the real ``langfuse``
SDK: it takes what the SDK's exporter sends (OTLP/HTTP protobuf on ``POST /api/public/otel/v1/traces``,
gzip or not), turns each span into an observation by Langfuse's documented property mapping
(``langfuse.observation.type`` / ``.input`` / ``.output`` / ``.model.name`` / ``.metadata.*``,
ids as hex, ``parentObservationId`` from the parent span) and serves ``GET /api/public/v2/observations``
(what ``Langfuse().api.observations.get_many`` calls) a page at a time with a cursor."""

from __future__ import annotations

import contextlib
import gzip
import json
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from loopback import JsonHandler, loopback

PAGE = 4  # small, so the client follows the cursor
PROJECT = "local-project"


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


def _io(text: Any, as_json: bool) -> Any:
    # Langfuse stores input/output as the string the SDK sent; parseIoAsJson=true returns it parsed
    if not isinstance(text, str) or not as_json:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _observation(span: Any) -> dict[str, Any]:
    a = {kv.key: _value(kv.value) for kv in span.attributes}
    metadata = {k.removeprefix("langfuse.observation.metadata."): v for k, v in a.items()
                if k.startswith("langfuse.observation.metadata.")}
    parent = span.parent_span_id.hex() or None
    usage = a.get("langfuse.observation.usage_details")
    return {"id": span.span_id.hex(), "traceId": span.trace_id.hex(), "projectId": PROJECT,
            "startTime": _iso(span.start_time_unix_nano), "endTime": _iso(span.end_time_unix_nano),
            "parentObservationId": parent, "isRootObservation": parent is None,
            "type": str(a.get("langfuse.observation.type") or "span").upper(), "name": span.name,
            "level": a.get("langfuse.observation.level") or "DEFAULT",
            "statusMessage": a.get("langfuse.observation.status_message"),
            "environment": a.get("langfuse.environment") or "default",
            "input": a.get("langfuse.observation.input"), "output": a.get("langfuse.observation.output"),
            "model": a.get("langfuse.observation.model.name"), "metadata": metadata,
            "usageDetails": json.loads(usage) if isinstance(usage, str) else {}}


class Store:
    def __init__(self) -> None:
        self.observations: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def ingest(self, body: bytes) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        request = ExportTraceServiceRequest.FromString(body)
        with self.lock:
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    self.observations += [_observation(s) for s in ss.spans]


def _handler(store: Store) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if urlparse(self.path).path == "/api/public/otel/v1/traces":
                store.ingest(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._send({"message": "not found"}, 404)

        def do_GET(self) -> None:  # noqa: N802
            url = urlparse(self.path)
            if url.path != "/api/public/v2/observations":
                self._send({"message": "not found"}, 404)
                return
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            as_json = q.get("parseIoAsJson") == "true"
            with store.lock:
                rows = [o for o in store.observations if q.get("traceId") in (None, o["traceId"])]
            rows.sort(key=lambda o: (o["startTime"], o["id"]))
            start = int(q.get("cursor") or 0)
            limit = int(q.get("limit") or PAGE)
            page = [{**o, "input": _io(o["input"], as_json), "output": _io(o["output"], as_json)}
                    for o in rows[start:start + limit]]
            meta = {"cursor": str(start + limit)} if start + limit < len(rows) else {}
            self._send({"data": page, "meta": meta})

    return Handler


@contextlib.contextmanager
def serving() -> Iterator[tuple[str, Store]]:
    store = Store()
    with loopback(_handler(store)) as url:
        yield url, store
