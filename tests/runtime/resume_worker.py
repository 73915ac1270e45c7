"""A grading-like run for the crash-and-resume test: ``python resume_worker.py STORE CALL_LOG N [STOP_AT]``.

Judges N items through ``Judge`` + ``run_batch`` with a file-backed ``RunStore`` and a slow
``ScriptedModel`` that appends every prompt it receives to CALL_LOG (flushed and fsynced before it
answers), so a test can count model calls across processes killed with SIGKILL. With STOP_AT, the
process stops itself (SIGSTOP) once it has logged its STOP_AT-th prompt, for the test to kill it
there: mid-run at that very call, however the machine schedules the two processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import zlib

from pydantic import BaseModel

from langrag_eval.model import GenerationParams, Reply
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RetryPolicy, RunStore, run_batch
from langrag_eval.testing import ScriptedModel
from langrag_eval.verdicts.formats import ScoreFormat


class Grade(BaseModel):
    score: int


def expected_score(item: str) -> int:
    return zlib.crc32(item.encode()) % 5 + 1


class LoggingModel(ScriptedModel):
    def __init__(self, log_path: str, stop_at: int = 0, **kwargs: object) -> None:
        super().__init__(lambda p: f"Score: [[{expected_score(p.split()[-1])}]], Reason: [[scripted]]",
                         **kwargs)  # type: ignore[arg-type]
        self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
        self._stop_at, self._logged = stop_at, 0

    async def generate(self, prompt: str, params: GenerationParams, *, schema=None) -> Reply:  # noqa: ANN001
        self._log.write(json.dumps(prompt) + "\n")
        self._log.flush()
        os.fsync(self._log.fileno())
        self._logged += 1
        if self._logged == self._stop_at:
            os.kill(os.getpid(), signal.SIGSTOP)
        return await super().generate(prompt, params, schema=schema)


async def main(store_path: str, log_path: str, n: int, stop_at: int = 0) -> dict[str, int]:
    store = RunStore(store_path)
    run = store.open_run("grade", {"items": n, "fixture": "resume"})
    judge = Judge(LoggingModel(log_path, stop_at, latency=0.02), store=store, run_id=run, concurrency=4,
                  retry=RetryPolicy(base_delay=0.001))

    async def grade(item: str) -> Grade | Unscored:
        answer = await judge.ask(f"Grade the answer to {item}", ScoreFormat())
        return answer.value if isinstance(answer.value, Unscored) else Grade(score=answer.value.score)

    items = [f"item-{i:03d}" for i in range(n)]
    results = await run_batch(items, grade, key=str, task="vrag", result_type=Grade, store=store,
                              run_id=run, concurrency=4)
    return {"run": run, "scored": sum(isinstance(r, Grade) for r in results), "calls": judge.model.calls}


if __name__ == "__main__":
    stop_at = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), stop_at))), flush=True)
