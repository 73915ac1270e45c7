"""Reading CSV and JSONL tables with the file, line and field of every problem.

:func:`read_table` returns the rows it could read, each with the line it starts on, and one
:class:`~langrag_eval.errors.DataError` per row it could not (a JSONL line that is not a JSON object,
a field that is not UTF-8), so callers can report those and go on with the rest. A file that cannot
be read at all (missing, a directory, empty, a header that is not UTF-8) raises ``DataError``.

Bytes that are not UTF-8 are located to the row and field that hold them: the file is decoded with
``surrogateescape`` and a row holding an escaped byte is reported rather than guessed at.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = p.write_text("id,text\\n1,hello\\n2,world\\n", encoding="utf-8")
>>> t = read_table(p)
>>> t.columns, [(r.line, r.values["text"]) for r in t.rows]
(['id', 'text'], [(2, 'hello'), (3, 'world')])
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal

from .errors import DataError
from .jsontext import lines_of, parse_json
from .reading import check_regular, read_bytes, read_text

# read_bytes, read_text and parse_json live in .reading and .jsontext; they are named here too, as
# the table readers' public companions.
__all__ = ["Row", "Table", "read_table", "read_bytes", "read_text", "require_columns", "TableFormat", "parse_json",
           "jsonl_objects", "csv_cells_unbounded"]

TableFormat = Literal["csv", "tsv", "jsonl"]
_ESCAPED = re.compile(r"[\udc80-\udcff]")

@dataclass(frozen=True)
class Row:
    """One record: the 1-based line it starts on and its values (CSV: strings; JSONL: JSON values)."""

    line: int
    values: dict[str, Any]


@dataclass
class Table:
    path: str
    format: TableFormat
    columns: list[str]
    rows: list[Row] = field(default_factory=list)
    issues: list[DataError] = field(default_factory=list)


def _format_of(path: Path, fmt: str | None) -> TableFormat:
    name = (fmt or path.suffix.lstrip(".")).lower()
    name = {"ndjson": "jsonl", "json": "jsonl"}.get(name, name)
    if name not in ("csv", "tsv", "jsonl"):
        raise DataError("cannot tell the format from the file name; expected .csv, .tsv or .jsonl "
                        "(or name the format)", path=str(path))
    return name  # type: ignore[return-value]


def _not_utf8(value: str) -> str | None:
    m = _ESCAPED.search(value)
    if m is None:
        return None
    return f"not UTF-8 (byte 0x{ord(m.group(0)) - 0xDC00:02x} at character {m.start() + 1})"


def csv_cells_unbounded(text_length: int) -> None:
    """Let the csv module read a cell as long as the whole text: its default limit (128 KiB) makes
    it stop inside a long cell and read the rest as new rows. The limit is only ever raised (it is
    the process's), so readers in several threads cannot lower it under one another."""
    needed = min(text_length + 1, sys.maxsize)
    if csv.field_size_limit() < needed:
        csv.field_size_limit(needed)


def jsonl_objects(path: str | Path, text: str | None = None, *, what: str = "file"
                  ) -> Iterator[tuple[int, dict[str, Any] | DataError]]:
    """Each non-blank line of a JSONL file as ``(line number, object)``, or ``(line number, DataError)``
    naming the file and line where the line is not JSON or not a JSON object: a strict reader raises
    the error, a forgiving one reports it and goes on. ``text``: the file's content, when already read.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.jsonl"
    >>> _ = p.write_text('{"q": 1}\\n\\n[2]\\n{"q": 3', encoding="utf-8")
    >>> [(n, o if isinstance(o, dict) else o.message) for n, o in jsonl_objects(p)]  # doctest: +NORMALIZE_WHITESPACE
    [(1, {'q': 1}), (3, 'expected a JSON object, got list'),
     (4, "not valid JSON (Expecting ',' delimiter at column 8)")]
    """
    p = Path(path)
    content = read_text(p, what=what) if text is None else text
    for number, line in enumerate(lines_of(content), start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line)
        except json.JSONDecodeError as exc:
            yield number, DataError(f"not valid JSON ({exc.msg} at column {exc.colno})", path=str(p), line=number)
            continue
        if not isinstance(obj, dict):
            yield number, DataError(f"expected a JSON object, got {type(obj).__name__}", path=str(p), line=number)
            continue
        yield number, obj


def read_table(path: str | Path, *, format: TableFormat | None = None) -> Table:
    """Read a CSV/TSV (header row) or JSONL (one object a line) file. See the module docstring."""
    p = Path(path)
    check_regular(p)  # before the format check, whose complaint about the name would mislead
    fmt = _format_of(p, format)
    data = read_bytes(p)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError("not UTF-8 (looks like UTF-16); save it as UTF-8", path=str(p), line=1)
    text = data.decode("utf-8", errors="surrogateescape")
    if not text.strip():
        raise DataError("the file is empty", path=str(p))
    return _read_jsonl(p, text) if fmt == "jsonl" else _read_csv(p, text, fmt)


def _read_csv(p: Path, text: str, fmt: TableFormat) -> Table:
    csv_cells_unbounded(len(text))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if fmt == "tsv" else ",")
    try:
        header = next(reader)
    except csv.Error as exc:
        raise DataError(f"cannot read the header row: {exc}", path=str(p), line=1) from None
    header = [h.strip() for h in header]
    for h in header:
        if (why := _not_utf8(h)) is not None:
            raise DataError(f"the header row is {why}; save the file as UTF-8", path=str(p), line=1)
    dup = sorted({h for h in header if header.count(h) > 1 and h})
    if dup:
        raise DataError(f"repeated column name(s) in the header: {', '.join(dup)}", path=str(p), line=1)
    table = Table(path=str(p), format=fmt, columns=[h for h in header if h])
    last = reader.line_num
    while True:
        start = last + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            table.issues.append(DataError(f"malformed CSV row: {exc}", path=str(p), line=start))
            last = reader.line_num
            continue
        last = reader.line_num
        if not any(cell.strip() for cell in record):
            continue  # blank line
        if len(record) > len(header):
            table.issues.append(DataError(f"{len(record)} fields but the header has {len(header)}; "
                                          "row skipped", path=str(p), line=start))
            continue
        values = {h: record[i] if i < len(record) else "" for i, h in enumerate(header) if h}
        bad = next(((k, why) for k, v in values.items() if (why := _not_utf8(v))), None)
        if bad is not None:
            table.issues.append(DataError(f"{bad[1]}; row skipped", path=str(p), line=start, field=bad[0]))
            continue
        table.rows.append(Row(line=start, values=values))
    return table


