"""A generation setting a judge does not send cannot change its reply, so it is not part of the
call's cache key: with ``pass_params=False`` (how ``langchain:provider:model`` judges are resolved)
two calls differing only in temperature share one cached reply; with ``pass_params=True`` the
temperature is sent and the second call is made. Checked on LangChain's and LlamaIndex's own fake
models, counting the calls that reach them."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langrag_eval.model import GenerationParams, call_key
from langrag_eval.runtime import Judge
from langchain_langrag.models import LangChainJudge


class Counted(GenericFakeChatModel):
    calls: int = 0

    async def _agenerate(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        self.calls += 1
        return await super()._agenerate(*args, **kwargs)


def _two_calls(model, first: GenerationParams, second: GenerationParams) -> tuple[str, str]:  # noqa: ANN001
    judge = Judge(model)

    async def both() -> tuple[str, str]:
        a = await judge.complete("grade this", params=first)
        b = await judge.complete("grade this", params=second)
        return a.text, b.text

    return asyncio.run(both())


def _chat() -> Counted:
    return Counted(messages=iter([AIMessage(content="first"), AIMessage(content="second")]))


def test_unsent_settings_share_one_cached_reply() -> None:
    llm = _chat()
    judge = LangChainJudge(llm, model_id="openai:gpt-4o", pass_params=False)
    texts = _two_calls(judge, GenerationParams(temperature=0.0), GenerationParams(temperature=0.7, max_tokens=9))
    assert texts == ("first", "first") and llm.calls == 1


def test_sent_settings_change_the_key() -> None:
    llm = _chat()
    judge = LangChainJudge(llm, model_id="openai:gpt-4o", pass_params=True)
    texts = _two_calls(judge, GenerationParams(temperature=0.0), GenerationParams(temperature=0.7))
    assert texts == ("first", "second") and llm.calls == 2


def test_a_setting_never_sent_is_never_in_the_key() -> None:
    judge = LangChainJudge(_chat(), model_id="m", pass_params=True)
    sent = judge.sent_params
    assert call_key("m", "p", GenerationParams(seed=1), sent=sent) == call_key("m", "p", GenerationParams(seed=2), sent=sent)
    assert call_key("m", "p", GenerationParams(max_tokens=5), sent=sent) != call_key("m", "p", GenerationParams(), sent=sent)


def test_llamaindex_judge_keys_what_it_sends() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.llms import MockLLM
    from llama_index.evaluation.langrag.models import LlamaIndexJudge

    quiet = LlamaIndexJudge(MockLLM(), model_id="mock", pass_params=False)
    loud = LlamaIndexJudge(MockLLM(), model_id="mock", pass_params=True)
    cold, warm = GenerationParams(temperature=0.0), GenerationParams(temperature=0.9)
    assert call_key("mock", "p", cold, sent=quiet.sent_params) == call_key("mock", "p", warm, sent=quiet.sent_params)
    assert call_key("mock", "p", cold, sent=loud.sent_params) != call_key("mock", "p", warm, sent=loud.sent_params)
