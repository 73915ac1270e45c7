"""Which kind of trace export a path holds, and its samples read by the matching reader.

The format is read from the keys of the first file's opening bytes: ``"resourceSpans"`` is OTLP,
``"run_type"`` a LangSmith run, ``"parentObservationId"`` / ``"observations"`` / ``"projectId"``
Langfuse, whichever comes first (keys, being quoted outside any string, cannot be mistaken for text
inside an attribute, where their quotes are escaped).

>>> import json, pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "o.json").write_text(json.dumps([{"id": "o1", "traceId": "t1", "parentObservationId": None}]))
>>> export_format(folder / "o.json")
'langfuse'
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import DataError
from ..files.reading import read_lines
from ..types import Sample
from .otlp import trace_files

__all__ = ["FORMATS", "export_format", "read_export_samples"]

FORMATS = ("otlp", "langsmith", "langfuse")
_MARKERS = {'"resourceSpans"': "otlp", '"run_type"': "langsmith", '"parentObservationId"': "langfuse",
            '"observations"': "langfuse", '"projectId"': "langfuse"}
_PREFIX = 1 << 16  # enough for the first record's keys; the rest of the file is not read here


def export_format(path: str | Path) -> str:
    """``otlp``, ``langsmith`` or ``langfuse`` for the export at ``path`` (OTLP when nothing says)."""
    first = trace_files(path)[0]
    head, size = [], 0
    for raw in read_lines(first, what="trace export"):
        head.append(raw.decode("utf-8", errors="replace"))
        size += len(raw)
        if size >= _PREFIX:
            break
    text = "".join(head)[:_PREFIX]
    found = sorted((at, kind) for marker, kind in _MARKERS.items() if (at := text.find(marker)) >= 0)
    if found:
        return found[0][1]
    return "langsmith" if text.lstrip().startswith("[") else "otlp"


def read_export_samples(path: str | Path, fmt: str | None, *, problems: list[DataError]) -> Iterator[Sample]:
    """Every complete trace's sample from the export at ``path`` in ``fmt`` (detected when None)."""
    fmt = fmt or export_format(path)
    if fmt == "langsmith":
        from .langsmith import read_run_samples
        return read_run_samples(path, problems=problems)
    if fmt == "langfuse":
        from .langfuse import read_langfuse_samples
        return read_langfuse_samples(path, problems=problems)
    from .openinference import sample_of_trace
    from .otlp import read_traces
    return (sample_of_trace(t) for t in read_traces(path, problems=problems))
