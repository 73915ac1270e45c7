"""LlamaIndex LLMs as langrag-eval judges, and LlamaIndex embedding models as embedders.

``--judge llamaindex:openai:gpt-4o`` builds ``llama_index.llms.openai.OpenAI(model="gpt-4o")``;
any installed ``llama-index-llms-<provider>`` package works the same way.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import threading
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM, CustomLLM

from langrag_eval.embeddings import Embedder, FunctionEmbedder
from langrag_eval.errors import ConfigError
from langrag_eval.model import GenerationParams, Reply, TokenUsage, estimate_tokens

__all__ = ["LlamaIndexEmbedder", "LlamaIndexJudge", "as_embedder", "resolve"]


def _owner(cls: type, name: str) -> type | None:
    """The class whose body defines ``name`` (LlamaIndex wraps methods, so identity checks fail)."""
    return next((c for c in cls.__mro__ if name in c.__dict__), None)


class LlamaIndexJudge:
    """Wraps any LlamaIndex ``LLM``; calls ``acomplete``. With ``pass_params`` (the default, as in
    the LangChain adapter) the judge's temperature is passed per call: the judge's generation
    settings are part of every cached judgment's key, so a judge that ran at the LLM's own
    temperature would store replies under settings it did not use. LLMs that refuse it fail on
    their first call; build them with the settings they accept and pass ``pass_params=False``.
    LlamaIndex LLMs take their token budget at construction, so no ``max_tokens`` is passed.

    A ``CustomLLM`` that implements only the synchronous ``complete`` (LlamaIndex's ``acomplete``
    then runs it inside the event loop) is called in a worker thread instead, one call at a time,
    so the loop stays free for the judge's timeouts and other calls."""

    constrained = False

    def __init__(self, llm: LLM, *, model_id: str | None = None, pass_params: bool = True) -> None:
        self.llm = llm
        self.model_id = model_id or f"llamaindex:{llm.metadata.model_name}"
        self.pass_params = pass_params
        self._sync_only = isinstance(llm, CustomLLM) and _owner(type(llm), "acomplete") is CustomLLM
        self._sync_lock = threading.Lock()  # a synchronous LLM is not assumed to be thread-safe

    @property
    def sent_params(self) -> frozenset[str]:
        """The generation settings sent with a call, the only ones in its cache key."""
        return frozenset({"temperature"}) if self.pass_params else frozenset()

    def _complete(self, prompt: str, kwargs: dict[str, Any]) -> Any:
        with self._sync_lock:
            return self.llm.complete(prompt, **kwargs)

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        kwargs: dict[str, Any] = {"temperature": params.temperature} if self.pass_params else {}
        if self._sync_only:
            response = await asyncio.to_thread(self._complete, prompt, kwargs)
        else:
            response = await self.llm.acomplete(prompt, **kwargs)
        text = response.text
        raw = response.raw if isinstance(response.raw, dict) else {}
        usage = raw.get("usage") or {}
        get = usage.get if isinstance(usage, dict) else (lambda k, d=None: getattr(usage, k, d))
        return Reply(text=text, usage=TokenUsage(
            prompt_tokens=get("prompt_tokens") or estimate_tokens(prompt),
            completion_tokens=get("completion_tokens") or estimate_tokens(text)))


def resolve(arg: str) -> LlamaIndexJudge:
    """Entry point for ``llamaindex:<provider>:<model>``."""
    provider, _, model = arg.partition(":")
    if not provider or not model:
        raise ConfigError(f"expected llamaindex:<provider>:<model>, got llamaindex:{arg}")
    try:
        module = importlib.import_module(f"llama_index.llms.{provider}")
    except ImportError:
        raise ConfigError(f"install llama-index-llms-{provider} to use llamaindex:{arg}") from None
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, LLM) and c.__name__.lower() == provider.replace("_", "").lower()]
    if not classes:
        raise ConfigError(f"llama_index.llms.{provider} has no LLM class named like {provider!r}")
    return LlamaIndexJudge(classes[0](model=model, temperature=0.0), model_id=f"llamaindex:{arg}")


class LlamaIndexEmbedder(FunctionEmbedder):
    """A LlamaIndex embedding model (``BaseEmbedding``) as a langrag ``Embedder`` (its
    ``get_text_embedding_batch``)."""

    def __init__(self, embed_model: BaseEmbedding, *, model_id: str | None = None) -> None:
        super().__init__(embed_model.get_text_embedding_batch, model_id=model_id or f"llamaindex:{embed_model.model_name}")
        self.embed_model = embed_model


def as_embedder(embedder: Embedder | BaseEmbedding | None) -> Embedder | None:
    """A LlamaIndex ``BaseEmbedding`` wrapped as a langrag embedder; others as they are."""
    return LlamaIndexEmbedder(embedder) if isinstance(embedder, BaseEmbedding) else embedder
