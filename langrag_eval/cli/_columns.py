"""One input vocabulary for every command that reads a table: the names of
:class:`~langrag_eval.types.Sample` (``id``, ``question``, ``answer``, ``contexts``, ``reference``),
with the older names (``qid``, ``query``, ``response``, ``sources``, ``documents``, ``label``) still
read as aliases, and a note once per run when one is.

A column the user named with its option is taken as named. Otherwise the Sample name is taken when
the file has it, else the first alias it has. A missing column is one line naming the nearest column
the file has and the option that maps it::

    qa.csv:1: missing column 'reference' (or its older name 'label'): columns found: question,
    answer, ref_answer; the nearest is 'ref_answer': give --reference-col ref_answer
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import DataError
from ._options import INPUT, group

__all__ = ["ALIASES", "Column", "add_column_options", "choose_columns", "table_columns"]

# Each Sample name and the older names read in its place, the first preferred.
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("qid",),
    "question": ("query",),
    "answer": ("response",),
    "contexts": ("sources", "documents"),
    "reference": ("label",),
}


@dataclass(frozen=True)
class Column:
    """One column a command reads: its Sample name, what it holds (for the help), whether the
    command needs it."""

    name: str
    note: str = ""
    required: bool = True


def add_column_options(p: argparse.ArgumentParser, columns: Sequence[Column], *, of: str | None = None) -> None:
    """``--NAME-col`` for each column, with its older name's option as an alias of it
    (``--reference-col`` and ``--label-col`` set the same column)."""
    where = f" of {of}" if of else ""
    g = group(p, INPUT)
    for c in columns:
        old = ALIASES.get(c.name, ())
        flags = [f"--{c.name}-col", *(f"--{a}-col" for a in old)]
        also = f", or its older name {' / '.join(old)}" if old else ""
        g.add_argument(*flags, dest=f"{c.name}_col", default=None, metavar="COLUMN",
                       help=f"{c.name} column{where}{', ' + c.note if c.note else ''} "
                            f"(default {c.name}{also})")


def table_columns(path: str, format: str | None = None) -> list[str]:
    """The columns of a CSV/TSV file's header, or the keys found on any line of a JSONL file."""
    from ..files.tables import stream_table

    stream = stream_table(path, format=format)  # type: ignore[arg-type]
    if stream.format == "jsonl":
        for _ in stream.rows:  # the keys of every line
            pass
    return list(stream.columns)


def choose_columns(path: str, found: Sequence[str], columns: Sequence[Column],
                   given: Mapping[str, str | None], *, format: str | None = None) -> tuple[dict[str, str], list[str]]:
    """``({name: the file's column}, notes)``: the column read for each name (absent names that are
    not required are left out), and one note per older name read in place of a Sample name."""
    chosen: dict[str, str] = {}
    notes: list[str] = []
    line = None if (format or path.rsplit(".", 1)[-1].lower()) == "jsonl" else 1
    missing: list[tuple[Column, str | None]] = []
    for c in columns:
        named = given.get(c.name)
        old = [a for a in ALIASES.get(c.name, ()) if a in found]
        if named:
            if named in found:
                chosen[c.name] = named
            else:
                missing.append((c, named))
        elif c.name in found:
            chosen[c.name] = c.name
        elif old:
            chosen[c.name] = old[0]
            notes.append(f"{old[0]!r} as {c.name}")
        elif c.required:
            missing.append((c, None))
    if missing:
        c, named = missing[0]
        free = [f for f in found if f not in chosen.values()]  # the columns no other role reads
        raise DataError(_missing(c, named, found, free), path=path, line=line)
    if notes:  # one note for the file, however many older names it uses
        notes = [f"note: {path}: older column names read: {', '.join(notes)} (id, question, answer, "
                 "contexts and reference are the names every command reads)"]
    return chosen, notes


def _missing(c: Column, named: str | None, found: Sequence[str], free: Sequence[str]) -> str:
    also = ALIASES.get(c.name, ())
    what = repr(named) if named else f"{c.name!r}" + (
        f" (or its older name {' / '.join(repr(a) for a in also)})" if also else "")
    text = f"missing column {what}: columns found: {', '.join(found) or 'none'}"
    near = difflib.get_close_matches(named or c.name, list(free), n=1, cutoff=0.5) or [
        f for f in free if c.name[:3].lower() in f.lower()][:1]
    if not near and len(free) == 1:  # the one column nothing else reads
        near = list(free)
    flag = f"--{c.name}-col"
    if near:
        return text + f"; the nearest is {near[0]!r}: give {flag} {near[0]}"
    return text + f"; give {flag} COLUMN to read another column as the {c.name}"
