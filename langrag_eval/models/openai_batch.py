"""OpenAI's Batch API through the official ``openai`` SDK (extra ``batch``): chat completions sent
as a JSONL file, half the price, replies within 24 hours.

Each request is one line ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``;
the batch carries the ledger's tag in its ``metadata``, so a batch whose id was never recorded (the
command was killed as the provider created it) is found again by listing the batches. The client
reads ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` as the SDK does, or takes ``base_url`` / ``api_key``.

>>> api = OpenAIBatchAPI("gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
>>> api.model_id, api.line(BatchRequest("k1", "Grade this.", GenerationParams()))["body"]["model"]
('openai:gpt-4o-mini', 'gpt-4o-mini')
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ConfigError
from ..model import GenerationParams, Reply, TokenUsage, estimate_tokens  # noqa: F401 (the example)
from ..runtime.batching import BatchLine, BatchRequest, BatchStatus

__all__ = ["OpenAIBatchAPI"]

ENDPOINT = "/v1/chat/completions"
_ENDED = {"completed", "expired", "failed", "cancelled"}
TAG_FIELD = "langrag_batch"


def _client(base_url: str | None, api_key: str | None) -> Any:
    try:
        import openai
    except ImportError:
        raise ConfigError("batch judging with OpenAI needs the extra: pip install 'langrag-eval[batch]'") from None
    try:
        return openai.AsyncOpenAI(base_url=base_url, api_key=api_key)
    except openai.OpenAIError as exc:  # no key: one line, not the SDK's paragraph
        raise ConfigError(f"OpenAI batch judge: {' '.join(str(exc).split())}") from None


class OpenAIBatchAPI:
    """The Batch API for one chat model (``gpt-4o-mini``; its judge id is ``openai:gpt-4o-mini``)."""

    provider = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 client: Any = None) -> None:
        self.model = model
        self.model_id = f"openai:{model}"
        self.client = client if client is not None else _client(base_url, api_key)

    def line(self, request: BatchRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "temperature": request.params.temperature,
                                "messages": [{"role": "user", "content": request.prompt}]}
        if request.params.max_tokens is not None:
            body["max_tokens"] = request.params.max_tokens
        if request.params.seed is not None:
            body["seed"] = request.params.seed
        if request.schema is not None:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "verdict", "schema": request.schema}}
        return {"custom_id": request.custom_id, "method": "POST", "url": ENDPOINT, "body": body}

    async def submit(self, requests: list[BatchRequest], *, tag: str) -> str:
        data = "".join(json.dumps(self.line(r), ensure_ascii=False) + "\n" for r in requests).encode()
        upload = await self.client.files.create(file=(f"{tag}.jsonl", data), purpose="batch")
        batch = await self.client.batches.create(input_file_id=upload.id, endpoint=ENDPOINT,
                                                 completion_window="24h", metadata={TAG_FIELD: tag})
        return str(batch.id)

    async def find(self, tag: str, since: float) -> str | None:
        async for batch in self.client.batches.list(limit=100):
            if batch.created_at < since:
                break  # newest first: the rest are older than the record
            if (batch.metadata or {}).get(TAG_FIELD) == tag:
                return str(batch.id)
        return None

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self.client.batches.retrieve(batch_id)
        counts = batch.request_counts
        error = None
        if batch.status == "failed":
            errors = [f"{e.code}: {e.message}" + (f" (line {e.line})" if e.line else "")
                      for e in ((batch.errors.data or []) if batch.errors else [])]
            error = "; ".join(errors) or "the batch failed"
        return BatchStatus(batch_id, batch.status, batch.status in _ENDED,
                           total=counts.total if counts else 0, succeeded=counts.completed if counts else 0,
                           failed=counts.failed if counts else 0, error=error)

    async def results(self, batch_id: str) -> list[BatchLine]:
        batch = await self.client.batches.retrieve(batch_id)
        lines: list[BatchLine] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                content = await self.client.files.content(file_id)
                # JSONL lines end at "\n" only: splitlines() would also cut a reply at U+2028.
                lines += [_read_line(json.loads(text)) for text in content.text.split("\n") if text.strip()]
        return lines


def _read_line(obj: dict[str, Any]) -> BatchLine:
    custom_id = str(obj.get("custom_id"))
    response = obj.get("response") or {}
    body = response.get("body") or {}
    if obj.get("error"):
        error = obj["error"]
        return BatchLine(custom_id, error=f"{error.get('code')}: {error.get('message')}")
    if response.get("status_code") != 200:
        detail = (body.get("error") or {}) if isinstance(body, dict) else {}
        return BatchLine(custom_id, error=f"HTTP {response.get('status_code')}: "
                                          f"{detail.get('message') or json.dumps(body)[:300]}")
    try:
        text = body["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        return BatchLine(custom_id, error=f"a response without a message: {json.dumps(body)[:300]}")
    usage = body.get("usage") or {}
    return BatchLine(custom_id, reply=Reply(text=text, usage=TokenUsage(
        prompt_tokens=usage.get("prompt_tokens") or 0,
        completion_tokens=usage.get("completion_tokens") or estimate_tokens(text))))

