"""Reading a grading file (CSV/TSV/JSONL) into samples, human grades and subjects; also a file of
scores by id (:func:`read_scores`) and a file of graded few-shot examples (:func:`read_examples`).

Column names are configurable (:class:`Columns`). A missing required column (question, answer,
label, or any human or subject column asked for) raises :class:`DataError`: nothing could be graded.
Problems in single rows are collected as ``DataError`` issues naming file, line and field, and the
other rows are still graded:

- an empty answer, question or label: the row is kept and graded ``Unscored`` (``invalid_input``,
  no model call);
- a human score that is not an integer from 1 to 5: that score is dropped (counted as not given);
- a repeated id: the later row is skipped (results are keyed by id);
- a row that is not UTF-8 or not valid JSON: skipped (see :mod:`langrag_eval.files.tables`).

Without an id column, an item's id is ``line-N`` (its line in the file).

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "qa.csv"
>>> _ = p.write_text("id,question,answer,label,h1\\nq1,Why?,Because.,Because,4\\nq2,How?,,So,x\\n")
>>> data = read_grading_file(p, Columns(humans=("h1",)))
>>> [s.id for s in data.samples], data.humans["q1"], [(i.line, i.field) for i in data.issues]
(['q1', 'q2'], {'h1': 4}, [(3, 'answer'), (3, 'h1')])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ..errors import ArgumentError, DataError
from ..files.tables import Row, TableFormat, parse_json, read_table, read_text, require_columns, stream_table
from ..types import Sample
from .grader import GradedExample

__all__ = ["Columns", "GradingData", "GradingScan", "read_grading_file", "scan_grading_file", "parse_score", "read_scores", "read_examples"]

_INT = re.compile(r"^\s*([1-9]\d*)(?:\.0*)?\s*$")


@dataclass(frozen=True)
class Columns:
    """Which columns hold what. ``id=None``: use ``id`` when the file has it, else line numbers."""

    question: str = "question"
    answer: str = "answer"
    label: str = "label"
    id: str | None = None
    humans: tuple[str, ...] = ()
    subject: str | None = None


@dataclass
class GradingData:
    path: str
    samples: list[Sample]
    humans: dict[str, dict[str, int | None]]       # item id -> {annotator column: score or None}
    subjects: dict[str, str | None]
    lines: dict[str, int]                           # item id -> line in the file
    issues: list[DataError] = field(default_factory=list)
    skipped: int = 0                                # rows not graded at all


def parse_score(value: Any, low: int = 1, high: int = 5) -> int | None:
    """An integer score from a cell (``4``, ``"4"``, ``"4.0"``); None for an empty cell.
    Raises :class:`~langrag_eval.errors.ArgumentError` (a ``ValueError``) for anything else,
    including scores outside ``low..high``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ArgumentError(f"score {value!r} is not a whole number from {low} to {high}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        n = value
    else:
        m = _INT.match(str(value))
        if not m:
            raise ArgumentError(f"score {value!r} is not a whole number from {low} to {high}")
        n = int(m.group(1))
    if not low <= n <= high:
        raise ArgumentError(f"score {value!r} is not a whole number from {low} to {high}")
    return n


def _text(row: Row, column: str, path: str, issues: list[DataError]) -> str | None:
    value = row.values.get(column)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    issues.append(DataError(f"expected text, got {type(value).__name__}; treated as empty",
                            path=path, line=row.line, field=column))
    return None


def _item_id(row: Row, id_col: str | None, path: str, issues: list[DataError]) -> str:
    raw_id = row.values.get(id_col) if id_col else None
    item_id = str(raw_id).strip() if raw_id is not None and str(raw_id).strip() else None
    if item_id is None:
        item_id = f"line-{row.line}"
        if id_col:
            issues.append(DataError(f"empty id; using {item_id}", path=path, line=row.line, field=id_col))
    return item_id


def _sample(row: Row, columns: Columns, id_col: str | None, path: str, issues: list[DataError], *,
            item_id: str | None = None) -> tuple[Sample, dict[str, int | None]]:
    """The row as a sample (its line and subject in the metadata) and its human grades."""
    item_id = item_id if item_id is not None else _item_id(row, id_col, path, [])
    question = _text(row, columns.question, path, issues)
    answer = _text(row, columns.answer, path, issues)
    label = _text(row, columns.label, path, issues)
    for role, column, value in (("question", columns.question, question),
                                ("answer", columns.answer, answer), ("label", columns.label, label)):
        if value is None or not value.strip():
            what = "missing" if column not in row.values else "empty"
            issues.append(DataError(f"{what} {role}; graded as unscored (invalid_input)",
                                    path=path, line=row.line, field=column))
    humans: dict[str, int | None] = {}
    for column in columns.humans:
        try:
            humans[column] = parse_score(row.values.get(column))
        except ValueError:
            humans[column] = None
            issues.append(DataError(f"human score {row.values.get(column)!r} is not an integer "
                                    "from 1 to 5; left out", path=path, line=row.line, field=column))
    subject = _text(row, columns.subject, path, issues) if columns.subject else None
    subject = subject.strip() or None if subject else None
    sample = Sample(id=item_id, question=question or "", answer=answer, reference=label,
                    metadata={"line": row.line, "subject": subject} if subject else {"line": row.line})
    return sample, humans


def read_grading_file(path: str | Path, columns: Columns = Columns(), *, format: str | None = None) -> GradingData:
    """Read ``path`` into :class:`GradingData`, every sample held; see the module docstring for
    the rules (:func:`scan_grading_file` reads a file of any size a row at a time)."""
    scan = scan_grading_file(path, columns, format=format)
    data = GradingData(path=scan.path, samples=list(scan.samples()), humans=scan.humans, subjects={},
                       lines={}, issues=scan.issues, skipped=scan.skipped)
    for s in data.samples:
        data.lines[s.id or ""] = s.metadata["line"]
        data.subjects[s.id or ""] = s.metadata.get("subject")
    return data


@dataclass
class GradingScan:
    """A grading file read once for its problems, human grades and row count, its samples not kept:
    :meth:`samples` reads the file again and yields them one at a time, so a file of any size is
    graded in constant memory. ``skip``: lines of rows that are not graded (a repeated id)."""

    path: str
    format: TableFormat
    columns: Columns
    id_col: str | None
    count: int = 0                                  # rows graded
    humans: dict[str, dict[str, int | None]] = field(default_factory=dict)
    issues: list[DataError] = field(default_factory=list)
    skipped: int = 0                                # rows not graded at all
    skip: set[int] = field(default_factory=set)

    def samples(self) -> Iterator[Sample]:
        """The graded rows as samples, in file order (the file read again)."""
        table = stream_table(self.path, format=self.format)
        for row in table.rows:
            if isinstance(row, Row) and row.line not in self.skip:
                yield _sample(row, self.columns, self.id_col, self.path, [])[0]


def scan_grading_file(path: str | Path, columns: Columns = Columns(), *, format: str | None = None) -> GradingScan:
    """Read ``path`` once, a row at a time, for what :meth:`GradingScan.samples` will yield; see
    the module docstring for the rules. Only the ids are held (to find repeated ones), never the rows."""
    table = stream_table(path, format=format)  # type: ignore[arg-type]
    if table.format == "jsonl":
        for _ in table.rows:  # a JSONL file's columns are the keys of all its lines: read them first
            pass
        found = table.columns
        table = stream_table(path, format=format)  # type: ignore[arg-type]
        table.columns = found
    required = {"question": columns.question, "answer": columns.answer, "label": columns.label}
    required.update({f"human score ({h})": h for h in columns.humans})
    if columns.subject:
        required["subject"] = columns.subject
    if columns.id:
        required["id"] = columns.id
    require_columns(table, required)  # type: ignore[arg-type]
    id_col = columns.id or ("id" if "id" in table.columns else None)
    scan = GradingScan(path=table.path, format=table.format, columns=columns, id_col=id_col)
    problems: list[DataError] = []                  # the table's own come first, then the rows'
    first_line: dict[str, int] = {}
    for row in table.rows:
        if isinstance(row, DataError):
            scan.issues.append(row)
            scan.skipped += 1
            continue
        item_id = _item_id(row, id_col, table.path, problems)
        if item_id in first_line:
            problems.append(DataError(f"repeated id {item_id!r} (first on line {first_line[item_id]}); "
                                      "row skipped", path=table.path, line=row.line, field=id_col))
            scan.skipped += 1
            scan.skip.add(row.line)
            continue
        first_line[item_id] = row.line
        _, humans = _sample(row, columns, id_col, table.path, problems, item_id=item_id)
        scan.count += 1
        if columns.humans:
            scan.humans[item_id] = humans
    scan.issues.extend(problems)
    return scan
def read_scores(path: str | Path, id_col: str = "id", score_col: str = "score"
                ) -> tuple[dict[str, int | None], list[DataError]]:
    """``{id: score or None}`` from a CSV, TSV or JSONL file, with the problems found in it.

    An empty or ``null`` score is unscored (None); one that is not an integer from 1 to 5 is
    reported and counted as unscored; an empty or repeated id is reported and its row skipped.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "scores.csv"
    >>> _ = p.write_text("id,score\\nq1,4\\nq2,\\nq3,9\\nq1,2\\n")
    >>> scores, issues = read_scores(p)
    >>> scores, [(i.line, i.field) for i in issues]
    ({'q1': 4, 'q2': None, 'q3': None}, [(4, 'score'), (5, 'id')])
    """
    table = read_table(path)
    require_columns(table, {"id": id_col, "score": score_col})
    scores: dict[str, int | None] = {}
    lines: dict[str, int] = {}
    issues = list(table.issues)
    for row in table.rows:
        raw_id = row.values.get(id_col)
        item = str(raw_id).strip() if raw_id is not None else ""
        if not item:
            issues.append(DataError("empty id; row skipped", path=table.path, line=row.line, field=id_col))
            continue
        if item in scores:
            issues.append(DataError(f"repeated id {item!r} (first on line {lines[item]}); row skipped",
                                    path=table.path, line=row.line, field=id_col))
            continue
        value = row.values.get(score_col)
        try:
            scores[item] = parse_score(value)
        except ValueError:
            scores[item] = None
            issues.append(DataError(f"score {value!r} is not an integer from 1 to 5; counted as unscored",
                                    path=table.path, line=row.line, field=score_col))
        lines[item] = row.line
    return scores, issues


def read_examples(path: str | Path) -> list[GradedExample]:
    """Graded few-shot examples (question, label, answer, score, reason): a ``.json`` file holding a
    list of objects, or a CSV, TSV or JSONL table with one example a row. The first row that is not an
    example is a :class:`DataError` naming its line and field.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "shots.jsonl"
    >>> _ = p.write_text('{"question": "Q?", "label": "A", "answer": "A.", "score": 5, "reason": "same"}\\n')
    >>> [e.score for e in read_examples(p)]
    [5]
    """
    p = Path(path)
    if p.suffix.lower() == ".json":
        try:
            rows = [(i + 1, r) for i, r in enumerate(parse_json(read_text(p, what="examples file")))]
        except (ValueError, TypeError) as exc:
            raise DataError(f"examples must be a JSON list of objects ({exc})", path=str(p)) from None
    else:
        table = read_table(p)
        if table.issues:
            raise table.issues[0]
        rows = [(r.line, r.values) for r in table.rows]
    out = []
    for line, row in rows:
        try:
            out.append(GradedExample.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            field_name = ".".join(str(x) for x in first["loc"]) or None
            raise DataError(f"not a graded example: {first['msg']}", path=str(p), line=line,
                            field=field_name) from None
    return out
