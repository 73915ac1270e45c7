"""Throughput of cooperating workers on one PostgreSQL run store.

    .venv/bin/python benchmarks/workers.py [--items 4000] [--url postgresql://root@127.0.0.1/test]

For 1, 2 and 4 worker processes (each at concurrency 16, a scripted judge answering in 50 ms), the
same 4,000-item run is judged on a fresh schema; timing starts once every worker has imported and
connected. Prints items per second, the ratio to linear scaling of the one-worker figure, and the
CPU each item cost the PostgreSQL server (its processes' user + system time from /proc) and the
workers: on a machine with few cores, their sum bounds the throughput. The ideal for one worker is 16 / 0.05 = 320
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


async def work(url: str, n: int, latency: float, ready: str | None = None) -> None:
    from langrag_eval.results import Unscored
    from langrag_eval.runtime import Judge, RetryPolicy, open_store, run_batch
    from langrag_eval.testing import ScriptedModel
    from langrag_eval.verdicts.formats import ScoreFormat

    store = open_store(url)
    run = store.open_run("bench", {"items": n})
    judge = Judge(ScriptedModel(["Score: [[4]], Reason: [[ok]]"], latency=latency), store=store, run_id=run,
                  concurrency=16, retry=RetryPolicy(base_delay=0.001))

    async def grade(item: str) -> Grade | Unscored:
        answer = await judge.ask(f"Grade {item}", ScoreFormat())
        return answer.value if isinstance(answer.value, Unscored) else Grade(score=answer.value.score)

    if ready:  # imported and connected: say so, then wait for the start signal
        Path(f"{ready}.{os.getpid()}").touch()
        while not Path(f"{ready}.go").exists():
            await asyncio.sleep(0.005)
    await run_batch([f"item-{i}" for i in range(n)], grade, key=str, task="vrag", result_type=Grade,
                    store=store, run_id=run, concurrency=16)
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


def measure(url: str, workers: int, n: int, latency: float) -> tuple[float, float, float]:
    """Items per second from the start signal (workers already imported and connected) to the last
    worker's exit; PostgreSQL's CPU seconds; the workers' CPU seconds."""
    import resource
    ready = f"/tmp/bench-ready-{uuid.uuid4().hex[:8]}"
    procs = [subprocess.Popen([sys.executable, __file__, "--work", url, "--items", str(n),
                               "--latency", str(latency), "--ready", ready]) for _ in range(workers)]
    while sum(Path(f"{ready}.{p.pid}").exists() for p in procs) < workers:
        time.sleep(0.01)
    cpu = postgres_cpu()
    mine = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    Path(f"{ready}.go").touch()
    for p in procs:
        if p.wait() != 0:
            raise SystemExit("a worker failed")
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for p in [*(Path(f"{ready}.{p.pid}") for p in procs), Path(f"{ready}.go")]:
        p.unlink(missing_ok=True)
    # the workers' CPU includes their start-up (imports); reported as an upper bound
    return (n / elapsed, postgres_cpu() - cpu,
            (after.ru_utime + after.ru_stime) - (mine.ru_utime + mine.ru_stime))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--url", default="postgresql://root@127.0.0.1/test")
    p.add_argument("--items", type=int, default=4000)
    p.add_argument("--latency", type=float, default=0.05)
    p.add_argument("--work", default=None, help=argparse.SUPPRESS)
    p.add_argument("--ready", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.work:
        asyncio.run(work(args.work, args.items, args.latency, args.ready))
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
            rate, cpu, client = measure(f"{args.url}?options=-csearch_path%3D{schema}", workers, args.items,
                                        args.latency)
        finally:
            with psycopg.connect(args.url, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        base = base or rate
        print(f"  {workers} worker(s): {rate:7.1f} items/s   {rate / (base * workers):5.2f} of linear   "
              f"{rate / (ideal * workers):5.2f} of ideal   CPU per item: PostgreSQL "
              f"{1000 * cpu / args.items:.2f} ms, workers {1000 * client / args.items:.2f} ms (with start-up)")
    tmp = Path(f"/tmp/bench-{uuid.uuid4().hex[:8]}.sqlite")
    rate, _, _ = measure(str(tmp), 1, args.items, args.latency)
    print(f"  SQLite, 1 worker: {rate:7.1f} items/s   {rate / ideal:5.2f} of ideal")
    tmp.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
