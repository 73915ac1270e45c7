"""A local OpenAI-compatible server for the peer benchmarks: a fixed latency per request, the
scripted judge's decisions (benchmarks/peers/scripted_judge.py) worded in the format each tool's
prompt asks for, and requests and tokens counted per client.

    python benchmarks/fake_openai.py --port 8765 --latency 0.1

Clients tell themselves apart by their API key (``OPENAI_API_KEY=ragas-faithfulness``, say); a
request without one counts under its model name. Endpoints: ``POST /v1/chat/completions``,
``POST /v1/completions``, ``POST /v1/responses`` (the Responses API, which RAGElo's client
uses), ``POST /v1/embeddings`` (a deterministic unit vector per text, for metrics
that embed), ``GET /stats`` (per client: requests, prompt and completion tokens, errors, the peak of
requests in flight and their time-weighted mean over the client's active span, from the arrival of its
first request to the answer of its last) and ``POST /reset``. Tokens are counted as about four characters a token of the
message contents the client sent (the same estimate on every side); the reply's ``usage`` field
carries the same counts. A prompt the script does not know gets HTTP 400 and counts as an error,
so a peer whose prompt changed shows up as failures rather than as fast runs.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

from scripted_judge import HALUEVAL, Script, estimate_tokens, faithfulness_samples, grading_samples  # noqa: E402

__all__ = ["app", "prompt_text", "script_for"]


def script_for(data: Path, n: int) -> Script:
    """One script for every workload: the faithfulness and grading samples share their answers."""
    samples = faithfulness_samples(data, n) + grading_samples(data, n)
    return Script({s["answer"].strip(): s["right"] for s in samples})


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The chat as one text, ``role: content`` per message, ending with the assistant's turn (the
    shape LlamaIndex's in-process formatting gives, which the script reads)."""
    parts = []
    for m in messages:
        content = m.get("content") or ""
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(f"{m.get('role', 'user')}: {content}")
    return "\n".join(parts) + "\nassistant: "


class Counters:
    def __init__(self) -> None:
        self.by_client: dict[str, dict[str, Any]] = defaultdict(
            lambda: {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "errors": 0,
                     "in_flight": 0, "peak": 0, "kinds": defaultdict(int),
                     "first": None, "changed": 0.0, "area": 0.0, "mean_in_flight": 0.0})


def _in_flight(c: dict[str, Any], step: int) -> None:
    """Add ``step`` to the client's requests in flight, integrating the count over time: the mean in
    flight is that integral over the span from its first request's arrival to its last answer."""
    now = time.perf_counter()
    if c["first"] is None:
        c["first"] = c["changed"] = now
    c["area"] += c["in_flight"] * (now - c["changed"])
    c["in_flight"] += step
    c["changed"] = now
    c["peak"] = max(c["peak"], c["in_flight"])
    span = now - c["first"]
    c["mean_in_flight"] = c["area"] / span if span > 0 else 0.0


def _client(request: web.Request, body: dict[str, Any]) -> str:
    auth = request.headers.get("Authorization", "")
    key = auth.removeprefix("Bearer ").strip()
    return key or str(body.get("model", "unknown"))


