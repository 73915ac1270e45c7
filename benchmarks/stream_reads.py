"""Judgment rows a streamed run reads back from a PostgreSQL store, and its wall time, by run size.

    python benchmarks/stream_reads.py --store postgresql://postgres@127.0.0.1:5432/test --items 2000,20000

Each size streams that many items through ``Evaluator.astream_many`` (chunks of ``--chunk``, default
1000, as ``run.astream`` reads a file) on a fresh schema of the store, with an evaluator that judges
instantly, so the wall is the store's work. Rows are counted on the connection: what the server sent
back for each SELECT on the judgments table. A linear stream reads one row an item (its results; two
on a resumed run). Reading the whole task at each chunk, as langrag-eval did before, read 52,000 rows
for 2,000 items and 3,760,000 for 20,000 (39.0 s, against 27.8 s now; load average near 4 on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid

from pydantic import BaseModel

from langrag_eval.evaluator import FunctionEvaluator
from langrag_eval.runtime.pgstore import PostgresRunStore


class Length(BaseModel):
    n: int


async def _length(item: str) -> Length:
    return Length(n=len(item))


async def measure(url: str, n: int, chunk: int) -> tuple[int, float]:
    store = PostgresRunStore(url)
    reads: list[int] = []
    from sqlalchemy import event

    @event.listens_for(store._engine, "after_cursor_execute")
    def counted(conn, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        if statement.lstrip().upper().startswith("SELECT") and " judgments " in f"{statement} ":
            reads.append(cursor.rowcount)

    evaluator = FunctionEvaluator(_length, "length", Length, key_of=str)
    start = time.perf_counter()
    done = 0
    async for _ in evaluator.astream_many((f"item-{i:06d}" for i in range(n)), run_id="stream", store=store,
                                          chunk=chunk):
        done += 1
    wall = time.perf_counter() - start
    store.close()
    assert done == n
    return sum(reads), wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", default=os.environ.get("LANGRAG_STORE", "postgresql://postgres@127.0.0.1:5432/test"))
    p.add_argument("--items", default="2000,20000")
    p.add_argument("--chunk", type=int, default=1000)
    args = p.parse_args()
    import psycopg
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    for n in (int(x) for x in args.items.split(",")):
        schema = f"lre_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(args.store, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        sep = "&" if "?" in args.store else "?"
        try:
            rows, wall = asyncio.run(measure(f"{args.store}{sep}options=-csearch_path%3D{schema}", n, args.chunk))
        finally:
            with psycopg.connect(args.store, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        print(f"{n:>7} items, chunk {args.chunk}: {rows:>9,} judgment rows read "
              f"({rows / n:.2f} an item), {wall:6.1f} s")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
