"""LangChain chat models as langrag-eval judges (:class:`LangChainModel`, :func:`as_judge`, the
``resolve`` entry point), and LangChain ``Embeddings`` as embedders.

>>> from langchain_core.language_models import FakeListChatModel
>>> as_judge(FakeListChatModel(responses=["Paris."])).model_id
'langchain:fake-list-chat-model'
"""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langrag_eval.adapters.adapting import judge_of
from langrag_eval.types import as_text
from langrag_eval.models.embeddings import Embedder, FunctionEmbedder
from langrag_eval.errors import ConfigError
from langrag_eval.model import ChatModel, GenerationParams, Reply, TokenUsage, estimate_tokens
from langrag_eval.adapters.recorder import EVALUATION_TAG
from langrag_eval.runtime import Judge

__all__ = ["JudgeLike", "LangChainEmbedder", "LangChainModel", "LangChainJudge", "as_embedder", "as_judge", "resolve"]


class LangChainModel:
    """Wraps any ``BaseChatModel``. With ``pass_params`` (the default, as in the LlamaIndex adapter)
    temperature and max tokens are bound per call from the judge's generation settings (temperature
    0 by default): those settings are part of every cached judgment's key, so a judge that ran at
    the model's own temperature would store replies under settings it did not use. A model that
    refuses them (some reasoning models take no temperature) fails on its first call; build it with
    the settings it accepts and pass ``pass_params=False``."""

    constrained = False

    def __init__(self, llm: BaseChatModel, *, model_id: str | None = None, pass_params: bool = True) -> None:
        name = getattr(llm, "model_name", None) or getattr(llm, "model", None)
        self.llm, self.pass_params = llm, pass_params
        self.model_id = model_id or f"langchain:{llm._llm_type}" + (f":{name}" if name else "")

    @property
    def sent_params(self) -> frozenset[str]:
        """The generation settings sent with a call, the only ones in its cache key: temperature
        and max tokens with ``pass_params``, none without (the model keeps those it was built with)."""
        return frozenset({"temperature", "max_tokens"}) if self.pass_params else frozenset()

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        sent = {"temperature": params.temperature, "max_tokens": params.max_tokens} if self.pass_params else {}
        llm: Any = self.llm.bind(**{k: v for k, v in sent.items() if v is not None}) if sent else self.llm
        message = await llm.ainvoke(prompt, config={"tags": [EVALUATION_TAG]})  # a judge's call is no app's
        text = as_text(message, strict=False) or ""  # content blocks joined
        meta = getattr(message, "usage_metadata", None) or {}
        usage = TokenUsage(prompt_tokens=meta.get("input_tokens") or estimate_tokens(prompt),
                           completion_tokens=meta.get("output_tokens") or estimate_tokens(text))
        return Reply(text=text, usage=usage)


# The earlier name: a model (the seam a Judge calls), not a langrag_eval Judge.
LangChainJudge = LangChainModel


def resolve(spec: str) -> LangChainModel:
    """Entry point: any ``provider:model`` LangChain's ``init_chat_model`` knows that the core does not
    claim (``anthropic:claude-sonnet-4-5``; ``openai:`` is the core's own provider), and any at all
    as ``langchain:provider:model`` (``langchain:openai:gpt-4o``)."""
    from langchain.chat_models import init_chat_model

    try:
        llm = init_chat_model(spec, temperature=0)
    except Exception as exc:  # noqa: BLE001 - a missing package, an unknown provider, a missing API key
        # (the provider SDK's own error type): a one-line configuration error, LangChain's paragraphs joined
        raise ConfigError(f"cannot create judge {spec!r}: {' '.join(str(exc).split())}") from None
    return LangChainModel(llm, model_id=spec, pass_params=False)


class LangChainEmbedder(FunctionEmbedder):
    """A LangChain ``Embeddings`` model as a langrag :class:`~langrag_eval.models.embeddings.Embedder`
    (its ``embed_documents``)."""

    def __init__(self, embeddings: Embeddings, *, model_id: str | None = None) -> None:
        super().__init__(embeddings.embed_documents, model_id=model_id or f"langchain:{type(embeddings).__name__}")
        self.embeddings = embeddings


def as_embedder(embedder: Embedder | Embeddings | None) -> Embedder | None:
    """A LangChain ``Embeddings`` wrapped as a langrag embedder; others as they are."""
    return LangChainEmbedder(embedder) if isinstance(embedder, Embeddings) else embedder


JudgeLike = Judge | ChatModel | BaseChatModel


def as_judge(judge: JudgeLike) -> Judge:
    """A langrag ``Judge`` from a Judge, a LangChain chat model or a langrag ``ChatModel``, for any
    evaluator (``VragGrader(as_judge(chat))``)."""
    return Judge(LangChainModel(judge)) if isinstance(judge, BaseChatModel) else judge_of(judge, "a LangChain model")
