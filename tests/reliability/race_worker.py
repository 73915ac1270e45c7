"""One of several processes racing on one store: ``python race_worker.py CALL_LOG -- CLI ARGS``.

Runs the ``langrag-eval`` command given after ``--`` with every scripted judge made slow (20 ms a
call) and logging each call that reaches it to CALL_LOG (fsynced, appended by every process), so
a test can count model calls across processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from langrag_eval import testing
from langrag_eval.cli import main

_generate = testing.ScriptedModel.generate


async def _slow_logged(self, prompt, params, *, schema=None):  # noqa: ANN001, ANN202
    with open(sys.argv[1], "a", encoding="utf-8") as log:
        log.write(json.dumps({"pid": os.getpid(), "prompt": prompt}) + "\n")
        log.flush()
        os.fsync(log.fileno())
    await asyncio.sleep(0.02)
    return await _generate(self, prompt, params, schema=schema)


if __name__ == "__main__":
    testing.ScriptedModel.generate = _slow_logged  # type: ignore[method-assign]
    sys.exit(main(sys.argv[sys.argv.index("--") + 1:]))
