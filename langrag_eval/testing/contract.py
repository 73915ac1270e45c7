"""The contract every :class:`~langrag_eval.model.ChatModel` keeps, as a test suite to subclass.

Like LangChain's standard tests: a test module subclasses :class:`ChatModelContract`, says how to
build the model under test, and pytest runs every check on it. Checks that need something a backend
cannot offer (a record of what it received, a failure on demand) are skipped with the reason.

.. code-block:: python

    from langrag_eval.testing import ChatModelContract

    class TestMyJudge(ChatModelContract):
        def make_model(self):
            return MyJudge(...)

What it checks, and the use in the package that requires it:

- ``model_id`` is a non-empty string: it names the model in the cache key, the call log and reports.
- ``constrained`` is a bool and ``generate`` a coroutine function taking ``(prompt, params, *,
  schema=None)``: the judge runtime calls exactly that, and reads ``constrained`` to decide whether to
  send a schema.
- ``generate`` returns a :class:`~langrag_eval.model.Reply` whose text is the backend's reply.
- token counts are never negative, and estimated when the backend reports none (a non-empty prompt
  or reply counts at least one token); counts the backend reports are passed on unchanged.
- the prompt reaches the backend unchanged, and the generation settings the adapter documents as
  passed (temperature, max tokens, seed) reach it with the values given.
- a schema is accepted by every model; a constrained model's reply is JSON the verdict format reads.
- a backend failure is raised, never returned as reply text, and the runtime's
  :func:`~langrag_eval.runtime.retry.classify` reads a rate limit as ``RateLimitError`` and a timeout
  as ``ModelTimeoutError`` (so the retry policy waits and tries again).
- many calls at once on one event loop, and from several threads each running its own loop (one
  judge serves batches in worker threads), each get the reply to their own prompt; a slow call
  leaves the event loop free (the runtime's per-call timeout and its other calls need it).
- the judge runtime drives it: a call through :class:`~langrag_eval.runtime.Judge` returns the
  model's reply and meters its tokens.

>>> from langrag_eval.testing import ScriptedModel
>>> class EchoContract(ChatModelContract):
...     def make_model(self):
...         return ScriptedModel(lambda prompt: "echo: " + prompt)
...     def reply_for(self, prompt):
...         return "echo: " + prompt
>>> EchoContract().test_concurrent_calls_on_one_loop()
"""

from __future__ import annotations

import asyncio
import inspect
import json
import unittest
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import LangragError, ModelTimeoutError, RateLimitError
from ..model import ChatModel, GenerationParams, Reply, TokenUsage
from ..runtime import Judge
from ..runtime.retry import RetryPolicy, classify
from ..verdicts.formats import PairwiseFormat

__all__ = ["ChatModelContract", "ProviderError"]

PROMPT = "Reply with one word. Prompt text with accents and scripts: café, Ünïcode, 東京."


class ProviderError(Exception):
    """An error shaped like a provider SDK's: a message and an HTTP ``status_code``."""

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _expect(condition: bool, message: str) -> None:
    """A check that holds under ``python -O`` too (a bare ``assert`` would vanish there)."""
    if not condition:
        raise AssertionError(message)