def app(script: Script, latency: float) -> web.Application:
    counters = Counters()

    async def answer(request: web.Request, text_of, wrap) -> web.Response:
        body = await request.json()
        c = counters.by_client[_client(request, body)]
        _in_flight(c, 1)
        try:
            await asyncio.sleep(latency)
            prompt = text_of(body)
            try:
                kind, reply = script.reply(prompt)
            except Exception as exc:  # noqa: BLE001 - an unknown prompt is the client's failure
                c["errors"] += 1
                return web.json_response({"error": {"message": str(exc)[:300], "type": "invalid_request_error"}},
                                         status=400)
            usage = {"prompt_tokens": estimate_tokens(prompt), "completion_tokens": estimate_tokens(reply)}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            c["requests"] += 1
            c["prompt_tokens"] += usage["prompt_tokens"]
            c["completion_tokens"] += usage["completion_tokens"]
            c["kinds"][kind] += 1
            return web.json_response(wrap(body, reply, usage))
        finally:
            _in_flight(c, -1)

    def chat(body: dict[str, Any], reply: str, usage: dict[str, int]) -> dict[str, Any]:
        return {"id": f"chatcmpl-{hashlib.sha1(reply.encode()).hexdigest()[:12]}", "object": "chat.completion",
                "created": int(time.time()), "model": body.get("model", "fake"),
                "choices": [{"index": i, "message": {"role": "assistant", "content": reply, "refusal": None},
                             "logprobs": None, "finish_reason": "stop"} for i in range(body.get("n") or 1)],
                "usage": usage}

    def completion(body: dict[str, Any], reply: str, usage: dict[str, int]) -> dict[str, Any]:
        return {"id": "cmpl-fake", "object": "text_completion", "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "text": reply, "logprobs": None, "finish_reason": "stop"}],
                "usage": usage}

    def response(body: dict[str, Any], reply: str, usage: dict[str, int]) -> dict[str, Any]:
        return {"id": "resp_fake", "object": "response", "created_at": int(time.time()), "status": "completed",
                "model": body.get("model", "fake"), "error": None, "incomplete_details": None,
                "instructions": body.get("instructions"), "metadata": {}, "temperature": None, "top_p": None,
                "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "output": [{"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
                            "content": [{"type": "output_text", "text": reply, "annotations": []}]}],
                "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                          "total_tokens": usage["total_tokens"], "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}

    def response_text(body: dict[str, Any]) -> str:
        given = body.get("input", "")
        messages = [{"role": "user", "content": given}] if isinstance(given, str) else given
        if body.get("instructions"):
            messages = [{"role": "system", "content": body["instructions"]}, *messages]
        return prompt_text(messages)

    async def responses(request: web.Request) -> web.Response:
        return await answer(request, response_text, response)

    async def chat_completions(request: web.Request) -> web.Response:
        return await answer(request, lambda b: prompt_text(b.get("messages", [])), chat)

    async def completions(request: web.Request) -> web.Response:
        return await answer(request, lambda b: str(b.get("prompt", "")), completion)

    async def embeddings(request: web.Request) -> web.Response:
        body = await request.json()
        c = counters.by_client[_client(request, body)]
        await asyncio.sleep(latency)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for i, text in enumerate(texts):
            digest = hashlib.sha256(str(text).encode()).digest()
            vector = [b / 255 - 0.5 for b in digest[:32]]
            norm = sum(x * x for x in vector) ** 0.5 or 1.0
            data.append({"object": "embedding", "index": i, "embedding": [x / norm for x in vector]})
        tokens = sum(estimate_tokens(str(t)) for t in texts)
        c["requests"] += 1
        c["embedding_tokens"] = c.get("embedding_tokens", 0) + tokens
        return web.json_response({"object": "list", "data": data, "model": body.get("model", "fake"),
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    async def stats(request: web.Request) -> web.Response:
        return web.json_response({k: {**v, "kinds": dict(v["kinds"])} for k, v in counters.by_client.items()})

    async def reset(request: web.Request) -> web.Response:
        counters.by_client.clear()
        return web.json_response({})

    application = web.Application(client_max_size=64 * 2**20)
    application.add_routes([web.post("/v1/chat/completions", chat_completions),
                            web.post("/v1/completions", completions),
                            web.post("/v1/responses", responses),
                            web.post("/v1/embeddings", embeddings),
                            web.get("/stats", stats), web.post("/reset", reset)])
    return application


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--latency", type=float, default=0.1, help="seconds per request (default 0.1)")
    ap.add_argument("--data", type=Path, default=HALUEVAL)
    ap.add_argument("--n", type=int, default=2000, help="samples the script knows (default 2000)")
    args = ap.parse_args(argv)
    web.run_app(app(script_for(args.data, args.n), args.latency), host="127.0.0.1", port=args.port,
                print=None, access_log=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
