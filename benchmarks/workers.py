"""Throughput of cooperating workers on one PostgreSQL run store.

    .venv/bin/python benchmarks/workers.py [--items 2000] [--url postgresql://root@127.0.0.1/test]

For 1, 2 and 4 worker processes (each at concurrency 16, a scripted judge answering in 50 ms), the
same 2,000-item run is judged on a fresh schema; prints items per second, the ratio to linear
scaling of the one-worker figure, and the CPU seconds the PostgreSQL server spent (its processes'
user + system time from /proc, before and after). The ideal for one worker is 16 / 0.05 = 320
items/s. Also the SQLite store with one worker, for reference.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from pydantic import BaseModel


class Grade(BaseModel):
    score: int


async def work(url: str, n: int, latency: float) -> None:
    from langrag_eval.results import Unscored
    from langrag_eval.runtime import Judge, RetryPolicy, open_store, run_batch
    from langrag_eval.testing import ScriptedModel
    from langrag_eval.verdicts import ScoreFormat

    store = open_store(url)
    run = store.open_run("bench", {"items": n})
    judge = Judge(ScriptedModel(["Score: [[4]], Reason: [[ok]]"], latency=latency), store=store, run_id=run,
                  concurrency=16, retry=RetryPolicy(base_delay=0.001))

    async def grade(item: str) -> Grade | Unscored:
        answer = await judge.ask(f"Grade {item}", ScoreFormat())
        return answer.value if isinstance(answer.value, Unscored) else Grade(score=answer.value.score)

    await run_batch([f"item-{i}" for i in range(n)], grade, key=str, task="vrag", result_type=Grade,
                    store=store, run_id=run, limit=16)
    store.close()


def postgres_cpu() -> float:
    """CPU seconds used so far by every postgres process on this machine."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for pid in os.listdir("/proc"):
        try:
            if not pid.isdigit() or Path(f"/proc/{pid}/comm").read_text().strip() != "postgres":
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            # own user + system time, and that of finished children (a backend per connection)
            total += sum(int(f) for f in fields[11:15]) / tick
        except (OSError, IndexError, ValueError):
            continue
    return total


def measure(url: str, workers: int, n: int, latency: float) -> tuple[float, float]:
    cpu = postgres_cpu()
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, "--work", url, "--items", str(n),
                               "--latency", str(latency)]) for _ in range(workers)]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit("a worker failed")
    return n / (time.perf_counter() - start), postgres_cpu() - cpu


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--url", default="postgresql://root@127.0.0.1/test")
    p.add_argument("--items", type=int, default=2000)
    p.add_argument("--latency", type=float, default=0.05)
    p.add_argument("--work", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.work:
        asyncio.run(work(args.work, args.items, args.latency))
        return
    import psycopg
    ideal = 16 / args.latency
    print(f"{args.items} items, concurrency 16 per worker, judge latency {args.latency * 1000:.0f} ms "
          f"(ideal {ideal:.0f} items/s per worker); {os.cpu_count()} CPUs")
    base = None
    for workers in (1, 2, 4):
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            rate, cpu = measure(f"{args.url}?options=-csearch_path%3D{schema}", workers, args.items, args.latency)
        finally:
            with psycopg.connect(args.url, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        base = base or rate
        print(f"  {workers} worker(s): {rate:7.1f} items/s   {rate / (base * workers):5.2f} of linear   "
              f"{rate / (ideal * workers):5.2f} of ideal   PostgreSQL CPU {cpu:5.1f} s "
              f"({1000 * cpu / args.items:.1f} ms per item)")
    tmp = Path(f"/tmp/bench-{uuid.uuid4().hex[:8]}.sqlite")
    rate, _ = measure(str(tmp), 1, args.items, args.latency)
    print(f"  SQLite, 1 worker: {rate:7.1f} items/s   {rate / ideal:5.2f} of ideal")
    tmp.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
