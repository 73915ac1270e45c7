"""Spans the OpenTelemetry SDK recorded, written as an OTLP/JSON export the way a collector's file
exporter writes it: one ExportTraceServiceRequest per line, ids in hex (the OTLP/JSON rule), encoded
by the SDK's own protobuf encoder."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in ID_FIELDS and v else _hex_ids(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def write_export(spans: Any, path: Path, *, hex_ids: bool = True, per_line: int | None = None) -> Path:
    """The spans as OTLP/JSON lines (``per_line`` spans to a request, default all in one)."""
    spans = list(spans)
    chunks = [spans] if not per_line else [spans[i:i + per_line] for i in range(0, len(spans), per_line)]
    with path.open("w", encoding="utf-8") as fh:
        for chunk in chunks:
            request = MessageToDict(encode_spans(chunk))
            fh.write(json.dumps(_hex_ids(request) if hex_ids else request) + "\n")
    return path


@contextlib.contextmanager
def instrumented(instrumentor: Any) -> Iterator[InMemorySpanExporter]:
    """The instrumentor on, exporting to memory, for the block; off again after it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()
