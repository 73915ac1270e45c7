"""LangSmith run exports read into samples by live capture's rule.

An export is what ``langsmith.Client.list_runs`` gives, written out: a JSON list of runs, or JSONL
with one run per line (a file, or a folder of ``.json`` / ``.jsonl`` files). Runs are grouped by
``trace_id`` and nested by ``parent_run_id``; the root (the run without a parent in its trace) holds
the question and the answer; ``retriever`` runs give their ``outputs["documents"]``; ``llm`` and
``chat_model`` runs give the prompt (``inputs["messages"]`` or ``inputs["prompts"]``) and the reply
(``outputs["generations"]``). A retriever inside another retriever is left to its wrapper, as live
capture does. Messages may be LangChain's serialised form (``{"lc": 1, "kwargs": {...}}``) or plain.

Runs are held until the export has been read, since ``list_runs`` promises no order that closes a
trace early; memory grows with the export (OTLP exports are read in bounded memory).

>>> import json, pathlib, tempfile
>>> run = {"id": "r1", "trace_id": "r1", "run_type": "chain", "name": "app", "start_time": "2025-01-01T00:00:00",
...        "inputs": {"input": "Capital?"}, "outputs": {"output": "Paris."}}
>>> p = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
>>> _ = p.write_text(json.dumps(run) + "\\n")
>>> [(s.id, s.question, s.answer) for s in read_run_samples(p, problems=[])]
[('r1', 'Capital?', 'Paris.')]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..adapters.adapting import answer_of, question_of
from ..adapters.contexts import ModelCall
from ..errors import DataError
from ..files.reading import read_bytes, read_lines
from ..types import Document, Sample, text_id
from .otlp import _parse, trace_files
from .rule import trace_sample

__all__ = ["is_langsmith_export", "read_run_samples", "read_runs", "sample_of_runs"]

_MODEL_RUNS = ("llm", "chat_model")


def is_langsmith_export(path: str | Path) -> bool:
    """Whether the export at ``path`` holds LangSmith runs (see :func:`.formats.export_format`)."""
    from .formats import export_format
    return export_format(path) == "langsmith"


def _records(path: Path) -> Iterator[tuple[Any, str]]:
    lines = read_lines(path, what="trace export")
    for number, raw in enumerate(lines, start=1):
        text = raw.decode("utf-8", errors="surrogateescape").strip()
        if not text:
            continue
        if number == 1 and text.startswith("["):
            whole = _parse(read_bytes(path, what="trace export").decode("utf-8", errors="surrogateescape"), str(path))
            if isinstance(whole, DataError):
                yield whole, str(path)
                return
            for i, run in enumerate(whole):
                yield run, f"{path}: run {i}"
            return
        yield _parse(text, f"{path}:{number}"), f"{path}:{number}"


def read_runs(path: str | Path, *, problems: list[DataError]) -> Iterator[list[dict[str, Any]]]:
    """The runs of each trace in the export, in the order traces first appear. A record that is not
    a run, and a trace without its root run, are appended to ``problems``."""
    traces: dict[str, list[dict[str, Any]]] = {}
    for file in trace_files(path):
        try:
            for run, where in _records(file):
                if isinstance(run, DataError):
                    problems.append(run)
                elif not isinstance(run, Mapping) or not run.get("id") or not run.get("run_type"):
                    problems.append(DataError("not a LangSmith run (no id or run_type)", path=where))
                else:
                    run = {**run, "_where": where}
                    traces.setdefault(str(run.get("trace_id") or run["id"]), []).append(run)
        except DataError as exc:
            problems.append(exc)
    for trace_id, runs in traces.items():
        ids = {str(r["id"]) for r in runs}
        if not any(not r.get("parent_run_id") or str(r["parent_run_id"]) not in ids for r in runs) \
                or str(trace_id) not in ids:
            problems.append(DataError(f"trace {trace_id}: {len(runs)} run(s) but not its root run; the export "
                                      "may be cut short", path=runs[0]["_where"]))
            continue
        yield runs


def _plain(message: Any) -> Any:
    # LangChain's serialised message ({"lc": 1, "id": [..., "AIMessage"], "kwargs": {...}}) as a dict
    if isinstance(message, Mapping) and message.get("lc") and isinstance(message.get("kwargs"), Mapping):
        kind = str((message.get("id") or [""])[-1]).removesuffix("MessageChunk").removesuffix("Message").lower()
        return {"type": message["kwargs"].get("type") or kind, **message["kwargs"]}
    if isinstance(message, list):
        return [_plain(m) for m in message]
    if isinstance(message, Mapping):
        return {k: _plain(v) if k in ("messages", "output", "answer") else v for k, v in message.items()}
    return message


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content)
    return ""


def _documents(run: Mapping[str, Any]) -> list[Document]:
    out = run.get("outputs") or {}
    docs = []
    for d in out.get("documents") or [] if isinstance(out, Mapping) else []:
        d = d.get("kwargs", d) if isinstance(d, Mapping) and d.get("lc") else d
        if not isinstance(d, Mapping):
            continue
        text = d.get("page_content", d.get("text"))
        if not isinstance(text, str) or not text:
            continue
        metadata = d.get("metadata") if isinstance(d.get("metadata"), Mapping) else {}
        ident = d.get("id") or metadata.get("id") or text_id(text)
        docs.append(Document(id=str(ident), text=text, metadata=dict(metadata)))
    return docs


def _model_call(run: Mapping[str, Any]) -> ModelCall:
    inputs, outputs = run.get("inputs") or {}, run.get("outputs") or {}
    prompt: list[str] = []
    for row in inputs.get("messages") or []:
        for m in row if isinstance(row, list) else [row]:
            m = _plain(m)
            prompt.append(_text(m.get("content")) if isinstance(m, Mapping) else str(m))
    prompt += [p for p in inputs.get("prompts") or [] if isinstance(p, str)]
    reply = []
    for row in outputs.get("generations") or []:
        for g in row if isinstance(row, list) else [row]:
            if isinstance(g, Mapping):
                message = _plain(g.get("message"))
                reply.append(g.get("text") or (_text(message.get("content")) if isinstance(message, Mapping) else ""))
    return ModelCall(prompt="\n".join(p for p in prompt if p), output="".join(reply))


def _inside_retriever(run: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]]) -> bool:
    at = by_id.get(str(run.get("parent_run_id")))
    while at is not None:
        if at.get("run_type") == "retriever":
            return True
        at = by_id.get(str(at.get("parent_run_id")))
    return False


def _started(run: Mapping[str, Any]) -> str:
    value = run.get("start_time")
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise DataError(f"start_time {value!r} is not an ISO 8601 time", path=run.get("_where"),
                        field="start_time") from None
    # LangSmith writes UTC times without an offset
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone(timezone.utc).isoformat()


def sample_of_runs(runs: Sequence[Mapping[str, Any]]) -> Sample:
    """The sample one trace's runs become, by live capture's rule."""
    by_id = {str(r["id"]): r for r in runs}
    ordered = sorted(runs, key=lambda r: (str(r.get("dotted_order") or ""), str(r.get("start_time") or "")))
    root = next(r for r in ordered if not r.get("parent_run_id") or str(r["parent_run_id"]) not in by_id)
    retrievals = [_documents(r) for r in ordered if r.get("run_type") == "retriever" and not _inside_retriever(r, by_id)]
    calls = [_model_call(r) for r in ordered if r.get("run_type") in _MODEL_RUNS]
    inputs, outputs = _plain(root.get("inputs")), _plain(root.get("outputs"))
    trace_id = str(root.get("trace_id") or root["id"])
    notes = [f"the app's run ended in an error: {str(root['error'])[:200]}"] if root.get("error") else []
    return trace_sample(trace_id, question_of(inputs), answer_of(outputs), retrievals, calls,
                        retriever="retriever run", model_call="llm run", notes=notes,
                        metadata={"trace_id": trace_id, "started": _started(root), "root": str(root.get("name", ""))})


def read_run_samples(path: str | Path, *, problems: list[DataError]) -> Iterator[Sample]:
    """The sample of every complete trace in a LangSmith export; problems appended to ``problems``."""
    for runs in read_runs(path, problems=problems):
        try:
            yield sample_of_runs(runs)
        except DataError as exc:
            problems.append(exc)
