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

import collections
import csv
import itertools
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal

from ..errors import DataError
from .jsontext import LoneSurrogateError, lines_of, parse_json
from .reading import check_regular, read_bytes, read_lines, read_text

# read_bytes, read_text and parse_json live in .reading and .jsontext; they are named here too, as
# the table readers' public companions.
__all__ = ["Row", "Table", "TableStream", "read_table", "stream_table", "read_bytes", "read_text", "require_columns", "TableFormat", "parse_json",
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
        except LoneSurrogateError as exc:
            yield number, DataError(exc.reason, path=str(p), line=number, field=exc.field)
            continue
        except json.JSONDecodeError as exc:
            yield number, DataError(f"not valid JSON ({exc.msg} at column {exc.colno})", path=str(p), line=number)
            continue
        if not isinstance(obj, dict):
            yield number, DataError(f"expected a JSON object, got {type(obj).__name__}", path=str(p), line=number)
            continue
        yield number, obj


@dataclass
class TableStream:
    """A table read a line at a time: ``rows`` yields each :class:`Row` or the ``DataError`` of a
    row that could not be read, in file order. ``columns``: a CSV's header; a JSONL file's keys as
    far as ``rows`` has been read (all of them once it is exhausted)."""

    path: str
    format: TableFormat
    columns: list[str]
    rows: Iterator[Row | DataError]


def stream_table(path: str | Path, *, format: TableFormat | None = None) -> TableStream:
    """Open a CSV/TSV or JSONL file for reading a row at a time (the file is never held whole);
    a file that cannot be read at all raises :class:`DataError` here, a bad row is yielded as one.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = p.write_text('{"id": 1}\\nnot json\\n', encoding="utf-8")
    >>> t = stream_table(p)
    >>> [r.line if isinstance(r, Row) else r.message for r in t.rows], t.columns
    ([1, 'not valid JSON (Expecting value at column 1); line skipped'], ['id'])
    """
    p = Path(path)
    check_regular(p)  # before the format check, whose complaint about the name would mislead
    fmt = _format_of(p, format)
    lines = read_lines(p)
    first = next(lines, b"")
    if first.startswith(b"\xef\xbb\xbf"):
        first = first[3:]
    if first.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError("not UTF-8 (looks like UTF-16); save it as UTF-8", path=str(p), line=1)
    # blank lines before the first text are few: held until the file is known not to be empty
    head = [first.decode("utf-8", errors="surrogateescape")]
    while not head[-1].strip():
        more = next(lines, None)
        if more is None:
            raise DataError("the file is empty", path=str(p))
        head.append(more.decode("utf-8", errors="surrogateescape"))
    text = itertools.chain(head, (line.decode("utf-8", errors="surrogateescape") for line in lines))
    if fmt == "jsonl":
        table = TableStream(str(p), fmt, [], iter(()))
        table.rows = _jsonl_rows(p, text, table.columns)
        return table
    return _csv_stream(p, text, fmt)


def read_table(path: str | Path, *, format: TableFormat | None = None) -> Table:
    """Read a CSV/TSV (header row) or JSONL (one object a line) file. See the module docstring."""
    stream = stream_table(path, format=format)
    table = Table(path=stream.path, format=stream.format, columns=stream.columns)
    for row in stream.rows:
        (table.rows if isinstance(row, Row) else table.issues).append(row)  # type: ignore[arg-type]
    return table


_LONE_CR = re.compile(r"(?<=\r)(?!\n)")


def _csv_lines(text: Iterator[str]) -> Iterator[str]:
    # the csv module's own reading of a file opened with newline="": a lone \r ends a line too
    for line in text:
        if "\r" in line:
            yield from (part for part in _LONE_CR.split(line) if part)
        else:
            yield line


def _csv_stream(p: Path, text: Iterator[str], fmt: TableFormat) -> TableStream:
    csv_cells_unbounded(p.stat().st_size)
    reader = csv.reader(_csv_lines(text), delimiter="\t" if fmt == "tsv" else ",")
    try:
        header = next(reader)
    except csv.Error as exc:
        raise DataError(f"cannot read the header row: {exc}", path=str(p), line=1) from None
    header = [h.strip() for h in header]
    for h in header:
        if (why := _not_utf8(h)) is not None:
            raise DataError(f"the header row is {why}; save the file as UTF-8", path=str(p), line=1)
    # counted in one pass: list.count per column is quadratic, minutes for 10^5 columns
    dup = sorted(h for h, n in collections.Counter(header).items() if n > 1 and h)
    if dup:
        raise DataError(f"repeated column name(s) in the header: {', '.join(dup)}", path=str(p), line=1)
    return TableStream(str(p), fmt, [h for h in header if h], _csv_rows(p, reader, header))


def _csv_rows(p: Path, reader: Any, header: list[str]) -> Iterator[Row | DataError]:
    last = reader.line_num
    while True:
        start = last + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            yield DataError(f"malformed CSV row: {exc}", path=str(p), line=start)
            last = reader.line_num
            continue
        last = reader.line_num
        if not any(cell.strip() for cell in record):
            continue  # blank line
        if len(record) > len(header):
            yield DataError(f"{len(record)} fields but the header has {len(header)}; row skipped",
                            path=str(p), line=start)
            continue
        values = {h: record[i] if i < len(record) else "" for i, h in enumerate(header) if h}
        bad = next(((k, why) for k, v in values.items() if (why := _not_utf8(v))), None)
        if bad is not None:
            yield DataError(f"{bad[1]}; row skipped", path=str(p), line=start, field=bad[0])
            continue
        yield Row(line=start, values=values)


def _walk_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _walk_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _walk_strings(v)]
    return []


def _jsonl_rows(p: Path, text: Iterator[str], columns: list[str]) -> Iterator[Row | DataError]:
    seen: dict[str, None] = {}
    first: DataError | None = None
    rows = 0
    for number, line in enumerate(text, start=1):
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip():
            continue
        try:
            obj = parse_json(line)
        except LoneSurrogateError as exc:  # a byte that is not UTF-8 (decoded as one), or a \udc80 escape
            why = _not_utf8(exc.holder) if exc.char in line else exc.reason
            problem = DataError(f"{why}; line skipped", path=str(p), line=number, field=exc.field)
        except json.JSONDecodeError as exc:
            # a line that is not JSON because of bytes that are not UTF-8 is reported as such
            why = _not_utf8(line) or f"not valid JSON ({exc.msg} at column {exc.colno})"
            problem = DataError(f"{why}; line skipped", path=str(p), line=number)
        else:
            if not isinstance(obj, dict):
                problem = DataError(f"expected a JSON object, got {type(obj).__name__}; line skipped",
                                    path=str(p), line=number)
            else:
                bad = next(((k, why) for k, v in obj.items() for s in _walk_strings(v)
                            if (why := _not_utf8(s))), None)
                problem = None if bad is None else DataError(f"{bad[1]}; line skipped", path=str(p),
                                                             line=number, field=bad[0])
        if problem is not None:
            first = first or problem
            yield problem
            continue
        for key in obj:
            if str(key) not in seen:
                seen[str(key)] = None
                columns.append(str(key))
        rows += 1
        yield Row(line=number, values={str(k): v for k, v in obj.items()})
    if not rows and first is not None:
        raise DataError(f"no line could be read; first problem: {first}", path=str(p))


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
