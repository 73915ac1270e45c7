"""LlamaIndex LLMs as judges (``--judge llamaindex:openai:gpt-4o`` builds
``llama_index.llms.openai.OpenAI(model="gpt-4o")``) and embedding models as embedders."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM, CustomLLM

from langrag_eval.models.embeddings import Embedder, FunctionEmbedder
from langrag_eval.errors import ConfigError
from langrag_eval.model import ChatModel, GenerationParams, Reply, TokenUsage, estimate_tokens, provider_class
from langrag_eval.runtime import Judge

__all__ = ["JudgeLike", "LlamaIndexEmbedder", "LlamaIndexModel", "LlamaIndexJudge", "as_embedder", "as_judge", "resolve"]


class LlamaIndexModel:
    """Any LlamaIndex ``LLM`` as a langrag model (``acomplete``). ``pass_params`` sends the judge's
    temperature, part of each cached judgment's key, with every call. A ``CustomLLM`` with only a
    synchronous ``complete`` runs in a worker thread, one call at a time, leaving the loop free."""

    constrained = False

    def __init__(self, llm: LLM, *, model_id: str | None = None, pass_params: bool = True) -> None:
        self.llm, self.pass_params = llm, pass_params
        self.model_id = model_id or f"llamaindex:{llm.metadata.model_name}"
        owner = next(c for c in type(llm).__mro__ if "acomplete" in c.__dict__)  # methods are wrapped
        self._sync_only = isinstance(llm, CustomLLM) and owner is CustomLLM
        self._sync_lock = threading.Lock()  # a synchronous LLM is not assumed to be thread-safe

    @property
    def sent_params(self) -> frozenset[str]:
        """The generation settings sent with a call, the only ones in its cache key."""
        return frozenset({"temperature"}) if self.pass_params else frozenset()

    def _complete(self, prompt: str, kwargs: dict[str, Any]) -> Any:
        with self._sync_lock:
            return self.llm.complete(prompt, **kwargs)

    async def generate(self, prompt: str, params: GenerationParams, *, schema: Any = None) -> Reply:
        kwargs: dict[str, Any] = {"temperature": params.temperature} if self.pass_params else {}
        response = await (asyncio.to_thread(self._complete, prompt, kwargs) if self._sync_only
                          else self.llm.acomplete(prompt, **kwargs))
        usage = (response.raw if isinstance(response.raw, dict) else {}).get("usage") or {}
        get = usage.get if isinstance(usage, dict) else (lambda k: getattr(usage, k, None))
        return Reply(text=response.text, usage=TokenUsage(
            prompt_tokens=get("prompt_tokens") or estimate_tokens(prompt),
            completion_tokens=get("completion_tokens") or estimate_tokens(response.text)))


# The earlier name: a model (the seam a Judge calls), not a langrag_eval Judge.
LlamaIndexJudge = LlamaIndexModel


def resolve(arg: str) -> LlamaIndexModel:
    """Entry point for ``llamaindex:<provider>:<model>``."""
    cls, model = provider_class(arg, scheme="llamaindex", package="llama_index.llms", base=LLM,
                                install="llama-index-llms-{}")
    return LlamaIndexModel(cls(model=model, temperature=0.0), model_id=f"llamaindex:{arg}")


JudgeLike = Judge | ChatModel | LLM


def as_judge(judge: JudgeLike) -> Judge:
    """A langrag ``Judge`` from a Judge, a LlamaIndex LLM or a langrag ``ChatModel``."""
    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, (LLM, ChatModel)):
        return Judge(LlamaIndexModel(judge) if isinstance(judge, LLM) else judge)
    raise ConfigError(f"expected a langrag Judge, a LlamaIndex LLM or a langrag ChatModel, "
                      f"got {type(judge).__name__}")


class LlamaIndexEmbedder(FunctionEmbedder):
    """A LlamaIndex ``BaseEmbedding`` as a langrag embedder (its ``get_text_embedding_batch``)."""

    def __init__(self, embed_model: BaseEmbedding, *, model_id: str | None = None) -> None:
        super().__init__(embed_model.get_text_embedding_batch,
                         model_id=model_id or f"llamaindex:{embed_model.model_name}")
        self.embed_model = embed_model


def as_embedder(embedder: Embedder | BaseEmbedding | None) -> Embedder | None:
    """A LlamaIndex ``BaseEmbedding`` wrapped as a langrag embedder; others as they are."""
    return LlamaIndexEmbedder(embedder) if isinstance(embedder, BaseEmbedding) else embedder
