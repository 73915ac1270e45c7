"""Chaos: 10 % malformed replies, 5 % rate limits and 2 % timeouts over more than 2,000 model calls.
Every sample ends scored or explicitly Unscored with its cause; no NaN; the usage figures of the
judge, the run store and the model agree, attempts included."""

from __future__ import annotations

import json
import math
import re
import zlib
from collections import Counter

import pytest
from pydantic import BaseModel

from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, PriceTable, RetryPolicy, RunStore, run_batch
from langrag_eval.runtime.batch import RETRY_ON_RESUME
from langrag_eval.testing import ScriptedModel
from langrag_eval.verdicts.formats import ScoreFormat

N = 2000
CAUSES = {"unparseable", "rate_limit", "timeout"}


class Grade(BaseModel):
    score: int
    reason: str | None


def _reply(prompt: str) -> str:
    item = re.search(r"(?:sample|x)-?\d+", prompt).group(0)  # repair prompts quote the original
    return f"Checked against the label.\nScore: [[{zlib.crc32(item.encode()) % 5 + 1}]], Reason: [[scripted]]"


@pytest.mark.parametrize("seed", [1, 2])
async def test_chaos_run_ends_every_sample_and_counts_every_call(tmp_path, seed: int) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("chaos", {"seed": seed})
    model = ScriptedModel(_reply, malformed_rate=0.10, rate_limit_rate=0.05, timeout_rate=0.02, seed=seed)
    # Two attempts per call, so some calls really do run out of retries and must be recorded.
    judge = Judge(model, store=store, run_id=run, concurrency=32,
                  retry=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.002),
                  prices=PriceTable({"scripted": (1.0, 2.0)}))

    async def grade(item: str) -> Grade | Unscored:
        answer = await judge.ask(f"Grade the answer for {item}", ScoreFormat())
        if isinstance(answer.value, Unscored):
            return answer.value
        return Grade(score=answer.value.score, reason=answer.value.reason)

    items = [f"sample-{i:04d}" for i in range(N)]
    results = await run_batch(items, grade, key=str, task="grade", result_type=Grade, store=store,
                              run_id=run, concurrency=32)

    # every sample ends with a score or an explicit Unscored naming its cause
    assert len(results) == N
    unscored = [r for r in results if isinstance(r, Unscored)]
    scored = [r for r in results if isinstance(r, Grade)]
    assert len(scored) + len(unscored) == N
    assert all(r.cause in CAUSES and r.reason for r in unscored)
    causes = Counter(r.cause for r in unscored)
    assert causes["unparseable"] > 0 and causes["rate_limit"] + causes["timeout"] > 0, causes
    assert all(r.raw for r in unscored if r.cause == "unparseable")  # the raw replies are kept
    for item, r in zip(items, results):
        if isinstance(r, Grade):
            assert r.score == zlib.crc32(item.encode()) % 5 + 1  # the scripted verdict, not a default

    # no NaN anywhere: not in results, not in what the store holds, not in a mean
    rows = store.judgments(run, "grade")
    assert len(rows) == N and sum(not r["scored"] for r in rows) == len(unscored)
    assert "NaN" not in json.dumps([r["result"] for r in rows])
    mean = sum(r.score for r in scored) / len(scored)
    assert not math.isnan(mean)

    # the model saw exactly the attempts the judge and the store counted
    usage = store.usage(run)["total"]
    assert model.calls >= N
    assert model.calls == judge.usage.attempts == usage["attempts"]
    assert judge.usage.calls + judge.usage.failed == usage["calls"]
    assert judge.usage.failed == usage["failed"]
    failures = model.failures["rate_limit"] + model.failures["timeout"]
    assert failures == judge.usage.attempts - judge.usage.calls  # each success is one attempt
    assert model.failures["malformed"] > 0 and judge.usage.repairs > 0
    assert (judge.usage.prompt_tokens, judge.usage.completion_tokens) == (
        usage["prompt_tokens"], usage["completion_tokens"])
    assert judge.usage.cost == pytest.approx(usage["cost"])
    expected_cost = (judge.usage.prompt_tokens * 1.0 + judge.usage.completion_tokens * 2.0) / 1e6
    assert usage["cost"] == pytest.approx(expected_cost)

    # a rerun of the same run reads every finished judgment back; only items the provider failed
    # (rate limit, timeout) are asked again, and no call is made for any other item
    before = len(model.prompts)
    again = await run_batch(items, grade, key=str, task="grade", result_type=Grade, store=store,
                            run_id=run, concurrency=32)
    retried = {i for i, r in zip(items, results) if isinstance(r, Unscored) and r.cause in RETRY_ON_RESUME}
    assert retried
    for item, first, second in zip(items, results, again):
        if item not in retried:
            assert second == first
        else:
            assert isinstance(second, Grade) or second.cause in CAUSES
    asked_again = {re.search(r"sample-\d+", p).group(0) for p in model.prompts[before:]}
    assert asked_again <= retried


async def test_chaos_without_a_store_keeps_the_same_books() -> None:
    model = ScriptedModel(_reply, malformed_rate=0.10, rate_limit_rate=0.05, timeout_rate=0.02, seed=9,
                          latency=0.0005)
    judge = Judge(model, concurrency=64, retry=RetryPolicy(max_attempts=3, base_delay=0.001))

    from langrag_eval.runtime import gather_bounded

    answers = await gather_bounded([f"Grade the answer for x{i}" for i in range(600)],
                                   lambda p: judge.ask(p, ScoreFormat()), concurrency=64)
    assert all(isinstance(a.value, Unscored) or 1 <= a.value.score <= 5 for a in answers)
    assert model.calls == judge.usage.attempts
    assert model.peak_concurrency <= 64
