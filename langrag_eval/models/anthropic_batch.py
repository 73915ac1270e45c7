"""Anthropic's Message Batches through the official ``anthropic`` SDK (extra ``batch``): Messages
requests sent together, half the price, replies within 24 hours.

Each request is ``{"custom_id", "params": {"model", "max_tokens", "messages", ...}}`` (the API
needs ``max_tokens``: the judge's setting, else ``default_max_tokens``). Message batches carry no
label, so a batch whose id was never recorded (the command was killed as the provider created it)
is found again only when it is the one batch created since the record (else its prompts are sent
again: the one case where they may be paid twice). The client reads
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` as the SDK does, or takes ``base_url`` / ``api_key``.

>>> api = AnthropicBatchAPI("claude-haiku-4-5", api_key="sk-test", base_url="http://127.0.0.1:9")
>>> api.request(BatchRequest("k1", "Grade this.", GenerationParams()))["params"]["max_tokens"]
1024
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from ..errors import ConfigError
from ..model import GenerationParams, Reply, TokenUsage, estimate_tokens  # noqa: F401 (the example)
from ..runtime.batching import BatchLine, BatchRequest, BatchStatus

__all__ = ["AnthropicBatchAPI"]


def _client(base_url: str | None, api_key: str | None) -> Any:
    try:
        import anthropic
    except ImportError:
        raise ConfigError("batch judging with Anthropic needs the extra: "
                          "pip install 'langrag-eval[batch]'") from None
    return anthropic.AsyncAnthropic(base_url=base_url, api_key=api_key)


class AnthropicBatchAPI:
    """Message Batches for one model (``claude-haiku-4-5``; its judge id ``anthropic:claude-haiku-4-5``)."""

    provider = "anthropic"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 default_max_tokens: int = 1024, client: Any = None) -> None:
        self.model = model
        self.model_id = f"anthropic:{model}"
        self.default_max_tokens = default_max_tokens
        if client is None and not (api_key or os.environ.get("ANTHROPIC_API_KEY")
                                   or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            # the SDK would only refuse when it sends: say so now, in one line, not once per item
            raise ConfigError("Anthropic batch judge: no API key; set ANTHROPIC_API_KEY")
        self.client = client if client is not None else _client(base_url, api_key)

    def request(self, request: BatchRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "temperature": request.params.temperature,
                                  "max_tokens": request.params.max_tokens or self.default_max_tokens,
                                  "messages": [{"role": "user", "content": request.prompt}]}
        return {"custom_id": request.custom_id, "params": params}

    async def submit(self, requests: list[BatchRequest], *, tag: str) -> str:
        batch = await self.client.messages.batches.create(requests=[self.request(r) for r in requests])
        return str(batch.id)

    async def find(self, tag: str, since: float) -> str | None:
        matches = []
        async for batch in self.client.messages.batches.list(limit=100):
            created = batch.created_at.timestamp() if isinstance(batch.created_at, datetime) else 0.0
            if created >= since:
                matches.append(batch)
        # Without a label, the only safe adoption is a batch nobody else could have made: one alone.
        return str(matches[0].id) if len(matches) == 1 else None

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self.client.messages.batches.retrieve(batch_id)
        c = batch.request_counts
        failed = c.errored + c.canceled + c.expired
        return BatchStatus(batch_id, batch.processing_status, batch.processing_status == "ended",
                           total=c.processing + c.succeeded + failed, succeeded=c.succeeded, failed=failed)

    async def results(self, batch_id: str) -> list[BatchLine]:
        lines = []
        async for entry in await self.client.messages.batches.results(batch_id):
            lines.append(_read(entry))
        return lines


def _read(entry: Any) -> BatchLine:
    result = entry.result
    if result.type == "succeeded":
        message = result.message
        text = "".join(getattr(block, "text", "") for block in message.content)
        usage = message.usage
        return BatchLine(entry.custom_id, reply=Reply(text=text, usage=TokenUsage(
            prompt_tokens=usage.input_tokens or 0, completion_tokens=usage.output_tokens or estimate_tokens(text))))
    if result.type == "errored":
        error = getattr(result.error, "error", None)
        detail = f"{getattr(error, 'type', 'error')}: {getattr(error, 'message', '')}" if error else str(result.error)
        return BatchLine(entry.custom_id, error=detail)
    return BatchLine(entry.custom_id, error=f"request {result.type}")  # expired, canceled