class ChatModelContract:
    """Subclass it in a test module (name the subclass ``Test...``) and override the hooks."""

    #: the generation settings each check sends (a small budget keeps slow local models quick)
    params = GenerationParams(temperature=0.0, max_tokens=16, seed=0)
    #: the :class:`GenerationParams` fields the adapter passes on to its backend
    passed_params: frozenset[str] = frozenset()
    #: the token counts the backend reports for every call (None: it reports none, or they vary)
    reported_usage: TokenUsage | None = None
    #: whether the backend stops at ``max_tokens`` (a real model does; a fake replies in full)
    bounds_max_tokens = False
    #: threads, and calls per thread, of the concurrency checks
    threads = 3
    calls = 4

    def make_model(self) -> ChatModel:
        """A fresh model under test."""
        raise NotImplementedError("a ChatModelContract subclass builds its model in make_model()")

    def reply_for(self, prompt: str) -> str | None:
        """The text the backend was set up to reply to ``prompt`` (None: not known in advance)."""
        return None

    def backend_calls(self, model: ChatModel) -> Sequence[dict[str, Any]] | None:
        """What the backend received, one dict per call, in order: ``prompt`` and the generation
        settings by their :class:`GenerationParams` names (None: the backend cannot be observed)."""
        return None

    def failing_model(self, error: Exception) -> ChatModel | None:
        """A model whose backend raises ``error`` on every call (None: it cannot be made to)."""
        return None

    def slow_model(self) -> ChatModel | None:
        """A model whose calls take a tenth of a second or more (None: use :meth:`make_model`)."""
        return None

    # ------------------------------------------------------------------ helpers

    def _skip(self, why: str) -> None:
        raise unittest.SkipTest(why)  # pytest reports it as a skip too

    def _prompts(self, tag: str, n: int) -> list[str]:
        return [f"{PROMPT} ({tag}, call {i})" for i in range(n)]

    def _check_reply(self, reply: Any, prompt: str) -> None:
        _expect(isinstance(reply, Reply), f"generate returned {type(reply).__name__}, not a Reply")
        _expect(isinstance(reply.text, str), f"the reply text is a {type(reply.text).__name__}")
        expected = self.reply_for(prompt)
        if expected is not None:
            _expect(reply.text == expected, f"reply {reply.text!r} is not the backend's {expected!r}")

    # ------------------------------------------------------------------ the checks

    def test_model_id_is_a_non_empty_string(self) -> None:
        model = self.make_model()
        _expect(isinstance(model.model_id, str) and bool(model.model_id.strip()),
                f"model_id {model.model_id!r} is not a non-empty string")

    def test_it_has_the_chat_model_shape(self) -> None:
        model = self.make_model()
        _expect(isinstance(model, ChatModel), "no model_id, constrained or generate")
        _expect(isinstance(model.constrained, bool), f"constrained is {model.constrained!r}, not a bool")
        _expect(inspect.iscoroutinefunction(model.generate), "generate is not a coroutine function")
        schema = inspect.signature(model.generate).parameters.get("schema")
        keyword_only = schema is not None and schema.kind is inspect.Parameter.KEYWORD_ONLY
        _expect(keyword_only and schema.default is None, "generate takes no keyword-only schema=None")

    def test_generate_returns_the_backends_reply(self) -> None:
        model = self.make_model()
        self._check_reply(_run(model.generate(PROMPT, self.params)), PROMPT)

    def test_token_counts_are_never_negative_and_estimated_when_missing(self) -> None:
        model = self.make_model()
        reply = _run(model.generate(PROMPT, self.params))
        usage = reply.usage
        _expect(isinstance(usage, TokenUsage), f"usage is a {type(usage).__name__}, not a TokenUsage")
        _expect(usage.prompt_tokens >= 1, f"a non-empty prompt counts at least one token: {usage}")
        _expect(usage.completion_tokens >= (1 if reply.text else 0),
                f"a reply counts at least one token, none is never negative: {usage}")
        if self.reported_usage is not None:
            _expect(usage == self.reported_usage, f"{usage} is not the backend's {self.reported_usage}")

    def test_the_prompt_reaches_the_backend_unchanged(self) -> None:
        model = self.make_model()
        _run(model.generate(PROMPT, self.params))
        calls = self.backend_calls(model)
        if calls is None:
            self._skip("the backend's calls cannot be observed")
        _expect(bool(calls) and calls[-1]["prompt"] == PROMPT, f"the backend received {calls!r}")

    def test_generation_settings_are_accepted_and_passed_as_documented(self) -> None:
        model = self.make_model()
        budget = self.params.max_tokens or 16
        settings = [self.params, GenerationParams(temperature=0.7, max_tokens=budget // 2 or 1, seed=7)]
        for params in settings:
            self._check_reply(_run(model.generate(PROMPT, params)), PROMPT)
        calls = self.backend_calls(model)
        if not self.passed_params or calls is None:
            self._skip("the adapter passes no generation setting, or its backend cannot be observed")
        for params, seen in zip(settings, calls[-len(settings):]):
            for name in self.passed_params:
                _expect(seen.get(name) == getattr(params, name),
                        f"{name}: sent {getattr(params, name)!r}, the backend saw {seen.get(name)!r}")

    def test_max_tokens_bounds_the_reply(self) -> None:
        if not self.bounds_max_tokens:
            self._skip("the backend replies in full whatever the budget (a fake)")
        model = self.make_model()
        reply = _run(model.generate(PROMPT, self.params.model_copy(update={"max_tokens": 3})))
        used = reply.usage.completion_tokens
        _expect(used <= 3, f"{used} tokens on a budget of 3")

    def test_a_schema_is_accepted_and_a_constrained_reply_fits_it(self) -> None:
        model = self.make_model()
        fmt = PairwiseFormat()
        params = self.params.model_copy(update={"max_tokens": max(32, self.params.max_tokens or 0)})
        reply = _run(model.generate("Which answer is better, A or B? <answer_a>Paris</answer_a> "
                                    "<answer_b>Lyon</answer_b>", params, schema=fmt.json_schema()))
        _expect(isinstance(reply, Reply) and isinstance(reply.text, str), f"{reply!r} is not a Reply")
        if model.constrained:
            # what the judge runtime does with a constrained reply: JSON, then the format's reading
            try:
                fmt.from_json(json.loads(reply.text, strict=False))
            except (ValueError, LangragError) as exc:
                raise AssertionError(f"a constrained model's reply {reply.text!r} does not fit the "
                                     f"schema: {exc}") from None

    def test_a_backend_failure_is_raised_and_classified(self) -> None:
        cases = [(ProviderError("Error code: 429 - rate limit reached", status_code=429), RateLimitError),
                 (TimeoutError("the request timed out"), ModelTimeoutError)]
        for error, kind in cases:
            model = self.failing_model(error)
            if model is None:
                self._skip("the backend cannot be made to fail on demand")
            try:
                reply = _run(model.generate(PROMPT, self.params))
            except Exception as exc:  # noqa: BLE001 - any exception type; classify reads it
                _expect(isinstance(classify(exc), kind), f"{exc!r} is read as {classify(exc)!r}, not {kind}")
            else:
                raise AssertionError(f"a failing backend ({error!r}) gave a reply: {reply!r}")

    def test_concurrent_calls_on_one_loop(self) -> None:
        model = self.make_model()
        prompts = self._prompts("one loop", self.calls * 2)

        async def all_at_once() -> list[Reply]:
            return await asyncio.gather(*(model.generate(p, self.params) for p in prompts))

        for prompt, reply in zip(prompts, _run(all_at_once())):
            self._check_reply(reply, prompt)

    def test_calls_from_several_threads_and_loops(self) -> None:
        model = self.make_model()
        self._check_reply(_run(model.generate(PROMPT, self.params)), PROMPT)  # a first loop, now closed

        def one_thread(t: int) -> list[tuple[str, Reply]]:
            prompts = self._prompts(f"thread {t}", self.calls)

            async def calls() -> list[Reply]:
                return await asyncio.gather(*(model.generate(p, self.params) for p in prompts))
            return list(zip(prompts, asyncio.run(calls())))

        with ThreadPoolExecutor(self.threads) as pool:
            results = [pair for pairs in pool.map(one_thread, range(self.threads)) for pair in pairs]
        _expect(len(results) == self.threads * self.calls, f"{len(results)} replies")
        for prompt, reply in results:
            self._check_reply(reply, prompt)

    def test_a_slow_call_leaves_the_event_loop_free(self) -> None:
        model = self.slow_model() or self.make_model()

        async def call_and_count() -> tuple[int, float]:
            ticks, done = 0, False

            async def ticker() -> None:
                nonlocal ticks
                while not done:
                    await asyncio.sleep(0.01)
                    ticks += 1
            task = asyncio.create_task(ticker())
            await asyncio.sleep(0)  # the ticker starts before the call
            start = asyncio.get_running_loop().time()
            try:
                await model.generate(PROMPT, self.params)
            finally:
                elapsed, done = asyncio.get_running_loop().time() - start, True
                await task
            return ticks, elapsed

        ticks, elapsed = _run(call_and_count())
        if elapsed < 0.1:
            self._skip(f"the call took {elapsed:.3f} s: too quick to tell (give a slow_model)")
        # per-call timeouts and the limiter's other calls need the loop while a call is out
        _expect(ticks >= 3, f"the event loop ran {ticks} times in a {elapsed:.2f} s call: generate blocks it")

    def test_the_judge_runtime_drives_it(self) -> None:
        model = self.make_model()
        judge = Judge(model, params=self.params, retry=RetryPolicy(max_attempts=1))
        reply = _run(judge.complete(PROMPT))
        self._check_reply(reply, PROMPT)
        meter = judge.usage
        _expect(meter.calls == 1 and meter.failed == 0, f"the judge metered {meter}")
        _expect((meter.prompt_tokens, meter.completion_tokens) == (reply.usage.prompt_tokens,
                                                                   reply.usage.completion_tokens),
                f"the judge metered {meter}, the reply says {reply.usage}")
