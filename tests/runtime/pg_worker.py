"""One cooperating worker: ``python pg_worker.py STORE_URL CALL_LOG N OUT [LATENCY]``.

Judges N items through ``Judge`` + ``run_batch`` on a shared store (concurrency 16) with a scripted
model that waits LATENCY seconds (default 0.05) and then appends the prompt it answered to CALL_LOG
(fsynced), so a test can count completed model calls across workers, killed ones included. Writes
the batch's results (every item's, from the store) as JSON to OUT.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from resume_worker import Grade, expected_score  # the same items and grades as the resume test

from langrag_eval.model import GenerationParams, Reply
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RetryPolicy, open_store, run_batch
from langrag_eval.testing import ScriptedModel
from langrag_eval.verdicts.formats import ScoreFormat


class LoggingModel(ScriptedModel):
    def __init__(self, log_path: str, **kwargs: object) -> None:
        super().__init__(lambda p: f"Score: [[{expected_score(p.split()[-1])}]], Reason: [[scripted]]",
                         **kwargs)  # type: ignore[arg-type]
        self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process

    async def generate(self, prompt: str, params: GenerationParams, *, schema=None) -> Reply:  # noqa: ANN001
        reply = await super().generate(prompt, params, schema=schema)
        self._log.write(json.dumps({"pid": os.getpid(), "prompt": prompt}) + "\n")
        self._log.flush()
        os.fsync(self._log.fileno())
        return reply


async def main(url: str, log_path: str, n: int, out: str, latency: float) -> None:
    store = open_store(url)
    if hasattr(store, "claim_ttl"):
        store.claim_ttl = float(os.environ.get("CLAIM_TTL", "30"))
        store._keeper.ttl = store.claim_ttl  # renew every third of the claims' lifetime
    run = store.open_run("grade", {"items": n, "fixture": "workers"})
    judge = Judge(LoggingModel(log_path, latency=latency), store=store, run_id=run, concurrency=16,
                  retry=RetryPolicy(base_delay=0.001))

    async def grade(item: str) -> Grade | Unscored:
        answer = await judge.ask(f"Grade the answer to {item}", ScoreFormat())
        return answer.value if isinstance(answer.value, Unscored) else Grade(score=answer.value.score)

    items = [f"item-{i:05d}" for i in range(n)]
    results = await run_batch(items, grade, key=str, task="vrag", result_type=Grade, store=store,
                              run_id=run, concurrency=16)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump([r.model_dump() for r in results], fh)


if __name__ == "__main__":
    latency = float(sys.argv[5]) if len(sys.argv) > 5 else 0.05
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], latency))
