"""Cost and requests at scale: vRAG-Eval grades judged through OpenAI's Batch API against judged one
call at a time, both through the real client stacks (the ``openai`` SDK for the batch, LangChain's
``ChatOpenAI`` for the synchronous judge) and a loopback fake of the OpenAI API
(``tests/runtime/batch_fakes.py``) whose replies are a deterministic function of the prompt.

Prints, for each way: the HTTP requests made, the calls the provider answered, the tokens, the cost
at list prices (``--prices``, per million tokens; the batch at half, as the providers bill it), and
the seconds it took here (not a timing: the fake answers at once and the real batch window is up to
24 hours). Also checks that both ways gave the same grades.

    python benchmarks/scale.py                       # 1,000 grades, gpt-4o-mini list prices
    python benchmarks/scale.py --items 200 --prices 2.5,10
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "runtime"))

from batch_fakes import FakeOpenAI  # noqa: E402

from langrag_eval.grading import VragGrade, VragGrader  # noqa: E402
from langrag_eval.models.openai_batch import OpenAIBatchAPI  # noqa: E402
from langrag_eval.runtime import Judge, PriceTable, RunStore  # noqa: E402
from langrag_eval.runtime.batching import BatchModel, batch_judge  # noqa: E402
from langrag_eval.types import RAGSample  # noqa: E402

__all__ = ["batch_vs_synchronous", "main"]

MODEL = "gpt-4o-mini"


def _samples(n: int) -> list[RAGSample]:
    return [RAGSample(id=f"q{i:05d}", question=f"What does clause {i} of the cardholder agreement cover?",
                      answer=f"Clause {i} covers the fees charged when a payment is disputed.",
                      reference=f"Clause {i}: dispute fees and their refund.") for i in range(n)]


def _row(name: str, fake: FakeOpenAI, store: RunStore, run: str, seconds: float,
         results: list) -> dict[str, object]:
    usage = store.usage(run)["total"]
    return {"way": name, "http_requests": len(fake.requests), "calls": usage["calls"],
            "prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"],
            "cost": usage["cost"], "seconds": seconds, "batches": len(fake.batches),
            "scores": [r.score if isinstance(r, VragGrade) else None for r in results]}


async def batch_vs_synchronous(items: int, prices: tuple[float, float], folder: Path) -> list[dict[str, object]]:
    samples = _samples(items)
    table = PriceTable({f"openai:{MODEL}": prices})
    rows = []
    with FakeOpenAI() as fake:
        store = RunStore(folder / "batch.sqlite")
        api = OpenAIBatchAPI(MODEL, api_key="sk-fake", base_url=fake.base_url)
        judge = batch_judge(BatchModel(api, poll_interval=0.2), store=store, prices=table)
        run = store.open_run("bench-batch", {"items": items})
        start = time.perf_counter()
        results = await VragGrader(judge).aevaluate_many(samples, run_id=run)
        rows.append(_row("batch", fake, store, run, time.perf_counter() - start, results))
    with FakeOpenAI() as fake:
        os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-fake")
        from langrag_eval.models import resolve_judge
        store = RunStore(folder / "sync.sqlite")
        judge = Judge(resolve_judge(f"openai:{MODEL}").model, store=store, concurrency=16, prices=table)
        run = store.open_run("bench-sync", {"items": items})
        start = time.perf_counter()
        results = await VragGrader(judge).aevaluate_many(samples, run_id=run)
        rows.append(_row("synchronous", fake, store, run, time.perf_counter() - start, results))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=1000)
    p.add_argument("--prices", default="0.15,0.60", help="input,output list price per million tokens "
                   "(default gpt-4o-mini's: 0.15,0.60)")
    args = p.parse_args(argv)
    prices = tuple(float(x) for x in args.prices.split(","))
    with tempfile.TemporaryDirectory() as folder:
        rows = asyncio.run(batch_vs_synchronous(args.items, prices, Path(folder)))  # type: ignore[arg-type]
    print(f"{args.items} vRAG-Eval grades, openai:{MODEL} at {prices[0]}/{prices[1]} per million tokens")
    print(f"{'way':<12} {'HTTP requests':>13} {'calls':>6} {'batches':>7} {'prompt tok':>10} "
          f"{'compl. tok':>10} {'cost':>9} {'seconds':>8}")
    for r in rows:
        print(f"{r['way']:<12} {r['http_requests']:>13} {r['calls']:>6} {r['batches']:>7} "
              f"{r['prompt_tokens']:>10} {r['completion_tokens']:>10} {r['cost']:>9.4f} {r['seconds']:>8.1f}")
    same = rows[0]["scores"] == rows[1]["scores"]
    print(f"same grades both ways: {same}; batch cost / synchronous cost: "
          f"{rows[0]['cost'] / rows[1]['cost']:.2f}")  # type: ignore[operator]
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
