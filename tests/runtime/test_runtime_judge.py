"""The judge runtime with ScriptedModel: concurrency bound, retries, timeouts, repair, cache, usage."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

import pytest

from langrag_eval.errors import ModelCallError, RateLimitError
from langrag_eval.model import GenerationParams, estimate_tokens
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, PriceTable, RetryPolicy, RunStore, gather_bounded
from langrag_eval.testing import MALFORMED, ScriptedModel
from langrag_eval.verdicts.formats import ScoreFormat

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01, timeout=5.0)
GOOD = "Score: [[4]], Reason: [[matches the label]]"


# ---------------------------------------------------------------- concurrency


@pytest.mark.parametrize("limit", [1, 4, 16])
async def test_concurrency_bound_never_exceeded_under_load(limit: int) -> None:
    model = ScriptedModel([GOOD], latency=0.003)
    judge = Judge(model, concurrency=limit, retry=FAST)
    # Far more requests than slots, all started at once, so the limiter is the only thing in the way.
    answers = await asyncio.gather(*(judge.ask(f"grade item {i}", ScoreFormat()) for i in range(8 * limit + 20)))
    assert all(a.value.score == 4 for a in answers)
    assert model.peak_concurrency <= limit
    assert judge.limiter.peak <= limit
    assert model.peak_concurrency == limit  # the load really filled every slot
    assert judge.limiter.in_flight == 0


@pytest.mark.parametrize("limit", [1, 4, 16])
async def test_gather_bounded_respects_its_limit_and_keeps_order(limit: int) -> None:
    in_flight = peak = 0

    async def work(x: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001 * (x % 3))
        in_flight -= 1
        return x * x

    items = list(range(5 * limit + 7))
    assert await gather_bounded(items, work, concurrency=limit) == [x * x for x in items]
    assert peak == limit


def test_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        Judge(ScriptedModel([GOOD]), concurrency=0)


# ---------------------------------------------------------------- retries and timeouts


@dataclass(frozen=True)
class RecordingPolicy(RetryPolicy):
    """Records every backoff delay the runtime asks for."""

    delays: list = None  # type: ignore[assignment]

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        wait = super().delay(attempt, rng, retry_after)
        self.delays.append((attempt, wait))
        return wait


async def test_rate_limits_are_retried_with_backoff_then_recorded(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("grade", {"case": "rate-limit"})
    policy = RecordingPolicy(max_attempts=4, base_delay=0.004, max_delay=1.0, timeout=5.0, delays=[])
    model = ScriptedModel([GOOD], rate_limit_rate=1.0)
    judge = Judge(model, store=store, run_id=run, retry=policy)

    start = time.monotonic()
    answer = await judge.ask("grade me", ScoreFormat())
    elapsed = time.monotonic() - start

    assert isinstance(answer.value, Unscored)
    assert answer.value.cause == "rate_limit"
    assert "rate limit" in answer.value.reason
    assert model.calls == 4 and model.failures["rate_limit"] == 4
    # Backoff: one delay between each pair of attempts, each under its exponential ceiling.
    assert [a for a, _ in policy.delays] == [0, 1, 2]
    assert all(0 <= w <= 0.004 * 2 ** a for a, w in policy.delays)
    assert elapsed >= sum(w for _, w in policy.delays)
    rows = store._rows("SELECT ok, attempts, error FROM calls WHERE run_id=?", (run,))
    assert rows == [(0, 4, rows[0][2])] and rows[0][2].startswith("rate_limit:")
    assert store.usage(run)["total"]["attempts"] == 4
    assert judge.usage.failed == 1 and judge.usage.attempts == 4 and judge.usage.calls == 0


async def test_transient_rate_limits_recover_and_the_log_counts_every_attempt(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("grade", {"case": "recover"})
    model = ScriptedModel([GOOD], rate_limit_rate=0.4, seed=3)
    judge = Judge(model, store=store, run_id=run, retry=RetryPolicy(max_attempts=8, base_delay=0.001))
    answers = await asyncio.gather(*(judge.ask(f"q{i}", ScoreFormat()) for i in range(60)))
    retried = store._rows("SELECT attempts FROM calls WHERE run_id=? AND ok=1 AND attempts>1", (run,))
    assert retried, "some calls should have succeeded only after a retry"
    assert all(a.value.score == 4 for a in answers if not isinstance(a.value, Unscored))
    assert model.calls == judge.usage.attempts == store.usage(run)["total"]["attempts"]
    # every attempt that did not succeed was a rate limit; every success was one attempt
    assert model.calls - model.failures["rate_limit"] == judge.usage.calls


def test_retry_after_is_honoured_and_capped() -> None:
    policy = RetryPolicy(base_delay=0.001, max_delay=2.0)
    rng = random.Random(0)
    assert policy.delay(0, rng, retry_after=1.5) >= 1.5
    assert policy.delay(0, rng, retry_after=60.0) <= 2.0
    assert all(policy.delay(10, rng) <= 2.0 for _ in range(50))


async def test_per_call_timeout_is_enforced() -> None:
    model = ScriptedModel([GOOD], latency=2.0)
    judge = Judge(model, retry=RetryPolicy(max_attempts=2, base_delay=0.001, timeout=0.03))
    start = time.monotonic()
    answer = await judge.ask("slow", ScoreFormat())
    assert time.monotonic() - start < 0.5  # two 30 ms attempts, not two 2 s replies
    assert isinstance(answer.value, Unscored) and answer.value.cause == "timeout"
    assert model.calls == 2 and judge.usage.failed == 1


async def test_a_non_retryable_error_is_not_retried() -> None:
    class Broken:
        model_id, constrained, calls = "broken", False, 0

        async def generate(self, prompt, params, *, schema=None):  # noqa: ANN001, ANN201
            self.calls += 1
            raise ValueError("bad request: unknown parameter")

    model = Broken()
    answer = await Judge(model, retry=FAST).ask("x", ScoreFormat())
    assert model.calls == 1
    assert isinstance(answer.value, Unscored) and answer.value.cause == "model_error"
    with pytest.raises(ModelCallError):
        await Judge(Broken(), retry=FAST).complete("x")


async def test_foreign_rate_limit_exceptions_are_classified() -> None:
    class ProviderRateLimitError(Exception):
        status_code = 429

    class Flaky:
        model_id, constrained, calls = "flaky", False, 0

        async def generate(self, prompt, params, *, schema=None):  # noqa: ANN001, ANN201
            self.calls += 1
            if self.calls < 3:
                raise ProviderRateLimitError("slow down")
            return (await ScriptedModel([GOOD]).generate(prompt, params))

    model = Flaky()
    answer = await Judge(model, retry=FAST).ask("x", ScoreFormat())
    assert answer.value.score == 4 and model.calls == 3
    assert isinstance(RateLimitError(), ModelCallError)


# ---------------------------------------------------------------- repair


async def test_malformed_reply_is_repaired_by_one_re_ask() -> None:
    def reply(prompt: str) -> str:
        return GOOD if "could not be read" in prompt else MALFORMED

    model = ScriptedModel(reply)
    judge = Judge(model, retry=FAST)
    answer = await judge.ask("Grade this answer.", ScoreFormat())
    assert answer.value.score == 4
    assert model.calls == 2 and judge.usage.repairs == 1
    repair_prompt = model.prompts[1]
    assert repair_prompt.startswith("Grade this answer.")
    assert f"<reply>\n{MALFORMED}\n</reply>" in repair_prompt
    assert "Score: [[n]]" in repair_prompt  # the expected format is restated


async def test_a_reply_that_stays_malformed_is_unscored_with_the_raw_replies() -> None:
    model = ScriptedModel(["no verdict, sorry", "still nothing"])
    judge = Judge(model, retry=FAST)
    answer = await judge.ask("Grade this answer.", ScoreFormat())
    assert isinstance(answer.value, Unscored)
    assert answer.value.cause == "unparseable"
    assert "no verdict, sorry" in answer.value.raw and "still nothing" in answer.value.raw
    assert model.calls == 2  # one re-ask, not more


async def test_repair_can_be_switched_off() -> None:
    model = ScriptedModel([MALFORMED])
    answer = await Judge(model, retry=FAST, repair=False).ask("g", ScoreFormat())
    assert isinstance(answer.value, Unscored) and answer.value.raw == MALFORMED and model.calls == 1


async def test_a_constrained_reply_with_a_raw_newline_in_a_string_parses() -> None:
    """Grammar-constrained backends (llama.cpp) can emit a literal newline inside a JSON string."""
    model = ScriptedModel(["unused"], constrained=True,
                          schema_replies=lambda prompt, schema: '{ "score": 2, "reason": "Paris.\n" }')
    judge = Judge(model, retry=FAST)
    answer = await judge.ask("grade", ScoreFormat())
    assert answer.value.score == 2 and answer.value.reason == "Paris.\n"
    assert model.calls == 1 and model.schemas[0]["required"] == ["score", "reason"]


# ---------------------------------------------------------------- cache and resume


async def test_second_identical_run_makes_zero_model_calls_through_the_store_cache(tmp_path) -> None:
    path = tmp_path / "runs.sqlite"
    first_model = ScriptedModel([GOOD])
    first = Judge(first_model, store=RunStore(path), retry=FAST)
    prompts = [f"grade answer {i}" for i in range(20)]
    before = [a.value for a in await asyncio.gather(*(first.ask(p, ScoreFormat()) for p in prompts))]
    assert first_model.calls == 20
    first.store.close()  # as the first process ends

    second_model = ScriptedModel(["Score: [[1]], Reason: [[would differ]]"])
    second = Judge(second_model, store=RunStore(path), retry=FAST)  # a new process, in effect
    after = [a.value for a in await asyncio.gather(*(second.ask(p, ScoreFormat()) for p in prompts))]
    assert second_model.calls == 0 and second.usage.cached == 20
    assert after == before


async def test_the_cache_key_covers_model_and_params() -> None:
    model = ScriptedModel([GOOD])
    judge = Judge(model, retry=FAST)
    await judge.complete("p")
    await judge.complete("p")
    await judge.complete("p", params=GenerationParams(temperature=0.7))
    assert model.calls == 2 and judge.usage.cached == 1


async def test_same_run_id_reads_judgments_back_without_evaluating(tmp_path) -> None:
    from pydantic import BaseModel

    from langrag_eval.runtime import run_batch

    class Grade(BaseModel):
        score: int

    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("grade", {"file": "qa.csv"})
    evaluated: list[str] = []

    def make(judge: Judge):  # noqa: ANN202
        async def grade(item: str) -> Grade | Unscored:
            evaluated.append(item)
            answer = await judge.ask(f"grade {item}", ScoreFormat())
            return answer.value if isinstance(answer.value, Unscored) else Grade(score=answer.value.score)
        return grade

    items = [f"item-{i}" for i in range(10)]
    first = Judge(ScriptedModel([GOOD]), store=store, run_id=run, retry=FAST)
    results = await run_batch(items, make(first), key=str, task="vrag", result_type=Grade, store=store, run_id=run)
    assert len(evaluated) == 10

    # A judge with another model id cannot hit the reply cache: only the judgments can serve.
    other = ScriptedModel([GOOD], model_id="other")
    again = await run_batch(items, make(Judge(other, store=store, run_id=run, retry=FAST)), key=str,
                            task="vrag", result_type=Grade, store=store, run_id=run)
    assert again == results and len(evaluated) == 10 and other.calls == 0


# ---------------------------------------------------------------- usage and cost


async def test_usage_tokens_and_cost_add_up(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("grade", {"case": "usage"})
    prices = PriceTable({"scripted": (2.0, 8.0)})
    model = ScriptedModel([GOOD, "Score: [[2]], Reason: [[a longer reason than the first]]"])
    judge = Judge(model, store=store, run_id=run, retry=FAST, prices=prices)
    prompts = [f"grade answer number {i} " + "x" * i for i in range(12)]
    for p in prompts:
        await judge.ask(p, ScoreFormat())
    for p in prompts[:5]:  # cached repeats cost nothing
        await judge.ask(p, ScoreFormat())

    replies = [GOOD if i % 2 == 0 else "Score: [[2]], Reason: [[a longer reason than the first]]"
               for i in range(12)]
    prompt_tokens = sum(estimate_tokens(p) for p in prompts)
    completion_tokens = sum(estimate_tokens(r) for r in replies)
    expected_cost = (prompt_tokens * 2.0 + completion_tokens * 8.0) / 1_000_000
    assert (judge.usage.calls, judge.usage.cached, judge.usage.attempts) == (12, 5, 12)
    assert (judge.usage.prompt_tokens, judge.usage.completion_tokens) == (prompt_tokens, completion_tokens)
    assert judge.usage.cost == pytest.approx(expected_cost)
    total = store.usage(run)["total"]
    assert (total["calls"], total["cached"], total["attempts"]) == (12, 5, 12)
    assert (total["prompt_tokens"], total["completion_tokens"]) == (prompt_tokens, completion_tokens)
    assert total["cost"] == pytest.approx(expected_cost)


async def test_no_price_for_the_model_means_no_cost_not_zero() -> None:
    judge = Judge(ScriptedModel([GOOD]), retry=FAST, prices=PriceTable({"openai:gpt-4o": (2.5, 10.0)}))
    await judge.ask("x", ScoreFormat())
    assert judge.usage.cost is None


# ---------------------------------------------------------------- event loops and the store


def test_a_judge_works_across_two_asyncio_run_calls() -> None:
    model = ScriptedModel([GOOD], latency=0.001)
    judge = Judge(model, concurrency=2, retry=FAST)

    async def batch(tag: str) -> list:
        return await asyncio.gather(*(judge.ask(f"{tag}{i}", ScoreFormat()) for i in range(6)))

    first = asyncio.run(batch("a"))
    second = asyncio.run(batch("b"))
    assert [a.value.score for a in first + second] == [4] * 12
    assert model.calls == 12 and model.peak_concurrency <= 2


def test_the_run_store_survives_reopening(tmp_path) -> None:
    from langrag_eval.model import Reply, TokenUsage

    path = tmp_path / "deep" / "runs.sqlite"
    store = RunStore(path)
    run = store.open_run("grade", {"file": "qa.csv", "k": 3}, judge="scripted")
    store.put_judgment(run, "q1", "vrag", {"score": 4}, scored=True)
    store.put_judgment(run, "q2", "vrag", {"reason": "x", "cause": "timeout"}, scored=False)
    store.cache_put("key1", "scripted", Reply(text="hello", usage=TokenUsage(prompt_tokens=3, completion_tokens=1)))
    store.log_call(run, "scripted", "key1", cached=False, ok=True, attempts=2,
                   usage=TokenUsage(prompt_tokens=3, completion_tokens=1), cost=0.5, error=None)
    store.put_artifact(run, "summary", {"mean": 4.0})
    store.finish_run(run, {"n": 2})
    store.close()

    again = RunStore(path)
    assert again.open_run("grade", {"k": 3, "file": "qa.csv"}) == run  # same settings, same run
    assert again.get_judgment(run, "q1", "vrag") == {"score": 4}
    assert [j["scored"] for j in again.judgments(run)] == [True, False]
    assert again.cache_get("key1").text == "hello"
    assert again.usage(run)["total"]["attempts"] == 2
    assert again.get_artifact(run, "summary") == {"mean": 4.0}
    assert again.run(run)["summary"] == {"n": 2} and again.run(run)["judge"] == "scripted"


def test_grouped_writes_are_committed_by_time_by_a_durable_write_and_on_close(tmp_path) -> None:
    import sqlite3

    from langrag_eval.model import Reply

    path = tmp_path / "runs.sqlite"

    def committed() -> int:
        with sqlite3.connect(path) as other:  # another process's view
            return other.execute("SELECT COUNT(*) FROM cache").fetchone()[0]

    store = RunStore(path, commit_interval=0.05)
    run = store.open_run("grade", {})
    store.cache_put("a", "m", Reply(text="x"))
    assert store.cache_get("a").text == "x"  # visible at once to its own store
    deadline = time.monotonic() + 5
    while committed() < 1:
        assert time.monotonic() < deadline, "grouped write never committed"
        time.sleep(0.01)

    slow = RunStore(path, commit_interval=60.0)
    slow.cache_put("b", "m", Reply(text="y"))
    assert committed() == 1
    slow.put_judgment(run, "q1", "t", {"score": 1}, scored=True)  # durable: carries "b" with it
    assert committed() == 2
    slow.cache_put("c", "m", Reply(text="z"))
    slow.close()
    assert committed() == 3
    store.close()


def test_a_corrupt_store_file_is_a_config_error(tmp_path) -> None:
    from langrag_eval.errors import ConfigError

    bad = tmp_path / "runs.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigError, match="cannot open the run store"):
        RunStore(bad)


async def test_a_bounded_models_calls_are_not_cut_by_the_per_attempt_timeout() -> None:
    """A model whose calls end by themselves (the local llama.cpp judge: its token budget bounds
    them) is not timed out per attempt; every other model is."""
    policy = RetryPolicy(max_attempts=2, timeout=0.05, base_delay=0.0)
    slow = ScriptedModel(["Score: 4"], latency=0.2)
    with pytest.raises(ModelCallError):
        await Judge(slow, retry=policy).complete("grade")
    bounded = ScriptedModel(["Score: 4"], latency=0.2)
    bounded.bounded = True  # type: ignore[attr-defined]
    judge = Judge(bounded, retry=policy)
    assert (await judge.complete("grade")).text == "Score: 4"
    assert judge.usage.calls == 1 and judge.usage.attempts == 1 and judge.retry.timeout == 0.05
