"""OpenTelemetry trace exports (OTLP JSON) read span by span, with the file and line of every problem.

An export is a file (or a folder of ``.json`` / ``.jsonl`` files, read in name order) holding
``ExportTraceServiceRequest`` objects as the OTLP/JSON encoding writes them: one object per line (what
the collector's file exporter writes, read line by line in bounded memory) or one object for the
whole file. Span and trace ids may be hex (the OTLP/JSON rule) or base64 (protobuf's own JSON
mapping); attribute values are read from their ``AnyValue`` form into Python values.

:func:`read_traces` yields each trace once its root span (the one without a parent) has been read,
so only the traces still open are held; spans that never meet their root are reported at the end
as one :class:`~langrag_eval.errors.DataError` per trace, never dropped silently.

>>> import json, pathlib, tempfile
>>> span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "chain",
...         "startTimeUnixNano": "1700000000000000000",
...         "attributes": [{"key": "input.value", "value": {"stringValue": "Capital?"}}]}
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
>>> _ = p.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\\n")
>>> [(t.trace_id, t.root.name, t.root.attributes["input.value"]) for t in read_traces(p, problems=[])]
[('0af7651916cd43dd8448eb211c80319c', 'chain', 'Capital?')]
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..files.jsontext import parse_json
from ..files.reading import check_regular, read_bytes, read_lines

__all__ = ["Span", "Trace", "read_traces", "trace_files"]


@dataclass(frozen=True)
class Span:
    """One span: ids as lowercase hex, times in nanoseconds since the epoch, attributes flat."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...] = ()
    where: str = ""


@dataclass
class Trace:
    """The spans of one trace, in the order they started; ``root`` is the span without a parent."""

    trace_id: str
    root: Span
    spans: list[Span] = field(default_factory=list)

    def children(self, span: Span) -> list[Span]:
        return [s for s in self.spans if s.parent_id == span.span_id]


def trace_files(path: str | Path) -> list[Path]:
    """The export files under ``path``: the file itself, or a folder's ``.json`` / ``.jsonl`` files."""
    p = Path(path)
    if p.is_dir():
        found = sorted(f for f in p.rglob("*") if f.suffix in (".json", ".jsonl") and f.is_file())
        if not found:
            raise DataError("no .json or .jsonl trace export in this folder", path=str(p))
        return found
    check_regular(p, what="trace export")
    return [p]


def _hex_id(value: Any, size: int, where: str, name: str) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise DataError(f"{name} is a {type(value).__name__}, not an id", path=where, field=name)
    text = value.strip()
    if len(text) == 2 * size and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise DataError(f"{name} {value!r} is neither {2 * size} hex digits nor base64 of {size} bytes",
                        path=where, field=name)
    return raw.hex()


def _any_value(value: Any) -> Any:
    if not isinstance(value, Mapping) or not value:
        return None
    kind, inner = next(iter(value.items()))
    if kind == "stringValue":
        return inner
    if kind == "boolValue":
        return bool(inner)
    if kind == "intValue":
        return int(inner)  # JSON carries 64-bit integers as strings
    if kind == "doubleValue":
        return float(inner)
    if kind == "arrayValue":
        return [_any_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return {kv.get("key"): _any_value(kv.get("value")) for kv in (inner or {}).get("values", [])}
    if kind == "bytesValue":
        return inner
    return None


def _attributes(items: Any) -> dict[str, Any]:
    return {a["key"]: _any_value(a.get("value")) for a in items or [] if isinstance(a, Mapping) and "key" in a}


def _spans_of(request: Any, where: str) -> Iterator[Span]:
    if not isinstance(request, Mapping) or "resourceSpans" not in request:
        raise DataError("not an OTLP trace export (no resourceSpans)", path=where)
    for rs in request.get("resourceSpans") or []:
        for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
            for raw in ss.get("spans") or []:
                trace_id = _hex_id(raw.get("traceId"), 16, where, "traceId")
                span_id = _hex_id(raw.get("spanId"), 8, where, "spanId")
                if trace_id is None or span_id is None:
                    raise DataError("a span without traceId or spanId", path=where, field="spanId")
                yield Span(trace_id=trace_id, span_id=span_id,
                           parent_id=_hex_id(raw.get("parentSpanId"), 8, where, "parentSpanId"),
                           name=str(raw.get("name", "")), start_ns=int(raw.get("startTimeUnixNano") or 0),
                           end_ns=int(raw.get("endTimeUnixNano") or 0), attributes=_attributes(raw.get("attributes")),
                           events=tuple({"name": e.get("name"), **_attributes(e.get("attributes"))}
                                        for e in raw.get("events") or []),
                           where=where)


def _requests(path: Path) -> Iterator[tuple[Any, str]]:
    """Each request of one file with where it starts: per line, or the whole file as one object. A
    line that is not JSON comes as its :class:`DataError`, and the lines after it are still read."""
    first = True
    for number, raw in enumerate(read_lines(path, what="trace export"), start=1):
        text = raw.decode("utf-8", errors="surrogateescape").strip()
        if not text:
            continue
        if first and text.startswith("{") and not _whole_line(text):
            # one JSON object over many lines: the file is one request (a collector writes one per line)
            yield _parse(read_bytes(path, what="trace export").decode("utf-8", errors="surrogateescape"),
                         f"{path}"), f"{path}"
            return
        first = False
        yield _parse(text, f"{path}:{number}"), f"{path}:{number}"


def _whole_line(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _parse(text: str, where: str) -> Any:
    try:
        return parse_json(text)
    except (DataError, ValueError) as exc:
        return DataError(f"not valid JSON ({getattr(exc, 'message', exc)})", path=where)


def read_traces(path: str | Path, *, problems: list[DataError]) -> Iterator[Trace]:
    """Every complete trace of the export at ``path``, each once its root span was read. A request
    that cannot be read and a trace whose root never came are appended to ``problems``."""
    open_traces: dict[str, list[Span]] = {}
    for file in trace_files(path):
        for request, where in _safe_requests(file, problems):
            if isinstance(request, DataError):
                problems.append(request)
                continue
            try:
                spans = list(_spans_of(request, where))
            except DataError as exc:
                problems.append(exc)
                continue
            for span in spans:
                open_traces.setdefault(span.trace_id, []).append(span)
            for trace_id in dict.fromkeys(s.trace_id for s in spans if s.parent_id is None):
                yield _close(trace_id, open_traces.pop(trace_id))
    for trace_id, spans in open_traces.items():
        problems.append(DataError(f"trace {trace_id}: {len(spans)} span(s) but no root span (a span without "
                                  f"a parent); the export may be cut short", path=spans[0].where))


def _safe_requests(file: Path, problems: list[DataError]) -> Iterable[tuple[Any, str]]:
    try:
        yield from _requests(file)
    except DataError as exc:
        problems.append(exc)


def _close(trace_id: str, spans: list[Span]) -> Trace:
    spans.sort(key=lambda s: (s.start_ns, s.end_ns))
    roots = [s for s in spans if s.parent_id is None]
    return Trace(trace_id=trace_id, root=roots[0], spans=spans)
