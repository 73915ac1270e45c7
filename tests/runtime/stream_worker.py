"""One process streaming a run on a shared PostgreSQL store:
``python stream_worker.py STORE_URL CALL_LOG N CHUNK OUT [LATENCY]``.

Streams N items (``item-00000`` ...) through ``Evaluator.astream_many`` in chunks of CHUNK, with a
function evaluator that waits LATENCY seconds and appends the item it judged to CALL_LOG (fsynced,
so a test counts the calls of a killed process too). Each yielded ``(item, length)`` is appended to
OUT as it comes; once done, ``OUT.reads`` holds the judgment rows the store sent back (counted on
the connection, under the store), which a linear stream keeps to a few per item.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from langrag_eval.evaluator import FunctionEvaluator


class Length(BaseModel):
    n: int


def expected(item: str) -> int:
    return len(item) + int(item.rsplit("-", 1)[1]) % 7


def items(n: int) -> list[str]:
    return [f"item-{i:05d}" for i in range(n)]


def count_judgment_reads(store) -> list[int]:  # noqa: ANN001 - a PostgresRunStore
    """Rows each SELECT on the judgments table returned, as the driver reports them."""
    from sqlalchemy import event
    reads: list[int] = []

    @event.listens_for(store._engine, "after_cursor_execute")
    def counted(conn, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        if statement.lstrip().upper().startswith("SELECT") and " judgments " in f"{statement} ":
            reads.append(cursor.rowcount)

    return reads


def dying(marker: str) -> str:
    """The file a doomed process creates just before it exits, for the others to wait on."""
    return f"{marker}.dying"


def exit_as_killed(marker: str) -> None:
    """Exit at once, as a killed node would, saying so first in :func:`dying`'s file."""
    os.close(os.open(dying(marker), os.O_CREAT | os.O_EXCL))
    os._exit(1)


def wait_until(ready: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    """Poll ``ready`` until it holds; a ``TimeoutError`` saying ``what`` did not happen after ``timeout``
    seconds."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} in {timeout:.0f} s")
        time.sleep(0.02)


@dataclass
class Measure:
    """The evaluator's function: the item's expected length, logged; ``die_after`` calls then exit
    (as a killed node would, through :func:`exit_as_killed`), for the one process that creates
    ``marker``."""

    log: str
    latency: float = 0.0
    marker: str | None = None
    die_after: int | None = None
    calls: int = 0

    def __post_init__(self) -> None:
        self._doomed = False
        if self.marker is not None:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
                self._doomed = True
            except FileExistsError:
                pass

    @property
    def doomed(self) -> bool:
        return self._doomed

    async def __call__(self, item: str) -> Length:
        if self._doomed and self.die_after is not None and self.calls >= self.die_after:
            exit_as_killed(self.marker)
        self.calls += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "item": item}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        return Length(n=expected(item))


async def stream(url: str, n: int, chunk: int, measure: Measure, out: str | None = None,
                 claim_ttl: float = 30.0, concurrency: int = 8) -> tuple[list[tuple[str, int]], int]:
    """Stream the run; returns what was yielded, in order, and the judgment rows read."""
    from langrag_eval.runtime.pgstore import PostgresRunStore
    store = PostgresRunStore(url, claim_ttl=claim_ttl)
    reads = count_judgment_reads(store)
    evaluator = FunctionEvaluator(measure, "length", Length, key_of=str)
    got: list[tuple[str, int]] = []
    try:
        async for item, result in evaluator.astream_many(items(n), run_id="stream", store=store,
                                                         concurrency=concurrency, chunk=chunk):
            got.append((item, result.n))
            if out is not None:
                with open(out, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps([item, result.n]) + "\n")
    finally:
        store.close()
    return got, sum(reads)


if __name__ == "__main__":
    url, log, n, chunk, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    latency = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
    _, read = asyncio.run(stream(url, n, chunk, Measure(log, latency), out))
    with open(out + ".reads", "w", encoding="utf-8") as fh:
        fh.write(str(read))
