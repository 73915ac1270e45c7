"""A long run's memory stays flat: beside a run store the judge keeps only its latest replies in
memory (every reply is still answered from the store, never paid for twice), and a scripted judge
told not to record keeps no prompts."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings, strategies as st

from langrag_eval.model import GenerationParams
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.runtime.judge import _RECENT
from langrag_eval.testing import ScriptedModel
from langrag_eval.verdicts.formats import ScoreFormat

REPLY = "Score: [[4]], Reason: [[ok]]"


async def test_replies_beside_a_store_stay_bounded_and_are_never_paid_twice() -> None:
    model = ScriptedModel([REPLY], record=False)
    judge = Judge(model, store=RunStore(":memory:"), run_id="r")
    n = _RECENT + 300
    for i in range(n):
        await judge.ask(f"prompt {i}", ScoreFormat())
    assert len(judge._memory) == _RECENT  # the old accumulation kept all n
    again = await asyncio.gather(*(judge.ask(f"prompt {i}", ScoreFormat()) for i in range(n)))
    assert all(a.value.score == 4 for a in again)
    assert model.calls == n and judge.usage.cached == n  # the evicted ones came from the store


async def test_without_a_store_the_memory_is_the_cache() -> None:
    model = ScriptedModel([REPLY])
    judge = Judge(model)
    for i in range(_RECENT + 10):
        await judge.ask(f"prompt {i}", ScoreFormat())
    await judge.ask("prompt 0", ScoreFormat())
    assert model.calls == _RECENT + 10


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=20))
def test_an_unrecording_script_counts_calls_and_keeps_no_prompt(prompts: list[str]) -> None:
    model = ScriptedModel({"": REPLY}, record=False)
    async def run() -> None:
        for p in prompts:
            await model.generate(p, GenerationParams())
    asyncio.run(run())
    assert model.calls == len(prompts) and model.prompts == [] and model.schemas == []
