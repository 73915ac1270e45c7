"""Identical calls in flight at the same moment share one model call (the cache holds finished ones)."""

from __future__ import annotations

import asyncio

from langrag_eval.errors import ModelCallError
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RetryPolicy, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.verdicts.formats import ScoreFormat


async def test_concurrent_identical_prompts_make_one_call() -> None:
    model = ScriptedModel(["Score: [[4]], Reason: [[ok]]"], latency=0.05)
    store = RunStore(":memory:")
    judge = Judge(model, store=store, run_id="r")
    answers = await asyncio.gather(*(judge.ask("same prompt", ScoreFormat()) for _ in range(5)),
                                   judge.ask("other prompt", ScoreFormat()))
    assert [a.value.score for a in answers] == [4] * 6
    assert model.calls == 2  # one per distinct prompt
    assert judge.usage.calls == 2 and judge.usage.cached == 4
    assert store.usage("r")["total"]["calls"] == 2 and store.usage("r")["total"]["cached"] == 4
    assert judge._pending == {}  # nothing left behind once the calls finished


async def test_a_failed_shared_call_fails_every_waiter_once() -> None:
    model = ScriptedModel(["x"], latency=0.02, rate_limit_rate=1.0)
    judge = Judge(model, retry=RetryPolicy(max_attempts=2, base_delay=0.001), repair=False)
    answers = await asyncio.gather(*(judge.ask("p", ScoreFormat()) for _ in range(3)))
    assert all(isinstance(a.value, Unscored) and a.value.cause == "rate_limit" for a in answers)
    assert model.calls == 2  # the owner's two attempts; the waiters asked nothing
    assert judge._pending == {}


async def test_the_owner_raising_reaches_the_caller() -> None:
    model = ScriptedModel(["x"], rate_limit_rate=1.0)
    judge = Judge(model, retry=RetryPolicy(max_attempts=1))
    try:
        await judge.complete("p")
    except ModelCallError as exc:
        assert exc.cause == "rate_limit"
    else:  # pragma: no cover
        raise AssertionError("expected the rate limit to surface")
