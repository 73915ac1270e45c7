"""A bare client of the grading workload: the least any Python client reaches on this server.

The same requests as our grading side (the vRAG-Eval prompt of each answer, the body
``openai:`` sends), made before the clock, then sent through one ``aiohttp`` session with at most
``concurrency`` in flight, each reply's JSON read and nothing done with it: no SDK, no parsing of a
verdict, no store. Its wall over a peer's is the lowest ratio a client stack of this interpreter can
show against that peer on the same server, machine and load; a goal below it is out of any client's
reach, whatever the client's own work.

>>> bodies = grading_bodies({"n": 2, "data": str(HALUEVAL), "model": "m"})
>>> len(bodies), bodies[0]["model"], bodies[0]["temperature"], "<answer>" in bodies[0]["messages"][0]["content"]
(2, 'm', 0.0, True)
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from pathlib import Path
from typing import Any

from scripted_judge import HALUEVAL, grading_samples  # noqa: F401 - HALUEVAL: the doctest's data

from langrag_eval.grading import VragGrader
from langrag_eval.model import GenerationParams
from langrag_eval.models.openai_chat import OpenAIChatModel
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel

__all__ = ["grading", "grading_bodies"]


def grading_bodies(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The request bodies our grading side sends for ``spec``'s answers, in order."""
    judge = Judge(ScriptedModel(lambda prompt: "", model_id="bodies"))
    grader = VragGrader(judge)
    params = GenerationParams(temperature=0.0, max_tokens=judge.params.max_tokens, seed=judge.params.seed)
    model = OpenAIChatModel(spec["model"], api_key="unused", base_url="http://127.0.0.1:9/v1")
    return [model.body(grader.render(question=s["question"], answer=s["answer"], label=s["label"]), params)
            for s in grading_samples(Path(spec["data"]), spec["n"])]


async def grading(spec: dict[str, Any]) -> dict[str, Any]:
    """One timed run: every body posted, at most ``spec["concurrency"]`` at once."""
    import aiohttp

    bodies = grading_bodies(spec)
    url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"}
    limit = asyncio.Semaphore(spec["concurrency"])
    failed = 0
    connector = aiohttp.TCPConnector(limit=spec["concurrency"])
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def post(body: dict[str, Any]) -> None:
            nonlocal failed
            async with limit, session.post(url, json=body) as reply:
                await reply.json()
                failed += reply.status != 200

        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(post(b) for b in bodies))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if failed:
        raise RuntimeError(f"{failed} of {len(bodies)} requests failed")
    return {"framework": "a bare aiohttp client (no SDK, no work)", "runs": [{"wall": wall, "cpu": cpu}]}
