"""Failures are data at the run's boundary, for every evaluator: an exception raised while one
sample is judged (here reading the judge's verdict raises on a prompt that holds ``BOOM``, as a bug
in a verdict reader or a stage would; THELMA's first stage, its decompositions, raises; a user's
argument matcher of a trajectory match, or verdict function of a reference-free check, raises) is that sample's
``Unscored`` (cause ``evaluator_error``) and the other samples are scored, through
``langrag_eval.run.evaluate`` — THELMA, whose samples move through stages, included. Repeated
sample ids are refused by one rule with one error type, whichever evaluator runs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from langrag_eval import Evaluator, Sample
from langrag_eval.errors import ConfigError, DataError, RepeatedIdError
from langrag_eval.evaluator import FunctionEvaluator
from langrag_eval.grading import VragGrader
from langrag_eval.conversations import Conversation, ConversationJudge
from langrag_eval.conversations.conversation import ConversationTurn
from langrag_eval.grammar.grading import ReferenceGrader
from langrag_eval.grammar.reliability import FunctionVerdict, ReliabilitySample
from langrag_eval.results import Declaration, ScoreScale, Unscored
from langrag_eval.run import evaluate
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import Thelma
from langrag_eval.tournament.evaluators import (PointwiseEvaluator, PointwiseSample, RelevanceEvaluator,
                                                RelevanceSample)
from langrag_eval.tournament.pairwise import GameSample, PairwiseEvaluator
from langrag_eval.trajectories import TrajectoryJudge, TrajectoryMatch, TrajectorySample


class FaultyJudge(Judge):
    """A judge whose verdict reading raises on one prompt (a model's own failures are the judge's
    to turn into ``Unscored``; this is the evaluator's side failing)."""

    async def ask(self, prompt: str, *args: Any, **kwargs: Any) -> Any:
        if "BOOM" in prompt:
            raise RuntimeError("the verdict reader fell over")
        return await super().ask(prompt, *args, **kwargs)


def _reply(prompt: str) -> str:
    if "atomic claims" in prompt or "sub-questions" in prompt:
        return "<output>\n- Ada was born in 1815.\n</output>"
    if "<document>" in prompt:
        return '{"reason": "on topic", "relevance": 2}'
    if "<answer_a>" in prompt:
        return "Compared.\n[[A]]"
    if "<answer>" in prompt and "accuracy" in prompt:
        return '{"relevance": 2, "accuracy": 2, "completeness": 1, "precision": 2}'
    if "true answer" in prompt.lower() or "true_answer" in prompt:
        return "Judgement: [[Correct]]"
    if "<output>" in prompt:
        return "<output>1</output>"
    return "Score: [[5]], Reason: [[Right.]]"


class Length(BaseModel):
    length: int


@dataclass
class UsersOwn(Evaluator[Sample, Length]):
    """A user's evaluator: it raises on an answer it cannot read."""

    task: ClassVar[str] = "length"
    result_type: ClassVar[type[Length]] = Length
    declaration: ClassVar = Declaration({"length": ScoreScale(0, 1000)})

    async def aevaluate(self, sample: Sample) -> Length:
        if "BOOM" in (sample.answer or ""):
            raise ValueError("cannot read this answer")
        return Length(length=len(sample.answer or ""))


def _samples(make: Callable[[str, str], Any]) -> list[Any]:
    return [make("a", "Ada was born in 1815."), make("b", "BOOM: Ada was born in 1815."),
            make("c", "Ada was born in London.")]


def _sample(i: str, answer: str) -> Sample:
    return Sample(id=i, question="When was Ada born?", contexts=["Ada was born in 1815."], answer=answer,
                  reference="1815")


async def _double(sample: Sample) -> Length:
    if "BOOM" in (sample.answer or ""):
        raise KeyError(sample.id)
    return Length(length=2 * len(sample.answer or ""))


def _fragile_arguments(a: Any, b: Any) -> bool:
    """A user's argument matcher for one tool, with a bug on arguments it did not expect."""
    if "BOOM" in str(a):
        raise KeyError("cannot compare these arguments")
    return a == b


def _fragile_verdict(sample: ReliabilitySample) -> bool:
    if "BOOM" in sample.answer:
        raise ValueError("cannot read this answer")
    return "1815" in sample.answer


def _searched(i: str, answer: str) -> TrajectorySample:
    steps = [{"role": "user", "content": "When was Ada born?"},
             {"role": "assistant", "content": "", "tool_calls": [{"name": "search", "args": {"q": answer}, "id": "c1"}]},
             {"role": "tool", "content": "Ada was born in 1815.", "tool_call_id": "c1"},
             {"role": "assistant", "content": "In 1815."}]
    return TrajectorySample(id=i, question="When was Ada born?", trajectory=steps, reference=steps)


KINDS: dict[str, tuple[Callable[[Judge], Evaluator[Any, Any]], Callable[[str, str], Any]]] = {
    "vrag": (VragGrader, _sample),
    "thelma": (lambda j: Thelma(j, metrics=("rp", "gr")), _sample),
    "thelma-batched": (lambda j: Thelma(j, metrics=("rp", "gr", "sqc"), batched=True), _sample),
    "grammar": (ReferenceGrader, _sample),
    "relevance": (RelevanceEvaluator,
                  lambda i, a: RelevanceSample(id=i, query="When was Ada born?", document={"id": i, "text": a})),
    "pointwise": (PointwiseEvaluator,
                  lambda i, a: PointwiseSample(id=i, query="When was Ada born?", answer=a)),
    "pairwise": (lambda j: PairwiseEvaluator(j, orders=1),
                 lambda i, a: GameSample(id=i, query="When was Ada born?", answer_a=a, answer_b="In 1900.",
                                         judgments={})),
    "trajectory-judge": (TrajectoryJudge, lambda i, a: TrajectorySample(id=i, question="When was Ada born?", trajectory=[
        {"role": "user", "content": "When was Ada born?"}, {"role": "assistant", "content": a}])),
    "trajectory-match": (lambda j: TrajectoryMatch(overrides={"search": _fragile_arguments}), _searched),
    "conversation-judge": (ConversationJudge, lambda i, a: Conversation(id=i, turns=(
        ConversationTurn(user="When was Ada born?", answer=a),))),
    "reference-free": (lambda j: FunctionVerdict(_fragile_verdict),
                       lambda i, a: ReliabilitySample(id=i, question="When was Ada born?", answer=a)),
    "user": (lambda j: UsersOwn(), _sample),
    "function": (lambda j: FunctionEvaluator(_double, "double", Length), _sample),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("stored", [False, True])
def test_a_sample_that_raises_is_its_own_unscored_and_the_rest_are_scored(kind: str, stored: bool,
                                                                         tmp_path: Any) -> None:
    make_evaluator, make_sample = KINDS[kind]
    store = RunStore(tmp_path / "runs.db") if stored else None
    judge = FaultyJudge(ScriptedModel(_reply), store=store)
    run_id = store.open_run("test", {}) if store is not None else None
    samples = _samples(make_sample)
    run = evaluate(samples, {"it": make_evaluator(judge)}, run_id=run_id)
    first, failed, last = run["it"]
    assert isinstance(failed, Unscored) and failed.cause == "evaluator_error", failed
    assert re.search(r"RuntimeError|ValueError|KeyError", failed.reason)
    for ok in (first, last):
        assert not isinstance(ok, Unscored), ok
        assert all(s.cause != "evaluator_error" for s in run.evaluators["it"].scores(ok))
    summary = run.summary("it")
    assert summary.n == 3 and summary.unscored.get("evaluator_error") == 1


def test_thelma_results_carry_their_sample_key_in_a_run() -> None:
    judge = Judge(ScriptedModel(_reply))
    samples = [Sample(question="When was Ada born?", contexts=["Ada was born in 1815."], answer="In 1815.")]
    [result] = evaluate(samples, Thelma(judge, metrics=("gr",)))["thelma"]
    assert result.id == samples[0].key()


@pytest.mark.parametrize("kind", ["vrag", "thelma", "user"])
def test_repeated_ids_are_refused_by_one_rule(kind: str) -> None:
    make_evaluator, make_sample = KINDS[kind]
    twice = [make_sample("a", "In 1815."), make_sample("a", "In 1816.")]
    with pytest.raises(RepeatedIdError, match="repeated: a") as caught:
        evaluate(twice, make_evaluator(Judge(ScriptedModel(_reply))))
    # one type, which callers that caught either of the two older ones still catch
    assert isinstance(caught.value, DataError) and isinstance(caught.value, ConfigError)
    # samples without ids are keyed by their content: the same content twice is not refused
    same = [make_sample(None, "In 1815."), make_sample(None, "In 1815.")]
    run = evaluate(same, {"it": make_evaluator(Judge(ScriptedModel(_reply)))})
    first, second = (run.evaluators["it"].scores(r) for r in run["it"])
    assert first == second and all(s.scored for s in first)


def test_a_thelma_metric_that_raises_on_one_sample_leaves_the_batch_running() -> None:
    # the crash of THELMA's former batching override: AttributeError: 'Unscored' object has no attribute 'id'
    from langrag_eval.thelma import Metric, MetricScore, register_metric, unregister_metric

    async def fragile(s: Any) -> MetricScore:
        if "BOOM" in s.response:
            raise RuntimeError("metric fell over")
        return MetricScore(metric="fragile", score=1.0)

    register_metric(Metric("fragile", "fragile", fragile))
    try:
        thelma = Thelma(Judge(ScriptedModel(_reply)), metrics=("fragile",))
        run = evaluate(_samples(_sample), thelma)
    finally:
        unregister_metric("fragile")
    first, failed, last = run["thelma"]
    assert (first.score("fragile"), last.score("fragile")) == (1.0, 1.0)
    assert isinstance(failed, Unscored) and "RuntimeError: metric fell over" in failed.reason
    assert run.summary("thelma").details["metrics"]["fragile"]["causes"] == {"evaluator_error": 1}
