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

``--part workers`` measures scale-out instead: N items judged by 1, 2 and 4 workers sharing one
PostgreSQL run (a fresh schema on the tests' server, ``tests/runtime/store_backends.py``), as
Ray actors on a local Ray instance and as plain processes, each worker at concurrency 16 with a judge
that answers after ``--latency`` seconds. Prints the wall time, the share of linear scaling
(t1 / (W * tW)), and the CPU seconds per item spent by the workers (store, claims, judge runtime)
and, for Ray, by this driver (the scheduler side).

    python benchmarks/scale.py --part workers --items 4000 --latency 1
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "runtime"))

from batch_fakes import FakeOpenAI  # noqa: E402

from langrag_eval.grading import VragGrade, VragGrader  # noqa: E402
from langrag_eval.models.openai_batch import OpenAIBatchAPI  # noqa: E402
from langrag_eval.runtime import Judge, PriceTable, RunStore  # noqa: E402
from langrag_eval.runtime.batching import BatchModel, batch_judge  # noqa: E402
from langrag_eval.types import Sample  # noqa: E402

__all__ = ["batch_vs_synchronous", "workers", "main"]

MODEL = "gpt-4o-mini"


def _samples(n: int) -> list[Sample]:
    return [Sample(id=f"q{i:05d}", question=f"What does clause {i} of the cardholder agreement cover?",
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


@dataclass(frozen=True)
class TimedGrade:
    """One worker's share of the run (``tests/runtime/ray_work.py``), with its CPU seconds."""

    work: Any

    def __call__(self, index: int) -> tuple[int, float]:
        cpu = time.process_time()
        done = self.work(index)
        return done, time.process_time() - cpu


def _pg_url() -> Any:
    from store_backends import postgres_schema  # a fresh schema on the tests' PostgreSQL server
    return postgres_schema()


def workers(items: int, latency: float, counts: list[int],
            ways: tuple[str, ...] = ("ray", "processes")) -> list[dict[str, object]]:
    import resource
    import subprocess

    import ray
    from ray_work import GradeItems

    from langrag_eval.runtime.ray_executor import run_workers_on_ray
    here = Path(__file__).resolve().parents[1]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(here / "tests" / "runtime"), str(here),
                                                str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    rows = []
    ray.init(num_cpus=max(counts), include_dashboard=False, log_to_driver=False)
    try:
        for n in counts if "ray" in ways else []:
            with _pg_url() as url, tempfile.TemporaryDirectory() as folder:
                work = TimedGrade(GradeItems(url, f"{folder}/calls.log", items, folder, latency=latency,
                                             claim_ttl=30.0))
                cpu, start = time.process_time(), time.perf_counter()
                outcomes = run_workers_on_ray(work, workers=n, num_cpus_per_worker=1.0)
                wall = time.perf_counter() - start
                rows.append({"way": "ray", "workers": n, "seconds": wall,
                             "worker_cpu": sum(o.value[1] for o in outcomes) / items,
                             "driver_cpu": (time.process_time() - cpu) / items})
    finally:
        ray.shutdown()
    worker = here / "tests" / "runtime" / "pg_worker.py"
    for n in counts if "processes" in ways else []:
        with _pg_url() as url, tempfile.TemporaryDirectory() as folder:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            procs = [subprocess.Popen([sys.executable, str(worker), url, f"{folder}/calls.log", str(items),
                                       f"{folder}/w{i}.json", str(latency)]) for i in range(n)]
            assert all(p.wait() == 0 for p in procs)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            rows.append({"way": "processes", "workers": n, "seconds": wall, "driver_cpu": 0.0,
                         "worker_cpu": (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
                         / items})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=("batch", "workers"), default="batch")
    p.add_argument("--latency", type=float, default=1.0, help="--part workers: judge latency (default 1 s)")
    p.add_argument("--workers", default="1,2,4", help="--part workers: worker counts (default 1,2,4)")
    p.add_argument("--ways", default="ray,processes", help="--part workers: ray, processes or both")
    p.add_argument("--items", type=int, default=1000)
    p.add_argument("--prices", default="0.15,0.60", help="input,output list price per million tokens "
                   "(default gpt-4o-mini's: 0.15,0.60)")
    args = p.parse_args(argv)
    if args.part == "workers":
        counts = [int(x) for x in args.workers.split(",")]
        rows = workers(args.items, args.latency, counts, tuple(args.ways.split(",")))
        print(f"{args.items} items, judge latency {args.latency} s, concurrency 16 per worker; ideal for "
              f"1 worker: {args.items * args.latency / 16:.1f} s")
        print(f"{'way':<10} {'workers':>7} {'seconds':>8} {'of linear':>9} {'worker CPU/item':>15} "
              f"{'driver CPU/item':>15}")
        for r in rows:
            one = next(x for x in rows if x["way"] == r["way"] and x["workers"] == counts[0])
            share = one["seconds"] * counts[0] / (r["workers"] * r["seconds"])  # type: ignore[operator]
            print(f"{r['way']:<10} {r['workers']:>7} {r['seconds']:>8.1f} {share:>9.2f} "
                  f"{1000 * r['worker_cpu']:>13.2f}ms {1000 * r['driver_cpu']:>13.2f}ms")
        return 0
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
