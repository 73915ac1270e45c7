"""Client CPU per request of the ``openai:`` judge, by HTTP transport: the SDK's aiohttp client
(what ``pip install 'langrag-eval[openai]'`` installs and the judge picks by default) against its
httpx default (``OpenAIChatModel(..., http="httpx")``).

    python benchmarks/openai_transport.py                         # 800 requests, concurrency 16
    python benchmarks/openai_transport.py --requests 400 --rounds 5

The server is a separate process (aiohttp, a fixed chat completion after ``--latency`` seconds), so
the CPU measured, ``time.process_time()`` of this process around the calls, is the client's alone:
building each request, the SDK's send and receive, reading the reply. Each round runs both
transports, alternating which goes first; printed: the median and range over rounds of the CPU per
request, and the wall. The first round is a warm-up and not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

REPLY = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
         "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                      "message": {"role": "assistant", "content": "Score: [[4]], Reason: [[Matches.]]",
                                  "refusal": None}}],
         "usage": {"prompt_tokens": 300, "completion_tokens": 12, "total_tokens": 312}}


def serve(port: int, latency: float) -> None:
    from aiohttp import web

    body = json.dumps(REPLY)

    async def chat(request: web.Request) -> web.Response:
        await request.read()
        await asyncio.sleep(latency)
        return web.Response(text=body, content_type="application/json")

    async def ready(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.add_routes([web.post("/v1/chat/completions", chat), web.get("/ready", ready)])
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


async def calls(http: str, base: str, n: int, concurrency: int) -> tuple[float, float]:
    from langrag_eval.model import GenerationParams
    from langrag_eval.models.openai_chat import OpenAIChatModel

    model = OpenAIChatModel("gpt-4o-mini", base_url=base, api_key="sk-bench", http=http)
    params = GenerationParams(temperature=0.0, max_tokens=64)
    prompt = "Grade the answer against the label. " * 30
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with semaphore:
            await model.generate(f"{prompt} {i}", params)

    await model.generate(prompt, params)  # the client and its first connection, before the clock
    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.process_time() - cpu, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=800)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--rounds", type=int, default=4, help="rounds counted, after one warm-up")
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve, args.latency)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--latency", str(args.latency)])
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/ready").read()
                break
            except OSError:
                time.sleep(0.1)
        base = f"http://127.0.0.1:{port}/v1"
        figures: dict[str, list[tuple[float, float]]] = {"aiohttp": [], "httpx": []}
        for r in range(args.rounds + 1):
            for http in (("aiohttp", "httpx") if r % 2 else ("httpx", "aiohttp")):
                cpu, wall = asyncio.run(calls(http, base, args.requests, args.concurrency))
                if r:
                    figures[http].append((cpu, wall))
    finally:
        server.terminate()
        server.wait()
    import openai

    print(f"openai {openai.__version__}, {args.requests} requests a round, concurrency {args.concurrency}, "
          f"{args.latency * 1000:.0f} ms a request, {args.rounds} rounds; load {os.getloadavg()[0]:.1f}")
    for http, runs in figures.items():
        per = [1000 * cpu / args.requests for cpu, _ in runs]
        walls = [wall for _, wall in runs]
        print(f"{http:<8} client CPU {statistics.median(per):.2f} ms a request ({min(per):.2f}-{max(per):.2f}), "
              f"wall {statistics.median(walls):.2f} s")


if __name__ == "__main__":
    main()
