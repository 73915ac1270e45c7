"""The one LLM seam. Everything that talks to a model goes through :class:`ChatModel`.

An adapter needs one async method, ``generate``: a prompt in, a :class:`Reply` out. When
``schema`` is given, a backend that can constrain decoding (llama.cpp) should return JSON matching
it and set ``constrained = True``; others may ignore it, and the runtime parses their text.

>>> import asyncio
>>> from langrag_eval.testing import ScriptedModel
>>> asyncio.run(ScriptedModel(["hi"]).generate("hello", GenerationParams())).text
'hi'
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Collection, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

__all__ = ["GenerationParams", "TokenUsage", "Reply", "ChatModel", "call_key", "estimate_tokens", "provider_class"]


class GenerationParams(BaseModel):
    """Sampling settings sent with every call; part of the cache key."""

    model_config = ConfigDict(frozen=True)

    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None


class TokenUsage(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: "TokenUsage") -> "TokenUsage":
        return TokenUsage(prompt_tokens=self.prompt_tokens + other.prompt_tokens,
                          completion_tokens=self.completion_tokens + other.completion_tokens)

    def as_dict(self) -> dict[str, int]:
        """The counts as the ``usage`` mapping LLM APIs and tracers report (with ``total_tokens``).

        >>> TokenUsage(prompt_tokens=7, completion_tokens=2).as_dict()["total_tokens"]
        9
        """
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens}


class Reply(BaseModel):
    """What a model returned: its text and the tokens it reported (estimated when it reports none)."""

    model_config = ConfigDict(frozen=True)

    text: str
    usage: TokenUsage = TokenUsage()


@runtime_checkable
class ChatModel(Protocol):
    """A judge or generator model.

    ``model_id`` names the model for the cache and the report (for example ``openai:gpt-4o``).
    ``constrained`` is True when the backend guarantees replies that match ``schema``.
    A model that sends only some of the :class:`GenerationParams` fields with a call may name them
    in an optional ``sent_params`` attribute (an empty set when it sends none); only those are part
    of a call's cache key. Without it, every field is.
    """

    model_id: str
    constrained: bool

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply: ...


def estimate_tokens(text: str) -> int:
    """A provider-free token estimate (about four characters a token) for models that report none."""
    return max(1, (len(text) + 3) // 4) if text else 0


def call_key(model_id: str, prompt: str, params: GenerationParams,
             schema: dict[str, Any] | None = None, *, sent: Collection[str] | None = None) -> str:
    """The cache key of one call: model, full prompt, the generation settings sent with it and
    output schema. ``sent`` names the settings the model sends (its ``sent_params``); None means all.
    A setting the model does not send cannot change its reply, so it is not part of the key.

    >>> quiet = GenerationParams(temperature=0.0)
    >>> call_key("m", "p", quiet, sent=()) == call_key("m", "p", GenerationParams(temperature=1.0), sent=())
    True
    >>> call_key("m", "p", quiet) == call_key("m", "p", GenerationParams(temperature=1.0))
    False
    """
    settings = params.model_dump()
    if sent is not None:
        settings = {name: value for name, value in settings.items() if name in sent}
    payload = json.dumps({"model": model_id, "prompt": prompt, "params": settings,
                          "schema": schema}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def provider_class(spec: str, *, scheme: str, package: str, base: type, install: str) -> tuple[type, str]:
    """The model class and the model name that ``<provider>:<model>`` (a judge entry point's
    ``scheme:`` argument) names: the class in module ``package.<provider>`` that subclasses ``base``
    and is named like the provider (``openai`` -> ``OpenAI``). A :class:`ConfigError` says what is
    wrong: no model named, the module missing (``install`` formatted with the provider), no such class.

    >>> provider_class("decimal:28", scheme="std", package="", base=object, install="{}")
    (<class 'decimal.Decimal'>, '28')
    """
    import importlib
    import inspect

    from .errors import ConfigError

    provider, _, model = spec.partition(":")
    if not provider or not model:
        raise ConfigError(f"expected {scheme}:<provider>:<model>, got {scheme}:{spec}")
    name = f"{package}.{provider}" if package else provider
    try:
        module = importlib.import_module(name)
    except ImportError:
        raise ConfigError(f"install {install.format(provider)} to use {scheme}:{spec}") from None
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, base) and c.__name__.lower() == provider.replace("_", "").lower()]
    if not classes:
        raise ConfigError(f"{name} has no {base.__name__} class named like {provider!r}")
    return classes[0], model