def _walk_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _walk_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _walk_strings(v)]
    return []


def _read_jsonl(p: Path, text: str) -> Table:
    table = Table(path=str(p), format="jsonl", columns=[])
    seen: dict[str, None] = {}
    lines = lines_of(text)
    for number, obj in jsonl_objects(p, text):
        if isinstance(obj, DataError):
            # a line that is not JSON because of bytes that are not UTF-8 is reported as such
            why = _not_utf8(lines[number - 1]) if obj.message.startswith("not valid JSON") else None
            table.issues.append(DataError(f"{why or obj.message}; line skipped", path=str(p), line=number))
            continue
        bad = next(((k, why) for k, v in obj.items() for s in _walk_strings(v)
                    if (why := _not_utf8(s))), None)
        if bad is not None:
            table.issues.append(DataError(f"{bad[1]}; line skipped", path=str(p), line=number, field=bad[0]))
            continue
        for key in obj:
            seen.setdefault(str(key), None)
        table.rows.append(Row(line=number, values={str(k): v for k, v in obj.items()}))
    table.columns = list(seen)
    if not table.rows and table.issues:
        raise DataError(f"no line could be read; first problem: {table.issues[0]}", path=str(p))
    return table


def require_columns(table: Table, columns: dict[str, str]) -> None:
    """Raise one DataError naming every missing column. ``columns`` maps a role to a column name,
    as in ``{"label": "ground_truth"}``; the message names the option role and what the file has."""
    missing = [f"{name!r} (the {role} column)" for role, name in columns.items() if name not in table.columns]
    if missing:
        where = "in the header" if table.format != "jsonl" else "on any line"
        noun = "column" if len(missing) == 1 else "columns"
        raise DataError(f"missing {noun} {', '.join(missing)}: not {where}; columns found: "
                        f"{', '.join(table.columns) or 'none'}", path=table.path,
                        line=1 if table.format != "jsonl" else None)
