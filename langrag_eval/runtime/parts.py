"""An artifact of one record per item, stored in parts as a run goes: a run of any size writes a
part of rows at a time and never holds the whole list. The head is the artifact ``name`` itself::

    {"version": 1, ..., "items": [first part's rows], "parts": 3}

and the following parts are the artifacts ``name#1``, ``name#2`` (``{"items": [...]}`` each).
``parts`` is written once the run has stored its last part; a run stopped before (killed, to be
resumed) has a head without it, and a reader then takes the parts that follow one another from
``#1`` on.

>>> from langrag_eval.runtime import RunStore
>>> store = RunStore(":memory:")
>>> run = store.open_run("grade", {}, judge="scripted")
>>> writer = PartWriter(store, run, "rows", {"version": 1}, size=2)
>>> for i in range(5):
...     writer.add({"id": i})
>>> writer.close()
>>> [r["id"] for r in read_parts(store.artifacts(run), "rows")], store.get_artifact(run, "rows")["parts"]
([0, 1, 2, 3, 4], 3)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["PART", "PartWriter", "read_parts", "is_part", "stored_artifacts"]

PART = "#"


def is_part(name: str) -> bool:
    """Whether the artifact ``name`` is a part after the head of a parted artifact."""
    head, sep, number = name.rpartition(PART)
    return bool(sep and head and number.isdigit())


class PartWriter:
    """Rows added one at a time, stored ``size`` at a time as the next part of ``name``;
    :meth:`close` stores the last part and the head's count of parts."""

    def __init__(self, store: Any, run_id: str, name: str, head: Mapping[str, Any], *, size: int = 1000) -> None:
        self.store, self.run_id, self.name, self.head, self.size = store, run_id, name, dict(head), size
        self.rows: list[Any] = []
        self.parts = 0
        self._first: list[Any] | None = None  # the head's rows, written again with the count

    def add(self, row: Any) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.size:
            self.flush()

    def flush(self) -> None:
        if not self.rows and self.parts:
            return
        if self.parts == 0:
            self._first = self.rows
            self.store.put_artifact(self.run_id, self.name, {**self.head, "items": self.rows})
        else:
            self.store.put_artifact(self.run_id, f"{self.name}{PART}{self.parts}", {"items": self.rows})
        self.parts += 1
        self.rows = []

    def close(self) -> None:
        self.flush()
        self.store.put_artifact(self.run_id, self.name, {**self.head, "items": self._first or [],
                                                         "parts": self.parts})


class stored_artifacts:  # noqa: N801 - used like a mapping, read where it is needed
    """A run's artifacts looked up one by one in its store (``.get(name)``), not all loaded."""

    def __init__(self, store: Any, run_id: str) -> None:
        self.store, self.run_id = store, run_id

    def get(self, name: str) -> Any | None:
        return self.store.get_artifact(self.run_id, name)


def read_parts(artifacts: Mapping[str, Any] | stored_artifacts, name: str) -> Iterator[Any]:
    """The rows of the parted artifact ``name`` in order, from a run's ``artifacts`` (all loaded,
    or :class:`stored_artifacts`, read part by part)."""
    head = artifacts.get(name)
    if not isinstance(head, dict):
        return
    yield from head.get("items") or []
    count = head.get("parts")
    k = 1
    while count is None or k < count:
        part = artifacts.get(f"{name}{PART}{k}")
        if not isinstance(part, dict):
            return
        yield from part.get("items") or []
        k += 1
