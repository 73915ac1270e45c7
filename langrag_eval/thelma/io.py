"""Reading THELMA's input: a CSV, TSV or JSONL file with a query, its retrieved sources and the
response per row (column names configurable), as ``langrag-eval thelma`` reads it.

The sources cell holds a JSON list of texts (in CSV, a cell holding that JSON; empty means none).
A row that cannot be used (a query that is not text, sources that are not a JSON list, a repeated
id) is skipped and reported as a :class:`~langrag_eval.errors.DataError` naming file, line and
field; the other rows are still read. Without an id column a sample's id is ``line-N``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DataError
from ..files.tables import read_table, require_columns
from ..files.jsontext import parse_json
from ..types import Sample

__all__ = ["read_samples"]


def _kind(value: object) -> str:
    return {"dict": "an object", "int": "a number", "float": "a number", "bool": "true/false"}.get(
        type(value).__name__, type(value).__name__)


def read_samples(path: str | Path, *, query: str = "query", sources: str = "sources",
                 response: str = "response", id_col: str | None = None, format: str | None = None
                 ) -> tuple[list[Sample], dict[str, int], list[DataError]]:
    """The readable rows as samples, each sample's line by id, and one DataError per skipped row.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "traffic.jsonl"
    >>> _ = p.write_text('{"query": "Who?", "sources": ["Ada wrote it."], "response": "Ada."}\\n'
    ...                  '{"query": "When?", "sources": "[oops", "response": "1843."}\\n')
    >>> samples, lines, issues = read_samples(p)
    >>> [s.id for s in samples], lines, [(i.line, i.field) for i in issues]
    (['line-1'], {'line-1': 1}, [(2, 'sources')])
    """
    table = read_table(path, format=format)  # type: ignore[arg-type]
    require_columns(table, {"query": query, "sources": sources, "response": response,
                            **({"id": id_col} if id_col else {})})
    id_col = id_col or ("id" if "id" in table.columns else None)
    issues = list(table.issues)
    samples: list[Sample] = []
    lines: dict[str, int] = {}
    for row in table.rows:
        def bad(message: str, field: str, line: int = row.line) -> None:
            issues.append(DataError(f"{message}; row skipped", path=table.path, line=line, field=field))
        q, s, r = row.values.get(query), row.values.get(sources), row.values.get(response)
        if not isinstance(q, str):
            bad(f"the query must be text, not {type(q).__name__}", query)
            continue
        if r is not None and not isinstance(r, str):
            bad(f"the response must be text or null, not {type(r).__name__}", response)
            continue
        if isinstance(s, str):
            try:
                s = parse_json(s) if s.strip() else []
            except json.JSONDecodeError:
                shown = s if len(s) <= 40 else s[:40] + "..."
                bad(f'expected a list of source texts such as ["first passage", "second passage"], '
                    f"got the text {shown!r}", sources)
                continue
        if s is None:
            s = []
        if not isinstance(s, list):
            bad(f'expected a list of source texts such as ["first passage", "second passage"], '
                f"got {_kind(s)}", sources)
            continue
        sid = str(row.values.get(id_col)) if id_col and row.values.get(id_col) not in (None, "") \
            else f"line-{row.line}"
        if sid in lines:
            bad(f"id {sid!r} already used on line {lines[sid]}", id_col or "id")
            continue
        lines[sid] = row.line
        samples.append(Sample(id=sid, question=q, contexts=s, answer=r))
    return samples, lines, issues
