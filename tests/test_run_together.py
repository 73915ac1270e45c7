"""A run's evaluators are judged at once, not one after the other: each evaluator's samples are in
flight beside the others', evaluators that share a judge share its limit on model calls, the data is
refused before any evaluator judges, and an error that stops one evaluator stops the run, raised as
itself, with the others' work cancelled."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from langrag_eval import Evaluator, Sample
from langrag_eval.errors import ConfigError, RepeatedIdError
from langrag_eval.grading import VragGrader
from langrag_eval.results import Declaration, ScoreScale, Unscored
from langrag_eval.run import aevaluate, evaluate
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel


class Seen(BaseModel):
    n: int


class Waits(Evaluator[Sample, Seen]):
    """Each sample waits until the other evaluator has started one of its own (at most 5 s):
    judged one evaluator after the other, the first could never see the second start."""

    task, result_type = "waits", Seen
    declaration = Declaration({"n": ScoreScale(0, 100)})

    def __init__(self, task: str, mine: asyncio.Event, theirs: asyncio.Event) -> None:
        self.task, self.mine, self.theirs = task, mine, theirs  # type: ignore[misc]
        self.cancelled = 0

    async def aevaluate(self, sample: Sample) -> Seen | Unscored:
        self.mine.set()
        try:
            await asyncio.wait_for(self.theirs.wait(), 5)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return Seen(n=len(sample.answer or ""))


def _samples(n: int) -> list[Sample]:
    return [Sample(id=f"q{i}", question=f"question {i}?", answer="x" * i, reference="x") for i in range(n)]


def test_the_evaluators_of_a_run_are_judged_at_once() -> None:
    async def both() -> Any:
        a, b = asyncio.Event(), asyncio.Event()
        return await aevaluate(_samples(4), {"a": Waits("a", a, b), "b": Waits("b", b, a)})

    run = asyncio.run(both())
    assert list(run.results) == ["a", "b"]   # in the order given, whichever finished first
    for name in ("a", "b"):
        assert [r.n for r in run[name]] == [0, 1, 2, 3], run[name]   # none timed out waiting


def test_evaluators_sharing_a_judge_share_its_limit_on_calls() -> None:
    model = ScriptedModel(lambda prompt: "Score: [[4]], Reason: [[Close.]] Confidence: [[80]]", latency=0.02)
    judge = Judge(model, concurrency=2)
    # each evaluator may have 4 samples in flight; the judge lets 2 calls out at a time, theirs together
    run = evaluate(_samples(12)[1:], {"plain": VragGrader(judge), "confident": VragGrader(judge, confidence=True)},
                   concurrency=4)
    assert len(model.prompts) == 22 and judge.limiter.peak == 2
    asks_confidence = ["onfidence" in p for p in model.prompts]
    # interleaved: in turn, the 11 plain prompts would all come before the first that asks for confidence
    assert sum(asks_confidence) == 11 and asks_confidence.index(True) < 11 - 1
    assert [g.score for g in run["plain"]] == [4] * 11 and [g.confidence for g in run["confident"]] == [80] * 11


class Refuses(Evaluator[Sample, Seen]):
    """Stops the run: a configuration error, not a failure of one sample."""

    task, result_type = "refuses", Seen

    async def aevaluate(self, sample: Sample) -> Seen:
        await asyncio.sleep(0.05)  # the other evaluator is judging by now
        raise ConfigError("refuses: no setting for this run")


def test_an_error_that_stops_one_evaluator_stops_the_run_and_cancels_the_others() -> None:
    async def run() -> Waits:
        never = asyncio.Event()
        waits = Waits("waits", asyncio.Event(), never)
        with pytest.raises(ConfigError, match="no setting for this run"):  # itself, not an ExceptionGroup
            await aevaluate(_samples(3), [waits, Refuses()])
        return waits

    waits = asyncio.run(run())
    assert waits.cancelled == 3   # its samples were in flight beside the other's, and were called off


class SameKey(Evaluator[Sample, Seen]):
    task, result_type = "same", Seen

    def key(self, sample: Sample) -> str:
        return "one"

    async def aevaluate(self, sample: Sample) -> Seen:
        return Seen(n=0)


def test_repeated_ids_are_refused_before_any_evaluator_judges() -> None:
    model = ScriptedModel(lambda prompt: "Score: [[4]], Reason: [[Close.]]")
    with pytest.raises(RepeatedIdError, match="repeated: one"):
        evaluate(_samples(3), [VragGrader(Judge(model)), SameKey()])
    assert model.prompts == []   # the grader named first sent no call
