"""Judge selection: ``--judge provider:model``, ``LANGRAG_JUDGE``, or the local default.

The core's own providers, ``openai`` (OpenAI's chat completions through the official SDK, extra
``openai``), ``local`` (llama.cpp) and ``scripted`` (a JSON file of replies), are registered here in
code, so a source checkout that was never pip-installed has them too. Others are found through the
``langrag_eval.judges`` entry point group: ``langchain-langrag`` registers ``langchain``, which
resolves any other ``provider:model`` that LangChain's ``init_chat_model`` knows
(``anthropic:claude-...``, ``mistralai:...``), and ``llama-index-evaluation-langrag`` registers
``llamaindex``. A built-in name is not taken over by an entry point of the same name.

>>> sorted(set(judge_providers()) & {"local", "openai", "scripted"})
['local', 'openai', 'scripted']
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Callable, Mapping, Protocol

from ..errors import ConfigError, DataError
from ..model import ChatModel

__all__ = ["resolve_judge", "ResolvedJudge", "TINY_MODEL_WARNING", "judge_providers"]

TINY_MODEL_WARNING = (
    "The judge is the offline default, a 270M-parameter model: its grades are NOT meaningful. "
    "Choose a real judge with --judge provider:model (for example openai:gpt-4o) or LANGRAG_JUDGE.")

_API_KEYS = ("OPENAI_API_KEY",)
_FALLBACK = "langchain"  # resolves provider:model strings the other providers do not claim


@dataclass(frozen=True)
class ResolvedJudge:
    model: ChatModel
    spec: str
    warning: str | None = None


class _Provider(Protocol):
    """A judge provider found by name: ``load()`` gives its factory, ``spec -> ChatModel``."""

    name: str

    def load(self) -> Callable[[str], ChatModel]: ...


@dataclass(frozen=True)
class _Builtin:
    """One of the core's providers: its factory as ``module:attribute``, imported on ``load()``."""

    name: str
    value: str

    def load(self) -> Any:
        module, _, attribute = self.value.partition(":")
        return getattr(importlib.import_module(module), attribute)


_BUILTIN = {p.name: p for p in (_Builtin("openai", "langrag_eval.models.openai_chat:resolve"),
                                _Builtin("local", "langrag_eval.models.llamacpp:resolve"),
                                _Builtin("scripted", "langrag_eval.testing:resolve"))}


def judge_providers() -> dict[str, _Provider]:
    """Judge providers by name: the core's own (registered in code), then installed ones from
    entry points."""
    found: dict[str, _Provider] = {ep.name: ep for ep in entry_points(group="langrag_eval.judges")}  # type: ignore[misc]
    return {**found, **_BUILTIN}


def resolve_judge(spec: str | None = None, *, env: Mapping[str, str] = os.environ) -> ResolvedJudge:
    """Turn a judge specification into a model. With none given (argument or ``LANGRAG_JUDGE``),
    ``openai:gpt-4o`` when ``OPENAI_API_KEY`` is set, otherwise the local default with a warning."""
    if spec is not None and not spec.strip():
        # An empty --judge is a mistake (an unset shell variable, say), not a request for the default.
        raise ConfigError("empty judge specification: expected provider:model (openai:gpt-4o), local, "
                          "local:/path/model.gguf or scripted:replies.json")
    from_env = not spec and bool((env.get("LANGRAG_JUDGE") or "").strip())
    spec = (spec or env.get("LANGRAG_JUDGE") or "").strip()
    if not spec:
        spec = "openai:gpt-4o" if any(env.get(k) for k in _API_KEYS) else "local"
    try:
        return _resolve(spec)
    except (ConfigError, DataError) as exc:
        if not from_env:
            raise
        # Nothing on the command line named this judge: say where it came from, or the user looks
        # for a --judge they never typed.
        raise ConfigError(f"LANGRAG_JUDGE={spec!r} (from the environment): {exc}; change or unset "
                          "LANGRAG_JUDGE, or give --judge") from None


def _resolve(spec: str) -> ResolvedJudge:
    provider, _, rest = spec.partition(":")
    providers = judge_providers()
    if provider in providers:
        factory, arg = providers[provider].load(), rest
    elif _FALLBACK in providers and rest:
        factory, arg = providers[_FALLBACK].load(), spec
    elif not rest:
        raise ConfigError(f"unknown judge {spec!r}: expected provider:model (openai:gpt-4o), "
                          f"local, local:/path/model.gguf or scripted:replies.json")
    else:
        raise ConfigError(f"unknown judge provider {provider!r} in {spec!r}: installed providers are "
                          f"{', '.join(sorted(providers))}; install langchain-langrag for "
                          "provider:model judges such as anthropic:claude-sonnet-4-5")
    model = factory(arg)
    warning = TINY_MODEL_WARNING if getattr(model, "is_tiny_default", False) else None
    return ResolvedJudge(model=model, spec=spec, warning=warning)
