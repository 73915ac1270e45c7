"""Langfuse trace exports read into samples by live capture's rule.

An export holds what Langfuse's public API returns, written out (a file, or a folder of ``.json`` /
``.jsonl`` files):

- traces with their observations (``GET /api/public/traces/{id}``): one trace object, a JSON list of
  them, one per line, or an API page ``{"data": [...], "meta": ...}``; each trace is read as it comes;
- observations (``GET /api/public/v2/observations``, ``Langfuse().api.observations.get_many``): a JSON
  list, one per line, or the API's pages; they are grouped by ``traceId``, so they are held until the
  export has been read (the API promises no order that closes a trace early).

Observations nest by ``parentObservationId``; the root (the observation without a parent in its
trace) holds the question and the answer (a trace object's own ``input`` / ``output`` first);
``RETRIEVER`` observations give their documents (``output``: LangChain documents as the Langfuse
callback handler serialises them); ``GENERATION`` observations give the prompt (``input``: chat
messages, prompt strings) and the reply (``output``). A retriever inside another retriever is left
to its wrapper, as live capture does. ``input`` and ``output`` may come as JSON text (the API's
default) or parsed (``parseIoAsJson``).

>>> import json, pathlib, tempfile
>>> obs = {"id": "o1", "traceId": "t1", "type": "CHAIN", "parentObservationId": None,
...        "startTime": "2025-01-01T00:00:00Z", "input": "Capital?", "output": "Paris."}
>>> p = pathlib.Path(tempfile.mkdtemp()) / "observations.jsonl"
>>> _ = p.write_text(json.dumps(obs) + "\\n")
>>> [(s.id, s.question, s.answer) for s in read_langfuse_samples(p, problems=[])]
[('t1', 'Capital?', 'Paris.')]
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..adapters.adapting import answer_of, question_of
from ..adapters.contexts import ModelCall
from ..errors import DataError
from ..files.reading import read_bytes, read_lines
from ..types import Document, Sample, text_id
from .langsmith import _plain, _text
from .otlp import _parse, trace_files
from .rule import trace_sample

__all__ = ["read_langfuse_samples", "read_langfuse_traces", "sample_of_observations"]

def _records(path: Path) -> Iterator[tuple[Any, str]]:
    """Each trace or observation of one file with where it is: a whole-file JSON value (a list, a
    page, one trace) or one record per line."""
    for number, raw in enumerate(read_lines(path, what="trace export"), start=1):
        text = raw.decode("utf-8", errors="surrogateescape").strip()
        if not text:
            continue
        if number == 1 and (text.startswith("[") or (text.startswith("{") and not _whole(text))):
            whole = _parse(read_bytes(path, what="trace export").decode("utf-8", errors="surrogateescape"), str(path))
            if isinstance(whole, DataError):
                yield whole, str(path)
                return
            yield from _items(whole, str(path))
            return
        yield from _items(_parse(text, f"{path}:{number}"), f"{path}:{number}")


def _whole(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _items(value: Any, where: str) -> Iterator[tuple[Any, str]]:
    if isinstance(value, Mapping) and isinstance(value.get("data"), list) and "id" not in value:
        value = value["data"]  # an API page
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield item, f"{where}: record {i}"
    else:
        yield value, where


def _observations_of(trace: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    listed = trace.get("observations")
    if not isinstance(listed, list) or any(not isinstance(o, Mapping) for o in listed):
        raise DataError(f"trace {trace.get('id')}: its observations are ids, not objects (the API's trace list "
                        "gives ids; export each trace with GET /api/public/traces/{id})", path=where,
                        field="observations")
    return [{**o, "traceId": o.get("traceId") or trace.get("id"), "_where": where} for o in listed]


def read_langfuse_traces(path: str | Path, *, problems: list[DataError]
                         ) -> Iterator[tuple[Mapping[str, Any] | None, list[dict[str, Any]]]]:
    """Each trace of the export as ``(trace object or None, its observations)``: traces with nested
    observations as they are read, loose observations grouped by ``traceId`` once the export has been
    read. A record that is neither, and a trace without its root observation, go to ``problems``."""
    loose: dict[str, list[dict[str, Any]]] = {}
    for file in trace_files(path):
        try:
            for record, where in _records(file):
                if isinstance(record, DataError):
                    problems.append(record)
                elif isinstance(record, Mapping) and "observations" in record and record.get("id"):
                    try:
                        yield {**record, "_where": where}, _observations_of(record, where)
                    except DataError as exc:
                        problems.append(exc)
                elif isinstance(record, Mapping) and record.get("id") and record.get("traceId"):
                    loose.setdefault(str(record["traceId"]), []).append({**record, "_where": where})
                else:
                    problems.append(DataError("not a Langfuse trace or observation (no id with observations "
                                              "or traceId)", path=where))
        except DataError as exc:
            problems.append(exc)
    for observations in loose.values():
        yield None, observations


def _io(value: Any) -> Any:
    # the API returns input / output as the text the SDK sent unless asked to parse it
    if isinstance(value, str) and value[:1] in "[{\"":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _documents(output: Any) -> list[Document]:
    output = _io(output)
    if isinstance(output, Mapping):
        output = output.get("documents", output.get("nodes"))
    docs = []
    for d in output if isinstance(output, list) else []:
        d = d.get("kwargs", d) if isinstance(d, Mapping) and d.get("lc") else d
        if not isinstance(d, Mapping):
            continue
        node = d.get("node") if isinstance(d.get("node"), Mapping) else d  # LlamaIndex NodeWithScore
        text = node.get("page_content", node.get("text"))
        if not isinstance(text, str) or not text:
            continue
        metadata = node.get("metadata") if isinstance(node.get("metadata"), Mapping) else {}
        ident = node.get("id") or node.get("id_") or metadata.get("id") or text_id(text)
        docs.append(Document(id=str(ident), text=text, metadata=dict(metadata)))
    return docs


def _messages_text(value: Any) -> list[str]:
    value = _plain(_io(value))
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        if "messages" in value:
            return _messages_text(value["messages"])
        if "content" in value:
            return [_text(value["content"])]
        return [_text(value.get("text"))] if isinstance(value.get("text"), str) else []
    if isinstance(value, list):
        return [t for item in value for t in _messages_text(item)]
    return []


def _model_call(observation: Mapping[str, Any]) -> ModelCall:
    prompt = _messages_text(observation.get("input"))
    reply = _messages_text(observation.get("output"))
    return ModelCall(prompt="\n".join(p for p in prompt if p), output="".join(reply))


def _kind(observation: Mapping[str, Any]) -> str:
    return str(observation.get("type") or "").upper()


def _inside_retriever(observation: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]]) -> bool:
    at = by_id.get(str(observation.get("parentObservationId")))
    while at is not None:
        if _kind(at) == "RETRIEVER":
            return True
        at = by_id.get(str(at.get("parentObservationId")))
    return False


def _started(value: Any, where: str | None) -> str:
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise DataError(f"startTime {value!r} is not an ISO 8601 time", path=where, field="startTime") from None
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone(timezone.utc).isoformat()


def sample_of_observations(observations: Sequence[Mapping[str, Any]],
                           trace: Mapping[str, Any] | None = None) -> Sample:
    """The sample one trace's observations become, by live capture's rule; ``trace`` is the trace
    object they came in, when the export has one."""
    by_id = {str(o["id"]): o for o in observations}
    ordered = sorted(observations, key=lambda o: (str(o.get("startTime") or ""), str(o["id"])))
    roots = [o for o in ordered if not o.get("parentObservationId")]
    where = ordered[0].get("_where") if ordered else (trace or {}).get("_where")
    trace_id = str((trace or {}).get("id") or (ordered[0].get("traceId") if ordered else ""))
    if not roots:
        raise DataError(f"trace {trace_id}: {len(ordered)} observation(s) but not its root observation; the export "
                        "may be cut short", path=where)
    root = roots[0]
    retrievers = [o for o in ordered if _kind(o) == "RETRIEVER" and not _inside_retriever(o, by_id)]
    retrievals = [_documents(o.get("output")) for o in retrievers]
    generations = [o for o in ordered if _kind(o) == "GENERATION"]
    calls = [_model_call(o) for o in generations]
    inputs = _io(trace.get("input")) if trace and trace.get("input") is not None else _io(root.get("input"))
    outputs = _io(trace.get("output")) if trace and trace.get("output") is not None else _io(root.get("output"))
    notes = []
    if str(root.get("level") or "").upper() == "ERROR":
        notes.append(f"the app's run ended in an error: {str(root.get('statusMessage') or '')[:200]}")
    started = (trace or {}).get("timestamp") or root.get("startTime")
    return trace_sample(trace_id, question_of(_plain(inputs)), answer_of(_plain(outputs)), retrievals, calls,
                        retriever="RETRIEVER observation", model_call="GENERATION observation", notes=notes,
                        metadata={"trace_id": trace_id, "started": _started(started, root.get("_where")),
                                  "root": str((trace or {}).get("name") or root.get("name") or "")})


def read_langfuse_samples(path: str | Path, *, problems: list[DataError]) -> Iterator[Sample]:
    """The sample of every complete trace in a Langfuse export; problems appended to ``problems``."""
    for trace, observations in read_langfuse_traces(path, problems=problems):
        try:
            yield sample_of_observations(observations, trace)
        except DataError as exc:
            problems.append(exc)
