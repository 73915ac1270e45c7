"""Loopback fakes of OpenAI's Batch API and Anthropic's Message Batches, written from the providers'
API references (files, batches, message batches: objects, lifecycles, input and output lines), for
the official SDKs to talk to over HTTP.

OpenAI: ``POST /v1/files`` (multipart, purpose ``batch``), ``GET /v1/files/{id}[/content]``,
``POST /v1/batches``, ``GET /v1/batches[/{id}]``, ``POST /v1/batches/{id}/cancel``; a batch moves
validating -> in_progress -> finalizing -> completed (or failed at validation, expired, cancelled)
one step per retrieve; output lines go to the output file, failed and expired ones to the error
file, in another order than the input. Anthropic: ``POST/GET /v1/messages/batches``, retrieve,
cancel, ``/results``; in_progress -> ended; a repeated ``custom_id`` is refused with HTTP 400.
Both count synchronous calls (``/v1/chat/completions``, ``/v1/messages``) and every line received.

OpenAI's chat completions endpoint checks a request as the reference states it (``model`` and a
non-empty ``messages`` list of known roles required; ``temperature`` from 0 to 2; ``max_tokens`` a
positive integer; ``seed`` an integer; else HTTP 400 naming the ``param``), records each request
with its API key, stops a reply at ``max_tokens`` with ``finish_reason`` ``length``, and serves
faults on demand (``chat_faults``, by prompt or API key): an HTTP status with the reference's error
body (429 and 5xx with ``retry-after-ms``), a 200 without choices, a body that is not JSON, a delay. The server
speaks HTTP/1.1 with keep-alive and counts the connections it accepted.

Replies come from ``reply(prompt)``, a deterministic function, so the grades can be asserted.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import json
import random
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

__all__ = ["FakeOpenAI", "FakeAnthropic", "vrag_reply"]


def vrag_reply(prompt: str) -> str:
    """A vRAG-Eval grade from the prompt's digest: 1-5, the same prompt always the same grade."""
    score = 1 + int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 5
    return f"Score: [[{score}]], Reason: [[graded {score} by the fake]]"


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Server:
    """A threaded loopback HTTP server routing to ``self.route(method, path, query, body, headers)``."""

    def __init__(self, reply: Callable[[str], str] = vrag_reply, *, seed: int = 0) -> None:
        self.reply, self.rng = reply, random.Random(seed)
        self.lock = threading.Lock()
        self.sync_calls = 0
        self.lines_seen: Counter[str] = Counter()   # custom_id -> times received in a batch
        self.prompts: dict[str, str] = {}           # custom_id -> the prompt of its line
        self.fail_plan: dict[str, int] = {}         # custom_id -> how many more times it fails
        self.expire = False                         # the next batches expire instead of completing
        self.hold = False                           # batches stay in progress while set
        self.twice: dict[str, str] = {}             # custom_id -> a second, different reply line for it
        self.raw_unicode = False                    # output lines hold non-ASCII characters unescaped
        self.batches: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        self.connections = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: a client that pools its connections reuses them

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with fake.lock:
                    fake.connections += 1

            def _serve(self, method: str) -> None:
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fake.before(method, path, body, self.headers)  # outside the lock: a delay holds no one else
                headers: dict[str, str] = {}
                with fake.lock:
                    fake.requests.append((method, path))
                    if not self.headers.get("Authorization") and not self.headers.get("x-api-key"):
                        status, payload = 401, {"error": {"message": "no key", "type": "authentication_error"}}
                    else:
                        status, payload = fake.route(method, path, dict(
                            p.split("=", 1) for p in query.split("&") if "=" in p), body, self.headers)
                    if isinstance(payload, tuple):  # (payload, extra headers)
                        payload, headers = payload
                raw = payload if isinstance(payload, (bytes, str)) else json.dumps(payload).encode()
                raw = raw.encode() if isinstance(raw, str) else raw
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if isinstance(payload, bytes)
                                 else "text/html" if isinstance(payload, str) else "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "_Server":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def route(self, method: str, path: str, query: dict[str, str], body: bytes,
              headers: Any) -> tuple[int, Any]:
        raise NotImplementedError

    def before(self, method: str, path: str, body: bytes, headers: Any) -> None:
        """Runs before a request is routed, outside the server's lock (a delay on demand)."""

    def _fails(self, custom_id: str) -> bool:
        left = self.fail_plan.get(custom_id, 0)
        if left:
            self.fail_plan[custom_id] = left - 1
        return bool(left)

    def _list(self, items: list[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
        newest = sorted(items, key=lambda b: (b["_order"]), reverse=True)
        after = query.get("after") or query.get("after_id")
        if after:
            ids = [b["id"] for b in newest]
            newest = newest[ids.index(after) + 1:] if after in ids else []
        limit = int(query.get("limit", 20))
        page = [_public(b) for b in newest[:limit]]
        return {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None, "has_more": len(newest) > limit}


def _public(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if not k.startswith("_")}


def _error(status: int, message: str, kind: str = "invalid_request_error", *, param: str | None = None,
           code: str | None = None) -> tuple[int, Any]:
    return status, {"error": {"message": message, "type": kind, "param": param, "code": code}}


_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


def _chat_problem(request: dict[str, Any]) -> tuple[str, str] | None:
    """What the chat completions reference refuses in a request: (the param, the message), or None."""
    if not isinstance(request.get("model"), str) or not request["model"]:
        return "model", "you must provide a model parameter"
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages", "'messages' must be a non-empty array"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in _ROLES or "content" not in m:
            return f"messages[{i}]", f"messages[{i}]: a message needs a known role and content"
    temperature = request.get("temperature", 1)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        return "temperature", f"{temperature!r} is not a number from 0 to 2 - 'temperature'"
    budget = request.get("max_tokens")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        return "max_tokens", f"{budget!r} is not a positive integer - 'max_tokens'"
    seed = request.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        return "seed", f"{seed!r} is not an integer - 'seed'"
    return None


class FakeOpenAI(_Server):
    """OpenAI's files and batches endpoints (base URL ``self.base_url``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.files: dict[str, dict[str, Any]] = {}
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        # prompt or API key -> what its chat requests get: a fault for every one, or a list of them,
        # one per request (None: a normal answer). A fault is an HTTP status, "no choices" (200
        # without them), "not json" (200 with an HTML page) or ("delay", seconds) before the answer.
        self.chat_faults: dict[str, Any] = {}
        self.chat_requests: list[dict[str, Any]] = []   # each chat request's body, with "_key"
        self.report_usage = True                        # False: replies without ``usage``
        # what a failed batch line says (some proxies quote the key they refused)
        self.line_error = "The server had an error processing your request."

    def _chat_fault(self, body: bytes, headers: Any) -> Any:
        try:
            request = json.loads(body)
            prompt = request["messages"][-1]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            prompt = None
        key = (headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        for name in (prompt, key):
            if isinstance(name, str) and name in self.chat_faults:
                plan = self.chat_faults[name]
                if not isinstance(plan, list):
                    return plan
                return plan.pop(0) if plan else None
        return None

    def before(self, method: str, path: str, body: bytes, headers: Any) -> None:
        if method == "POST" and path == "/v1/chat/completions":
            with self.lock:
                fault = self._chat_fault(body, headers)
            if isinstance(fault, (tuple, list)) and fault[0] == "delay":
                time.sleep(fault[1])
            elif fault is not None:
                headers.add_header("X-Fake-Fault", json.dumps(fault))  # travels with the request to route

    def _file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{len(self.files) + 1:06d}"
        self.files[file_id] = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                               "filename": filename, "purpose": purpose, "status": "processed", "_data": data}
        return self.files[file_id]

    def route(self, method: str, path: str, query: dict[str, str], body: bytes, headers: Any) -> tuple[int, Any]:
        if method == "POST" and path == "/v1/chat/completions":
            self.sync_calls += 1
            return self._chat(json.loads(body), headers)
        if method == "POST" and path == "/v1/files":
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                b"Content-Type: " + headers["Content-Type"].encode() + b"\r\n\r\n" + body)
            fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
            if "file" not in fields or "purpose" not in fields:
                return _error(400, "file and purpose are required")
            purpose = fields["purpose"].get_content().strip()
            if purpose not in {"batch", "assistants", "fine-tune", "vision", "user_data", "evals"}:
                return _error(400, f"invalid purpose {purpose!r}")
            return 200, _public(self._file(fields["file"].get_payload(decode=True),
                                           fields["file"].get_filename() or "upload", purpose))
        if m := re.fullmatch(r"/v1/files/([^/]+)(/content)?", path):
            found = self.files.get(m.group(1))
            if found is None:
                return _error(404, f"No such File object: {m.group(1)}")
            return 200, found["_data"] if m.group(2) else _public(found)
        if method == "POST" and path == "/v1/batches":
            request = json.loads(body)
            if request.get("input_file_id") not in self.files:
                return _error(404, f"No such File object: {request.get('input_file_id')}")
            if request.get("endpoint") not in {"/v1/chat/completions", "/v1/responses", "/v1/embeddings"}:
                return _error(400, "unsupported endpoint")
            if request.get("completion_window") != "24h":
                return _error(400, "completion_window must be 24h")
            batch_id = f"batch_{len(self.batches) + 1:06d}"
            now = int(time.time())
            self.batches[batch_id] = {
                "id": batch_id, "object": "batch", "endpoint": request["endpoint"], "errors": None,
                "input_file_id": request["input_file_id"], "completion_window": "24h", "status": "validating",
                "output_file_id": None, "error_file_id": None, "created_at": now, "in_progress_at": None,
                "expires_at": now + 86400, "finalizing_at": None, "completed_at": None, "failed_at": None,
                "expired_at": None, "cancelling_at": None, "cancelled_at": None,
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
                "metadata": request.get("metadata"), "_order": len(self.batches), "_lines": []}
            return 200, _public(self.batches[batch_id])
        if method == "GET" and path == "/v1/batches":
            return 200, self._list(list(self.batches.values()), query)
        if m := re.fullmatch(r"/v1/batches/([^/]+)(/cancel)?", path):
            batch = self.batches.get(m.group(1))
            if batch is None:
                return _error(404, f"No such batch: {m.group(1)}")
            if m.group(2) and method == "POST":
                if batch["status"] in {"validating", "in_progress", "finalizing"}:
                    batch["status"], batch["cancelling_at"] = "cancelling", int(time.time())
                return 200, _public(batch)
            self._advance(batch)
            return 200, _public(batch)
        return _error(404, f"no route {method} {path}")

    def _chat(self, request: dict[str, Any], headers: Any) -> tuple[int, Any]:
        """``POST /v1/chat/completions``: the request checked as the reference states it, then a
        fault if one is planned, else the reply."""
        self.chat_requests.append({**request, "_key": (headers.get("Authorization") or "")
                                   .removeprefix("Bearer ").strip()})
        problem = _chat_problem(request)
        if problem:
            return _error(400, problem[1], param=problem[0])
        fault = json.loads(headers["X-Fake-Fault"]) if headers.get("X-Fake-Fault") else None
        # a rate limit or a server error asks to be retried in 10 ms (the header OpenAI's SDK reads first)
        again = {"retry-after-ms": "10", "retry-after": "0"}
        if fault == 429:
            return 429, ({"error": {"message": "Rate limit reached for requests", "type": "requests",
                                    "param": None, "code": "rate_limit_exceeded"}}, again)
        if isinstance(fault, int):
            kinds = {400: "invalid_request_error", 401: "invalid_request_error", 403: "permission_error",
                     404: "invalid_request_error"}
            status, payload = _error(fault, f"fault {fault} on demand", kinds.get(fault, "server_error"),
                                     code="model_not_found" if fault == 404 else None)
            return status, ((payload, again) if fault >= 500 else payload)
        if fault == "no choices":
            return 200, {"id": "chatcmpl-x", "object": "chat.completion", "created": int(time.time()),
                         "model": request["model"]}
        if fault == "not json":
            return 200, "<html><body>502 Bad Gateway</body></html>"
        return 200, self._completion(request)

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][-1]["content"]
        text, finish = self.reply(prompt), "stop"
        budget = body.get("max_tokens") or body.get("max_completion_tokens")
        if budget is not None and _tokens(text) > budget:
            text, finish = text[:4 * budget], "length"
        out = {"id": f"chatcmpl-{hashlib.md5(prompt.encode()).hexdigest()[:12]}", "object": "chat.completion",
               "created": int(time.time()), "model": body["model"],
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                            "finish_reason": finish, "logprobs": None}],
               "usage": {"prompt_tokens": _tokens(prompt), "completion_tokens": _tokens(text),
                         "total_tokens": _tokens(prompt) + _tokens(text)}}
        if not self.report_usage:
            del out["usage"]
        return out

    def _advance(self, batch: dict[str, Any]) -> None:
        """One step of the lifecycle per retrieve, as a real batch moves on between polls."""
        now = int(time.time())
        status = batch["status"]
        if status == "validating":
            lines, problems, seen = [], [], set()
            for number, text in enumerate(self.files[batch["input_file_id"]]["_data"].decode().splitlines(), 1):
                if not text.strip():
                    continue
                line = json.loads(text)
                if line.get("custom_id") in seen:
                    problems.append({"code": "duplicate_custom_id", "line": number, "param": "custom_id",
                                     "message": f"The custom_id for this request is a duplicate of another "
                                                f"request: {line['custom_id']}"})
                elif line.get("method") != "POST" or line.get("url") != batch["endpoint"]:
                    problems.append({"code": "invalid_request", "line": number, "param": "url",
                                     "message": "url and method must match the batch's endpoint"})
                seen.add(line.get("custom_id"))
                lines.append(line)
            if problems:
                batch.update(status="failed", failed_at=now, errors={"object": "list", "data": problems})
                return
            for line in lines:
                self.lines_seen[line["custom_id"]] += 1
                self.prompts[line["custom_id"]] = line["body"]["messages"][-1]["content"]
            batch.update(status="in_progress", in_progress_at=now, _lines=lines)
            batch["request_counts"]["total"] = len(lines)
        elif status == "in_progress" and not self.hold:
            batch.update(status="finalizing", finalizing_at=now)
        elif status == "finalizing":
            self._finish(batch, "expired" if self.expire else "completed")
        elif status == "cancelling":
            self._finish(batch, "cancelled")

    def _finish(self, batch: dict[str, Any], final: str) -> None:
        out, errors = [], []
        for n, line in enumerate(batch["_lines"]):
            custom_id = line["custom_id"]
            record: dict[str, Any] = {"id": f"batch_req_{batch['id']}_{n}", "custom_id": custom_id}
            if final in {"expired", "cancelled"} and n % 2 == 1:
                code = "batch_expired" if final == "expired" else "batch_cancelled"
                errors.append({**record, "response": None, "error": {
                    "code": code, "message": "This request could not be executed before the completion "
                                             "window expired." if final == "expired" else "cancelled"}})
            elif self._fails(custom_id):
                errors.append({**record, "error": None, "response": {
                    "status_code": 500, "request_id": f"req_{n}",
                    "body": {"error": {"message": self.line_error,
                                       "type": "server_error", "param": None, "code": None}}}})
            else:
                out.append({**record, "error": None, "response": {
                    "status_code": 200, "request_id": f"req_{n}", "body": self._completion(line["body"])}})
                if custom_id in self.twice:  # a provider fault: a second line for one request
                    body = self._completion(line["body"])
                    body["choices"][0]["message"]["content"] = self.twice[custom_id]
                    out.append({**record, "error": None, "response": {
                        "status_code": 200, "request_id": f"req_{n}b", "body": body}})
        self.rng.shuffle(out)  # the provider keeps no input order
        now = int(time.time())
        if out:
            batch["output_file_id"] = self._file(
                "".join(json.dumps(r, ensure_ascii=not self.raw_unicode) + "\n" for r in out).encode(),
                f"{batch['id']}_output.jsonl",
                "batch_output")["id"]
        if errors:
            batch["error_file_id"] = self._file(
                "".join(json.dumps(r) + "\n" for r in errors).encode(), f"{batch['id']}_error.jsonl",
                "batch_output")["id"]
        batch["request_counts"].update(completed=len(out), failed=len(errors))
        batch.update(status=final, **{f"{final}_at": now})


class FakeAnthropic(_Server):
    """Anthropic's Message Batches endpoints (base URL ``self.base_url``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.revoked: set[str] = set()  # API keys refused with the reference's 401 authentication_error

    def route(self, method: str, path: str, query: dict[str, str], body: bytes, headers: Any) -> tuple[int, Any]:
        if not headers.get("anthropic-version"):
            return _error(400, "anthropic-version header is required")
        key = headers.get("x-api-key") or (headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if key in self.revoked:
            return 401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
        if method == "POST" and path == "/v1/messages":
            self.sync_calls += 1
            request = json.loads(body)
            return 200, self._message(request)
        if method == "POST" and path == "/v1/messages/batches":
            requests = json.loads(body).get("requests") or []
            seen: set[str] = set()
            for r in requests:
                custom_id = r.get("custom_id", "")
                if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", custom_id):
                    return _error(400, f"requests: custom_id {custom_id!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")
                if custom_id in seen:
                    return _error(400, f"requests: duplicate custom_id {custom_id!r}")
                seen.add(custom_id)
                params = r.get("params") or {}
                if not params.get("max_tokens") or not params.get("messages") or not params.get("model"):
                    return _error(400, "params: model, max_tokens and messages are required")
            for r in requests:
                self.lines_seen[r["custom_id"]] += 1
                self.prompts[r["custom_id"]] = r["params"]["messages"][-1]["content"]
            batch_id = f"msgbatch_{len(self.batches) + 1:06d}"
            now = time.time()
            self.batches[batch_id] = {
                "id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0, "canceled": 0,
                                   "expired": 0},
                "ended_at": None, "created_at": _iso(now), "expires_at": _iso(now + 86400),
                "archived_at": None, "cancel_initiated_at": None, "results_url": None,
                "_order": len(self.batches), "_requests": requests, "_results": []}
            return 200, _public(self.batches[batch_id])
        if method == "GET" and path == "/v1/messages/batches":
            return 200, self._list(list(self.batches.values()), query)
        if m := re.fullmatch(r"/v1/messages/batches/([^/]+)(/cancel|/results)?", path):
            batch = self.batches.get(m.group(1))
            if batch is None:
                return 404, {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}
            if m.group(2) == "/cancel" and method == "POST":
                if batch["processing_status"] == "in_progress":
                    batch.update(processing_status="canceling", cancel_initiated_at=_iso(time.time()))
                return 200, _public(batch)
            if m.group(2) == "/results":
                if batch["processing_status"] != "ended":
                    return _error(400, "results are available once the batch has ended")
                return 200, "".join(json.dumps(r) + "\n" for r in batch["_results"]).encode()
            self._advance(batch)
            return 200, _public(batch)
        return _error(404, f"no route {method} {path}")

    def _message(self, params: dict[str, Any]) -> dict[str, Any]:
        prompt = params["messages"][-1]["content"]
        text = self.reply(prompt if isinstance(prompt, str) else prompt[0]["text"])
        return {"id": f"msg_{hashlib.md5(text.encode()).hexdigest()[:12]}", "type": "message",
                "role": "assistant", "model": params["model"], "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": _tokens(str(prompt)), "output_tokens": _tokens(text)}}

    def _advance(self, batch: dict[str, Any]) -> None:
        if batch["processing_status"] == "ended" or (batch["processing_status"] == "in_progress" and self.hold):
            return
        canceled = batch["processing_status"] == "canceling"
        results, counts = [], {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for n, r in enumerate(batch["_requests"]):
            if (canceled or self.expire) and n % 2 == 1:
                kind = "canceled" if canceled else "expired"
                results.append({"custom_id": r["custom_id"], "result": {"type": kind}})
                counts[kind] += 1
            elif self._fails(r["custom_id"]):
                results.append({"custom_id": r["custom_id"], "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "api_error", "message": "Internal server error"}}}})
                counts["errored"] += 1
            else:
                results.append({"custom_id": r["custom_id"],
                                "result": {"type": "succeeded", "message": self._message(r["params"])}})
                counts["succeeded"] += 1
        self.rng.shuffle(results)
        batch.update(processing_status="ended", ended_at=_iso(time.time()), request_counts=counts, _results=results,
                     results_url=f"{self.base_url}/v1/messages/batches/{batch['id']}/results")


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1e6):06d}Z"
