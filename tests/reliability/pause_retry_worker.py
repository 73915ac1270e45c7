"""A run holder that pauses itself mid-batch: ``python pause_retry_worker.py STORE LOG N OUT PAUSE_AT TTL``.

Judges N items, four at a time, with a scripted model whose first attempt at every prompt fails
with a connection error (so at any moment some calls sit in their retry back-off) and which logs
every attempt it is sent, with the sender's pid and the time, to LOG (fsynced). With PAUSE_AT > 0
the process stops itself with SIGSTOP at its PAUSE_AT-th lease (SQLite) or claim (PostgreSQL)
check, after writing OUT.paused; it goes on when sent SIGCONT. Exit 0 with the results in OUT, or
2 with one line on stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

from langrag_eval.errors import LangragError
from langrag_eval.model import GenerationParams, Reply
from pydantic import BaseModel

from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RetryPolicy, open_store, run_batch
from langrag_eval.testing import ScriptedModel
from langrag_eval.verdicts.formats import ScoreFormat


class Grade(BaseModel):
    score: int


def expected_score(item: str) -> int:
    return int(item.rsplit("-", 1)[1]) % 5 + 1


class FlakyLoggingModel(ScriptedModel):
    def __init__(self, log_path: str) -> None:
        super().__init__(lambda p: f"Score: [[{expected_score(p.split()[-1])}]], Reason: [[scripted]]",
                         latency=0.01)
        self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
        self._seen: set[str] = set()

    async def generate(self, prompt: str, params: GenerationParams, *, schema=None) -> Reply:  # noqa: ANN001
        first = prompt not in self._seen
        self._seen.add(prompt)
        self._log.write(json.dumps({"pid": os.getpid(), "at": time.time(), "prompt": prompt, "ok": not first}) + "\n")
        self._log.flush()
        os.fsync(self._log.fileno())
        if first:
            raise ConnectionError("connection reset (scripted)")
        return await super().generate(prompt, params, schema=schema)


def pause_before(store: object, name: str, at: int, marker: Path) -> None:
    real = getattr(store, name)
    seen = [0]

    def paused(*args: object) -> object:
        seen[0] += 1
        if seen[0] == at:
            marker.write_text(str(time.time()), encoding="utf-8")
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
        run = store.open_run("grade", {"items": n, "fixture": "pause-retry"})
        judge = Judge(FlakyLoggingModel(log), store=store, run_id=run, concurrency=4,
                      retry=RetryPolicy(base_delay=0.4, max_delay=0.4))

        async def grade(item: str) -> Grade | Unscored:
            answer = await judge.ask(f"Grade the answer to {item}", ScoreFormat())
            return answer.value if isinstance(answer.value, Unscored) else Grade(score=answer.value.score)

        items = [f"item-{i:05d}" for i in range(n)]
        results = await run_batch(items, grade, key=str, task="vrag", result_type=Grade, store=store,
                                  run_id=run, concurrency=4)
        store.finish_run(run, {"items": n})
    except LangragError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    Path(out).write_text(json.dumps([r.model_dump() for r in results]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    url, log, n, out, pause_at, ttl = sys.argv[1:7]
    sys.exit(asyncio.run(main(url, log, int(n), out, int(pause_at), float(ttl))))
