"""Time and call counts of a full judge audit with a scripted judge that takes 100 ms per call.

The judge answers every battery the way the human labels say (the honest scripted judge of the
audit tests), so every probe that depends on the clean verdict (verbosity on pairs judged right,
injection on wrong answers rejected) runs on as many items as it can: the upper bound of calls.
A fresh SQLite run store is used, so nothing comes from the cache on the first pass; the second
pass resumes the same run and shows what a re-run costs.

    python benchmarks/judge_audit/scripted_100ms.py                   # all items, concurrency 16
    python benchmarks/judge_audit/scripted_100ms.py --max-items 20 --concurrency 4
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "audit"))

from audit_judges import honest  # noqa: E402

from langrag_eval.audit import run_audit  # noqa: E402
from langrag_eval.runtime import Judge, RunStore  # noqa: E402
from langrag_eval.testing import ScriptedModel  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-items", type=int, default=None)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.sqlite")
        for attempt in ("first pass", "resumed"):
            model = ScriptedModel(honest, latency=args.latency)
            judge = Judge(model, store=store, concurrency=args.concurrency)
            start = time.perf_counter()
            card = run_audit(judge, run_id="bench", max_items=args.max_items)
            wall = time.perf_counter() - start
            tasks = {}
            for j in store.judgments("bench"):
                tasks[j["task"]] = tasks.get(j["task"], 0) + 1
            print(f"{attempt}: {wall:.1f} s wall, {model.calls} model calls "
                  f"(ideal {model.calls * args.latency / args.concurrency:.1f} s at concurrency "
                  f"{args.concurrency}); items per battery {card.items}")
            if attempt == "first pass":
                print("  judgments per task: " + ", ".join(f"{k} {v}" for k, v in sorted(tasks.items())))
                print("  verdicts: " + "; ".join(f"{v.use} {v.verdict}" for v in card.verdicts))


if __name__ == "__main__":
    main()
