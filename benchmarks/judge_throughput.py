"""Judge runtime throughput: how close the orchestration gets to the ideal rate.

A ``ScriptedModel`` answers every call after a fixed latency (50 ms by default), so the ideal rate at
concurrency c is c / latency calls per second. The script runs ``Judge.ask`` (limiter, cache lookup,
retries, verdict parsing, usage) over distinct prompts, with and without a SQLite run store, and
prints achieved calls/s beside the ideal and their ratio, and the process CPU time per call. Every
prompt is distinct, so the cache is consulted but never hits. A "bare" row runs the same worker pool
with nothing but the sleep, to show what the event loop itself reaches on the machine at hand.

    python benchmarks/judge_throughput.py                 # 2,000 calls at 16 and 64, 200 at 1
    python benchmarks/judge_throughput.py --calls 500 --latency 0.02 --concurrency 1 8 32

At concurrency 1 the default is 200 calls (10 s) rather than 2,000 (100 s); ``--serial-calls``
changes it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from langrag_eval.runtime import Judge, RetryPolicy, RunStore, gather_bounded
from langrag_eval.testing import ScriptedModel
from langrag_eval.verdicts.formats import ScoreFormat

__all__ = ["measure", "main"]

REPLY = "The answer agrees with the label on every point.\nScore: [[4]], Reason: [[matches the label]]"


async def measure(calls: int, concurrency: int, latency: float, store: RunStore | None) -> dict[str, float]:
    """Run ``calls`` judge calls at ``concurrency``; return achieved and ideal calls/s."""
    model = ScriptedModel([REPLY], latency=latency)
    run_id = store.open_run("bench", {"calls": calls, "c": concurrency, "t": time.time()}) if store else None
    judge = Judge(model, store=store, run_id=run_id, concurrency=concurrency,
                  retry=RetryPolicy(base_delay=0.001))
    fmt = ScoreFormat()
    prompts = [f"Grade answer {i} of run {run_id}: the capital of France is Paris." for i in range(calls)]

    async def one(prompt: str) -> int:
        return (await judge.ask(prompt, fmt)).value.score  # type: ignore[union-attr]

    start, cpu = time.perf_counter(), time.process_time()
    scores = await gather_bounded(prompts, one, concurrency=concurrency)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert scores == [4] * calls and model.calls == calls and model.peak_concurrency <= concurrency
    return _row(calls, concurrency, latency, elapsed, cpu)


async def measure_bare(calls: int, concurrency: int, latency: float) -> dict[str, float]:
    """The event loop's own ceiling on this machine: the same pool, each call a bare sleep."""
    async def one(_: int) -> None:
        await asyncio.sleep(latency)

    start, cpu = time.perf_counter(), time.process_time()
    await gather_bounded(range(calls), one, concurrency=concurrency)  # type: ignore[arg-type]
    return _row(calls, concurrency, latency, time.perf_counter() - start, time.process_time() - cpu)


def _row(calls: int, concurrency: int, latency: float, elapsed: float, cpu: float) -> dict[str, float]:
    achieved = calls / elapsed
    ideal = concurrency / latency if latency else float("inf")
    return {"calls": calls, "concurrency": concurrency, "seconds": elapsed, "achieved": achieved,
            "ideal": ideal, "ratio": achieved / ideal, "cpu_us": cpu / calls * 1e6}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--serial-calls", type=int, default=200, help="calls at concurrency 1")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    args = parser.parse_args(argv)

    rows = []
    for c in args.concurrency:
        n = args.serial_calls if c == 1 else args.calls
        rows.append(("bare", asyncio.run(measure_bare(n, c, args.latency))))
    with tempfile.TemporaryDirectory() as tmp:
        for label, store in (("memory", None), ("sqlite", RunStore(Path(tmp) / "bench.sqlite"))):
            for c in args.concurrency:
                n = args.serial_calls if c == 1 else args.calls
                rows.append((label, asyncio.run(measure(n, c, args.latency, store))))
            if store is not None:
                store.close()

    print(f"latency {args.latency * 1000:.0f} ms per call; ideal = concurrency / latency")
    print("bare: the same worker pool with a bare asyncio.sleep per call, no judge (the machine's ceiling)")
    print(f"{'store':<8}{'conc.':>6}{'calls':>7}{'seconds':>9}{'calls/s':>10}{'ideal':>9}{'ratio':>8}"
          f"{'cpu us/call':>13}")
    for label, r in rows:
        print(f"{label:<8}{r['concurrency']:>6}{r['calls']:>7}{r['seconds']:>9.2f}{r['achieved']:>10.1f}"
              f"{r['ideal']:>9.1f}{r['ratio']:>8.1%}{r['cpu_us']:>13.0f}")
    at_64 = [r["ratio"] for label, r in rows if r["concurrency"] == 64 and label != "bare"]
    if at_64:
        print(f"target: >= 90% of ideal at concurrency 64: {'met' if min(at_64) >= 0.9 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
