"""Batch judges from a judge specification: ``openai:MODEL`` through OpenAI's Batch API,
``anthropic:MODEL`` through Anthropic's Message Batches (extra ``batch``).

The model id stays the specification itself, as with the synchronous judge of the same name, so
replies cached by either one answer the other.

>>> resolve_batch("local")
Traceback (most recent call last):
langrag_eval.errors.ConfigError: --batch needs an openai:MODEL or anthropic:MODEL judge, not 'local'
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ConfigError
from ..runtime.batching import BatchModel

__all__ = ["resolve_batch", "BATCH_PROVIDERS"]

BATCH_PROVIDERS = ("openai", "anthropic")


def resolve_batch(spec: str, *, store: Any = None, run_id: str | None = None, base_url: str | None = None,
                  poll_interval: float = 30.0, on_status: Callable[[str], None] | None = None) -> BatchModel:
    """A :class:`~langrag_eval.runtime.batching.BatchModel` for ``provider:model``; the base URL is
    ``base_url``, else the SDK's own (``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``)."""
    provider, _, model = spec.partition(":")
    if provider not in BATCH_PROVIDERS or not model.strip():
        raise ConfigError(f"--batch needs an openai:MODEL or anthropic:MODEL judge, not {spec!r}")
    if provider == "openai":
        from .openai_batch import OpenAIBatchAPI
        api: Any = OpenAIBatchAPI(model.strip(), base_url=base_url)
    else:
        from .anthropic_batch import AnthropicBatchAPI
        api = AnthropicBatchAPI(model.strip(), base_url=base_url)
    return BatchModel(api, store=store, run_id=run_id, poll_interval=poll_interval, on_status=on_status)
