"""The ChatModel contract run on the scripted model, and on models that break it: a contract that
passed every model would test nothing, so each check is shown to fail on the fault it is about."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from langrag_eval.errors import RateLimitError
from langrag_eval.model import GenerationParams, Reply, TokenUsage
from langrag_eval.testing import ChatModelContract, ProviderError, ScriptedModel


def echo(prompt: str) -> str:
    return f"echo: {prompt}"


def _raise(error: Exception) -> Any:
    def reply(prompt: str) -> str:
        raise error
    return reply


class TestScriptedEcho(ChatModelContract):
    """Replies from a function of the prompt; its record of calls is the backend's."""

    passed_params = frozenset({"temperature", "max_tokens", "seed"})

    def make_model(self) -> ScriptedModel:
        return ScriptedModel(echo, latency=0.001)

    def reply_for(self, prompt: str) -> str:
        return echo(prompt)

    def backend_calls(self, model: ScriptedModel) -> list[dict[str, Any]]:  # type: ignore[override]
        return [{"prompt": p, **params.model_dump()} for p, params in zip(model.prompts, model.params)]

    def failing_model(self, error: Exception) -> ScriptedModel:
        return ScriptedModel(_raise(error))

    def slow_model(self) -> ScriptedModel:
        return ScriptedModel(echo, latency=0.15)


class TestScriptedConstrained(ChatModelContract):
    """A constrained scripted model (schema replies) whose failures are its own injected ones."""

    def make_model(self) -> ScriptedModel:
        return ScriptedModel(["free text"], constrained=True,
                             schema_replies=lambda prompt, schema: '{"verdict": "A"}')

    def reply_for(self, prompt: str) -> str:
        return "free text"

    def failing_model(self, error: Exception) -> ScriptedModel:
        rate = "rate_limit_rate" if getattr(error, "status_code", None) == 429 else "timeout_rate"
        return ScriptedModel(["unused"], **{rate: 1.0})


# ---------------------------------------------------------------- models the contract must refuse

class _Base:
    model_id = "broken"
    constrained = False

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        return Reply(text="fine", usage=TokenUsage(prompt_tokens=1, completion_tokens=1))


class _NoId(_Base):
    model_id = " "


class _SchemaPositional(_Base):
    async def generate(self, prompt: str, params: GenerationParams,  # type: ignore[override]
                       schema: dict[str, Any] | None = None) -> Reply:
        return await super().generate(prompt, params)


class _NoUsage(_Base):
    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        return Reply(text="fine")  # zero tokens: the counts were not estimated


class _SwallowsErrors(_Base):
    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        return Reply(text="Error: 429 rate limit", usage=TokenUsage(prompt_tokens=1, completion_tokens=1))


class _Unclassifiable(_Base):
    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        raise RuntimeError("something went wrong")  # the status code is lost


class _SharedSlot(_Base):
    """Keeps the prompt in one attribute across an await: concurrent calls get each other's reply."""

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        self.current = prompt
        await asyncio.sleep(0.001)
        return Reply(text=f"echo: {self.current}", usage=TokenUsage(prompt_tokens=1, completion_tokens=1))


class _BoundToFirstLoop(_Base):
    """Creates its lock on the first loop it sees, as a client bound to one event loop does."""

    lock: asyncio.Lock | None = None

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        if self.lock is None:
            self.lock = asyncio.Lock()
        async with self.lock:
            await asyncio.sleep(0.001)
        return Reply(text=f"echo: {prompt}", usage=TokenUsage(prompt_tokens=1, completion_tokens=1))


class _Blocking(_Base):
    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        time.sleep(0.15)  # a synchronous client called inside the coroutine
        return await super().generate(prompt, params)


class _ConstrainedButFree(_Base):
    constrained = True

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        return Reply(text="I prefer A.", usage=TokenUsage(prompt_tokens=1, completion_tokens=1))


class _DropsTemperature(TestScriptedEcho):
    def backend_calls(self, model: ScriptedModel) -> list[dict[str, Any]]:  # type: ignore[override]
        return [{**call, "temperature": 0.0} for call in super().backend_calls(model)]


def _contract(model: Any, **hooks: Any) -> ChatModelContract:
    contract = ChatModelContract()
    contract.make_model = lambda: model  # type: ignore[method-assign]
    for name, hook in hooks.items():
        setattr(contract, name, hook)
    return contract


BROKEN = [
    pytest.param(_NoId(), "model_id_is_a_non_empty_string", {}, AssertionError, id="no model_id"),
    pytest.param(_SchemaPositional(), "it_has_the_chat_model_shape", {}, AssertionError,
                 id="schema positional"),
    pytest.param(_NoUsage(), "token_counts_are_never_negative_and_estimated_when_missing", {},
                 AssertionError, id="usage not estimated"),
    pytest.param(_Base(), "generate_returns_the_backends_reply", {"reply_for": lambda p: "the backend's"},
                 AssertionError, id="text not the backend's"),
    pytest.param(_ConstrainedButFree(), "a_schema_is_accepted_and_a_constrained_reply_fits_it", {},
                 AssertionError, id="constrained but free text"),
    pytest.param(_Base(), "a_backend_failure_is_raised_and_classified",
                 {"failing_model": lambda e: _SwallowsErrors()}, AssertionError,
                 id="failure returned as text"),
    pytest.param(_Base(), "a_backend_failure_is_raised_and_classified",
                 {"failing_model": lambda e: _Unclassifiable()}, AssertionError, id="failure loses its kind"),
    pytest.param(_SharedSlot(), "concurrent_calls_on_one_loop", {"reply_for": echo}, AssertionError,
                 id="replies crossed on one loop"),
    pytest.param(_Blocking(), "a_slow_call_leaves_the_event_loop_free", {}, AssertionError,
                 id="blocks the event loop"),
    pytest.param(_BoundToFirstLoop(), "calls_from_several_threads_and_loops", {"reply_for": echo},
                 RuntimeError, id="bound to its first loop"),
]


@pytest.mark.parametrize(("model", "check", "hooks", "error"), BROKEN)
def test_the_contract_refuses_a_broken_model(model: Any, check: str, hooks: dict[str, Any],
                                             error: type[Exception]) -> None:
    with pytest.raises(error):
        getattr(_contract(model, **hooks), f"test_{check}")()


def test_the_contract_refuses_an_adapter_that_drops_a_setting() -> None:
    with pytest.raises(AssertionError, match="temperature"):
        _DropsTemperature().test_generation_settings_are_accepted_and_passed_as_documented()


def test_a_reported_usage_must_be_passed_on() -> None:
    contract = TestScriptedEcho()
    contract.reported_usage = TokenUsage(prompt_tokens=99, completion_tokens=99)
    with pytest.raises(AssertionError, match="backend's"):
        contract.test_token_counts_are_never_negative_and_estimated_when_missing()


def test_the_scripted_models_injected_failures_are_the_packages_typed_errors() -> None:
    model = TestScriptedConstrained().failing_model(ProviderError("429", status_code=429))
    with pytest.raises(RateLimitError):
        asyncio.run(model.generate("x", GenerationParams()))
