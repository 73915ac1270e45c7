"""A run holder that pauses itself: ``python pause_worker.py STORE CALL_LOG N OUT PAUSE_AT TTL``.

Judges N items one at a time (``Judge`` + ``run_batch``) with the scripted model of
``pg_worker.py``, which appends each prompt it answers to CALL_LOG. Leases and claims live TTL
seconds. With PAUSE_AT > 0 the process stops itself with SIGSTOP just before its PAUSE_AT-th check
of the lease (SQLite) or claim (PostgreSQL), i.e. between two paid calls, after writing OUT.paused;
it goes on when sent SIGCONT. Exit 0 with the results in OUT, or 2 with one line on stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from pg_worker import LoggingModel
from resume_worker import Grade

from langrag_eval.errors import LangragError
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RetryPolicy, open_store, run_batch
from langrag_eval.verdicts.formats import ScoreFormat


def pause_before(store: object, name: str, at: int, marker: Path) -> None:
    real = getattr(store, name)
    seen = [0]

    def paused(*args: object) -> object:
        seen[0] += 1
        if seen[0] == at:
            marker.write_text("paused", encoding="utf-8")
            os.kill(os.getpid(), signal.SIGSTOP)
        return real(*args)

    setattr(store, name, paused)


async def main(url: str, log: str, n: int, out: str, pause_at: int, ttl: float) -> int:
    store = open_store(url)
    store.lease_ttl = ttl
    store._keeper.ttl = ttl
    if hasattr(store, "claim_ttl"):
        store.claim_ttl = ttl
    if pause_at:
        pause_before(store, "hold_claim" if hasattr(store, "claim_ttl") else "check_lease", pause_at,
                     Path(out + ".paused"))
    try:
        run = store.open_run("grade", {"items": n, "fixture": "pause"})
        judge = Judge(LoggingModel(log, latency=0.02), store=store, run_id=run, concurrency=1,
                      retry=RetryPolicy(base_delay=0.001))

        async def grade(item: str) -> Grade | Unscored:
            answer = await judge.ask(f"Grade the answer to {item}", ScoreFormat())
            return answer.value if isinstance(answer.value, Unscored) else Grade(score=answer.value.score)

        items = [f"item-{i:05d}" for i in range(n)]
        results = await run_batch(items, grade, key=str, task="vrag", result_type=Grade, store=store,
                                  run_id=run, concurrency=1)
        store.finish_run(run, {"items": n})
    except LangragError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    Path(out).write_text(json.dumps([r.model_dump() for r in results]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    url, log, n, out, pause_at, ttl = sys.argv[1:7]
    sys.exit(asyncio.run(main(url, log, int(n), out, int(pause_at), float(ttl))))
