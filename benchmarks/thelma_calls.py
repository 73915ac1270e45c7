"""Judge calls and tokens per sample for THELMA, per-component versus batched matching.

    python benchmarks/thelma_calls.py [--samples 100] [--seed 0]

100 invented samples (1-3 sub-questions, 1-4 sources, responses with essential, extraneous and
unsupported claims) are scored with a scripted judge that knows the truth, once per mode, each with a
fresh judge (no cache shared between modes). Self-distinctness makes no model call and is left out.
Tokens are the scripted model's estimate (about four characters a token), prompt plus completion.
The script also checks that both modes give the same scores.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from langrag_eval.runtime import Judge
from langrag_eval.testing import synthetic_dataset
from langrag_eval.thelma import Thelma

METRICS = ("sp1", "sp2", "sqc", "rp", "rqc", "gr")


async def measure(samples, script, batched):
    judge = Judge(script.model())
    start = time.perf_counter()
    report = await Thelma(judge, metrics=METRICS, batched=batched).aevaluate_many(samples, limit=16)
    return report, judge.usage, time.perf_counter() - start


async def main(n: int, seed: int) -> None:
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(main(args.samples, args.seed))
