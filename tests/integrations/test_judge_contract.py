"""The ChatModel contract run on both adapters' judges, each wrapping its framework's own fake:
LangChain's ``GenericFakeChatModel`` (observed through a callback handler, as LangChain reports a
call) and LlamaIndex's ``MockLLM`` (observed through ``LlamaDebugHandler``)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_langrag.models import LangChainJudge
from langrag_eval.model import TokenUsage
from langrag_eval.testing import ChatModelContract
from llama_index.core.callbacks import CallbackManager, CBEventType, EventPayload, LlamaDebugHandler
from llama_index.core.llms import MockLLM
from llama_index.evaluation.langrag.models import LlamaIndexJudge
from pydantic import PrivateAttr

REPLY = "The answer is A."


class _Recorder(BaseCallbackHandler):
    """What the chat model was asked: the last message of each call and its invocation params."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[Any]], **kwargs: Any) -> None:
        self.calls.append({"prompt": messages[0][-1].content, **kwargs.get("invocation_params", {})})


def _raising(error: Exception) -> Iterator[AIMessage]:
    raise error
    yield  # a generator: it raises when the fake asks for its next message


class TestLangChainJudge(ChatModelContract):
    """Temperature and max tokens are bound per call (``pass_params=True``, the default); the
    usage LangChain reports on the message is passed on."""

    passed_params = frozenset({"temperature", "max_tokens"})
    reported_usage = TokenUsage(prompt_tokens=17, completion_tokens=5)

    def make_model(self) -> LangChainJudge:
        message = AIMessage(content=REPLY, usage_metadata={"input_tokens": 17, "output_tokens": 5,
                                                           "total_tokens": 22})
        recorder = _Recorder()
        llm = GenericFakeChatModel(messages=itertools.cycle([message]), callbacks=[recorder])
        judge = LangChainJudge(llm)
        judge.recorder = recorder  # type: ignore[attr-defined]
        return judge

    def reply_for(self, prompt: str) -> str:
        return REPLY

    def backend_calls(self, model: Any) -> list[dict[str, Any]]:
        return model.recorder.calls

    def failing_model(self, error: Exception) -> LangChainJudge:
        return LangChainJudge(GenericFakeChatModel(messages=_raising(error)))

    def slow_model(self) -> LangChainJudge:
        return LangChainJudge(FakeListChatModel(responses=[REPLY], sleep=0.15))  # a synchronous sleep


class TestLangChainJudgeWithoutReportedUsage(ChatModelContract):
    """A chat model that reports no usage (``FakeListChatModel``): the counts are estimated."""

    def make_model(self) -> LangChainJudge:
        return LangChainJudge(FakeListChatModel(responses=[REPLY]))

    def reply_for(self, prompt: str) -> str:
        return REPLY


class _FailingLLM(MockLLM):
    """``MockLLM`` whose completion fails, as a provider's would."""

    _error: Exception = PrivateAttr()

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise self._error


class _SlowLLM(MockLLM):
    """``MockLLM`` with a synchronous completion that takes a while, as a local model's does."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        time.sleep(0.15)
        return super().complete(prompt, formatted=formatted, **kwargs)


def _failing_llm(error: Exception) -> MockLLM:
    llm = _FailingLLM()
    llm._error = error
    return llm


class TestLlamaIndexJudge(ChatModelContract):
    """``MockLLM`` replies with the prompt itself, so every reply shows the prompt arrived whole.
    The temperature is passed per call with ``pass_params=True``; LlamaIndex LLMs take their
    token budget at construction, so the adapter passes no ``max_tokens``."""

    passed_params = frozenset({"temperature"})

    def make_model(self) -> LlamaIndexJudge:
        debug = LlamaDebugHandler()
        judge = LlamaIndexJudge(MockLLM(callback_manager=CallbackManager([debug])), pass_params=True)
        judge.debug = debug  # type: ignore[attr-defined]
        return judge

    def reply_for(self, prompt: str) -> str:
        return prompt

    def backend_calls(self, model: Any) -> list[dict[str, Any]]:
        starts = [start.payload for start, _ in model.debug.get_event_pairs(CBEventType.LLM)]
        return [{"prompt": p[EventPayload.PROMPT], **p[EventPayload.ADDITIONAL_KWARGS]} for p in starts]

    def failing_model(self, error: Exception) -> LlamaIndexJudge:
        return LlamaIndexJudge(_failing_llm(error))

    def slow_model(self) -> LlamaIndexJudge:
        return LlamaIndexJudge(_SlowLLM())


class TestLlamaIndexJudgeOwnSettings(ChatModelContract):
    """``pass_params=False``: settings stay those the LLM was built with."""

    def make_model(self) -> LlamaIndexJudge:
        return LlamaIndexJudge(MockLLM(), pass_params=False)

    def reply_for(self, prompt: str) -> str:
        return prompt
