"""Judge calls and tokens per sample for THELMA, per-component versus batched matching.

    python benchmarks/thelma_calls.py [--samples 100] [--seed 0] [--latency 0.1] [--concurrency 16]

100 invented samples (1-3 sub-questions, 1-4 sources, responses with essential, extraneous and
unsupported claims) are scored with a scripted judge that knows the truth, once per mode, each with a
fresh judge (no cache shared between modes). Self-distinctness makes no model call and is left out.
Tokens are the scripted model's estimate (about four characters a token), prompt plus completion.
The script also checks that both modes give the same scores.

With ``--latency`` (seconds per call, 0.1 by default; 0 skips it) each mode is run again against a
judge that sleeps that long per call with ``--concurrency`` slots, and the script prints the wall
time beside the ideal one (calls x latency / concurrency: every slot busy all the time) and the slot
use (ideal / wall; 1.0 means no slot ever waited on the client). The timed run must give the same
judgments as the untimed one (it stops otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from langrag_eval.runtime import Judge
from langrag_eval.testing import synthetic_dataset
from langrag_eval.thelma import Thelma

METRICS = ("sp1", "sp2", "sqc", "rp", "rqc", "gr")


async def measure(samples, script, batched, latency=0.0, concurrency=16):
    judge = Judge(script.model(latency=latency), concurrency=concurrency)
    start = time.perf_counter()
    report = await Thelma(judge, metrics=METRICS, batched=batched).aevaluate_many(samples)
    return report, judge.usage, time.perf_counter() - start


def judgments(report):
    return [{m: (v.verdicts if hasattr(v, "verdicts") else v.cause) for m, v in r.metrics.items()}
            for r in report]


async def slot_use(samples, script, rows, latency: float, concurrency: int) -> None:
    print(f"\nslot use with a judge sleeping {latency * 1000:.0f} ms per call, concurrency {concurrency}"
          f" (load {os.getloadavg()[0]:.1f})")
    print(f"{'mode':<15}{'calls':>7}{'wall s':>9}{'ideal s':>9}{'slot use':>10}{'CPU ms/call':>13}")
    for name, batched in (("per-component", False), ("batched", True)):
        cpu = time.process_time()
        report, usage, seconds = await measure(samples, script, batched, latency, concurrency)
        cpu = time.process_time() - cpu
        if judgments(report) != judgments(rows[batched][0]):
            raise SystemExit(f"{name}: the timed run's judgments differ from the untimed run's")
        ideal = usage.calls * latency / concurrency
        print(f"{name:<15}{usage.calls:>7}{seconds:>9.2f}{ideal:>9.2f}{ideal / seconds:>10.3f}"
              f"{1000 * cpu / usage.calls:>13.2f}")


async def main(n: int, seed: int, latency: float = 0.0, concurrency: int = 16) -> None:
    samples, script = synthetic_dataset(n, seed=seed)
    rows = {}
    for batched in (False, True):
        report, usage, seconds = await measure(samples, script, batched)
        rows[batched] = (report, usage, seconds)
    per, bat = rows[False], rows[True]
    mismatches = sum(a.score(m) != b.score(m) for a, b in zip(per[0], bat[0]) for m in METRICS)

    def figures(usage):
        tokens = usage.prompt_tokens + usage.completion_tokens
        return usage.calls / n, usage.prompt_tokens / n, usage.completion_tokens / n, tokens / n

    print(f"THELMA judge usage over {n} samples (metrics {', '.join(METRICS)}; seed {seed})")
    print(f"{'mode':<15}{'calls/sample':>14}{'prompt tok':>12}{'compl. tok':>12}{'tokens/sample':>15}"
          f"{'cached':>8}")
    for name, (_, usage, _) in (("per-component", per), ("batched", bat)):
        c, p, o, t = figures(usage)
        print(f"{name:<15}{c:>14.2f}{p:>12.0f}{o:>12.1f}{t:>15.0f}{usage.cached:>8}")
    pc, _, _, pt = figures(per[1])
    bc, _, _, bt = figures(bat[1])
    print(f"{'ratio per/bat':<15}{pc / bc:>14.2f}{'':>24}{pt / bt:>15.2f}")
    print(f"score mismatches between modes: {mismatches} of {n * len(METRICS)}")
    if latency > 0:
        await slot_use(samples, script, rows, latency, concurrency)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per call (0: no timed run)")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    asyncio.run(main(args.samples, args.seed, args.latency, args.concurrency))
