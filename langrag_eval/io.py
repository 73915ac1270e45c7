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
import errno
import hashlib
import io
import json
import os
import re
import stat
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal

from .errors import DataError

__all__ = ["Row", "Table", "read_table", "read_bytes", "read_text", "require_columns", "TableFormat", "parse_json",
           "jsonl_objects"]
# Also used across the package (not in the public API): lines_of, check_regular, digest_of_read,
# finite_number, csv_cells_unbounded.

TableFormat = Literal["csv", "tsv", "jsonl"]
_ESCAPED = re.compile(r"[\udc80-\udcff]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (write a number, or null for a missing one)")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is too large to be a number here (it reads as infinity)")
    return value


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object; which value is meant "
                         "cannot be told, so neither is read")
        self.key = key


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return obj


def parse_json(text: str) -> Any:
    """JSON as a user's file should hold it. Python's parser also takes ``NaN`` and ``Infinity``,
    which would be graded as the text "nan", and keeps the last of a repeated key; both are refused
    here, as are integers too long to convert. Every refusal is a :class:`json.JSONDecodeError` with
    a readable ``msg``.

    >>> parse_json('{"a": 1}')
    {'a': 1}
    >>> parse_json('{"a": NaN}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    json.decoder.JSONDecodeError: NaN is not a JSON value ...
    >>> parse_json('{"a": 1, "a": 2}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    json.decoder.JSONDecodeError: the key 'a' appears twice in one object; ...
    """
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                          object_pairs_hook=_one_value_per_key)
    except json.JSONDecodeError:
        raise
    except _RepeatedKey as exc:
        where = [m.start() for m in re.finditer(re.escape(json.dumps(exc.key, ensure_ascii=False)), text)]
        raise json.JSONDecodeError(str(exc), text, where[1] if len(where) > 1 else 0) from None
    except ValueError as exc:  # NaN/Infinity above, or an integer over Python's digit limit
        message = str(exc)
        if "Exceeds the limit" in message:
            message = "a number has too many digits (more than 4,300)"
            where = re.search(r"\d{4301}", text)
        elif "infinity)" in message:
            where = re.search(re.escape(message.split(" ", 1)[0]), text)
        else:
            where = re.search(r"-?(?:NaN|Infinity)", text)
        raise json.JSONDecodeError(message, text, where.start() if where else 0) from None
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


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


def lines_of(text: str) -> list[str]:
    """``text`` split at line feeds only (a ``\\r`` before one goes with it). ``str.splitlines`` also
    splits at U+2028, U+2029, U+0085 and other characters that JSON strings hold as plain data.

    >>> lines_of('{"a": "x\u2028y"}\\r\\n{"b": 2}')
    ['{"a": "x\u2028y"}', '{"b": 2}']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def _refusal(exc: OSError, what: str, p: str) -> DataError:
    if exc.errno == errno.ENOENT:
        return DataError(f"{what} not found", path=p)
    if exc.errno == errno.ELOOP:
        return DataError(f"{what} is a symbolic link that leads back to itself (a loop); "
                         "name the file itself", path=p)
    if exc.errno == errno.EISDIR:
        return DataError(f"{what} is a directory, not a file", path=p)
    return DataError(f"cannot read the {what}: {exc.strerror}", path=p)


def check_regular(path: str | Path, *, what: str = "file") -> None:
    """Refuse, in one line and before anything opens it, a ``path`` that is missing, a directory,
    a named pipe, a device or a symbolic link loop: reading a pipe or a device could wait forever.

    >>> import tempfile
    >>> check_regular(tempfile.mkdtemp(), what="answers file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    langrag_eval.errors.DataError: ...: answers file is a directory, not a file
    """
    p = str(path)
    try:
        mode = os.stat(p).st_mode
    except (OSError, ValueError) as exc:
        raise _refusal(exc if isinstance(exc, OSError) else OSError(errno.EINVAL, str(exc)), what, p) from None
    if stat.S_ISDIR(mode):
        raise DataError(f"{what} is a directory, not a file", path=p)
    if not stat.S_ISREG(mode):
        raise DataError(f"{what} is {_kind(mode)}, not a regular file; give a file", path=p)


# The digest of each file read, keyed by what identifies its content on disk, so that a command
# that reads a file and then keys its run by the file's digest reads it once, not twice.
_DIGESTS: dict[tuple[int, int, int, int, int], str] = {}
_DIGESTS_LOCK = threading.Lock()


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def digest_of_read(path: str | Path) -> str | None:
    """The sha256 of ``path``'s bytes when this process has read them and the file is unchanged
    since (same inode, size and times), else None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    with _DIGESTS_LOCK:
        return _DIGESTS.get(_identity(st))


def read_bytes(path: str | Path, *, what: str = "file") -> bytes:
    """The bytes of a regular file, or a :class:`DataError` naming it: missing, a directory, a pipe,
    a device, a symbolic link loop, unreadable. A pipe is refused without waiting for a writer."""
    p = str(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _refusal(exc, what, p) from None
    except ValueError as exc:  # a NUL in the name
        raise DataError(f"cannot read the {what}: {exc}", path=p) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise DataError(f"{what} is a directory, not a file", path=p)
        if not stat.S_ISREG(st.st_mode):
            raise DataError(f"{what} is {_kind(st.st_mode)}, not a regular file; give a file", path=p)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read()
    except OSError as exc:
        raise _refusal(exc, what, p) from None
    finally:
        os.close(fd)
    if len(data) == st.st_size:  # what was read is what the file held when it was opened
        with _DIGESTS_LOCK:
            _DIGESTS[_identity(st)] = hashlib.sha256(data).hexdigest()
    return data


def finite_number(value: Any, *, path: str | None = None, line: int | None = None,
                  field: str | None = None) -> float:
    """``value`` (a number, or text holding one) as a finite float, or a :class:`DataError` naming
    the file, line and field: ``NaN`` and infinities are no score, rank or price.

    >>> finite_number("2.5")
    2.5
    >>> finite_number("NaN", path="docs.csv", line=3, field="rank")
    Traceback (most recent call last):
    langrag_eval.errors.DataError: docs.csv:3: field "rank": 'NaN' is not a finite number
    """
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise DataError(f"{value!r} is not a number", path=path, line=line, field=field) from None
    if number != number or number in (float("inf"), float("-inf")):
        raise DataError(f"{value!r} is not a finite number", path=path, line=line, field=field)
    return number


def csv_cells_unbounded(text_length: int) -> None:
    """Let the csv module read a cell as long as the whole text: its default limit (128 KiB) makes
    it stop inside a long cell and read the rest as new rows. The limit is only ever raised (it is
    the process's), so readers in several threads cannot lower it under one another."""
    needed = min(text_length + 1, sys.maxsize)
    if csv.field_size_limit() < needed:
        csv.field_size_limit(needed)


def read_text(path: str | Path, *, what: str = "file") -> str:
    """The whole of a UTF-8 text file, or a :class:`DataError` naming the file and what is wrong
    with it (missing, a directory, unreadable, not UTF-8) instead of an ``OSError`` traceback.

    >>> import tempfile
    >>> read_text(tempfile.mkdtemp(), what="examples file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    langrag_eval.errors.DataError: ...: examples file is a directory, not a file
    """
    p = Path(path)
    data = read_bytes(p, what=what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8",
                        path=str(p), line=line) from None


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
