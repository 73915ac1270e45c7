"""Two floors of the grading workload: a bare client, and the ``openai`` judge's SDK calls alone.

The same requests as our grading side (the vRAG-Eval prompt of each answer, the body
``openai:`` sends), made before the clock, with at most ``concurrency`` in flight.

- :func:`grading`, side ``bare-grading``: through one ``aiohttp`` session, each reply's JSON read and
  nothing done with it: no SDK, no parsing of a verdict, no store. Its wall over a peer's is the
  lowest ratio a client stack of this interpreter can show against that peer on the same server,
  machine and load; a goal below it is out of any client's reach, whatever the client's own work.
- :func:`sdk_grading`, side ``sdk-grading``: through the ``openai:`` judge's model call alone
  (:meth:`OpenAIChatModel.generate`: the official SDK on the transport the judge picks, the reply's
  text read), with no cache, limiter, verdict, result or store of ours: what the official SDK costs
  with nothing around it. The difference to ours is our own work, the difference to the bare
  client the SDK's.

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

__all__ = ["grading", "grading_bodies", "grading_prompts", "sdk_grading"]


def grading_prompts(spec: dict[str, Any]) -> tuple[list[str], GenerationParams]:
    """The prompts our grading side sends for ``spec``'s answers, in order, and the call's settings."""
    judge = Judge(ScriptedModel(lambda prompt: "", model_id="bodies"))
    grader = VragGrader(judge)
    params = GenerationParams(temperature=0.0, max_tokens=judge.params.max_tokens, seed=judge.params.seed)
    return ([grader.render(question=s["question"], answer=s["answer"], label=s["label"])
             for s in grading_samples(Path(spec["data"]), spec["n"])], params)


def grading_bodies(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The request bodies our grading side sends for ``spec``'s answers, in order."""
    prompts, params = grading_prompts(spec)
    model = OpenAIChatModel(spec["model"], api_key="unused", base_url="http://127.0.0.1:9/v1")
    return [model.body(prompt, params) for prompt in prompts]


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


async def sdk_grading(spec: dict[str, Any]) -> dict[str, Any]:
    """One timed run: every prompt through the ``openai:`` judge's model call, at most
    ``spec["concurrency"]`` at once; the model (its SDK client) is made before the clock, as ours is."""
    prompts, params = grading_prompts(spec)
    model = OpenAIChatModel(spec["model"])  # OPENAI_BASE_URL and OPENAI_API_KEY, as the judge reads them
    limit = asyncio.Semaphore(spec["concurrency"])

    async def call(prompt: str) -> None:
        async with limit:
            await model.generate(prompt, params)

    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(call(p) for p in prompts))  # a failed call fails the run
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"framework": f"the openai judge's SDK calls alone ({model.transport})",
            "runs": [{"wall": wall, "cpu": cpu}]}
