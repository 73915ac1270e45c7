"""The one score record: every capability's result reads as typed ``Score`` records named by its
evaluator's ``score_names()``, scored or not, on a declared scale."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from langrag_eval import Sample, Unscored
from langrag_eval.grading import VragGrader
from langrag_eval.grammar.grading import ReferenceGrader
from langrag_eval.grammar.reliability import FunctionVerdict, ReliabilitySample
from langrag_eval.results import Score, ScoreScale
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval.thelma import Thelma, Thresholds
from langrag_eval.tournament import (
    GameSample, PairwiseEvaluator, PointwiseEvaluator, PointwiseSample, RelevanceEvaluator,
    RelevanceSample,
)


def _judge(replies) -> Judge:
    return Judge(ScriptedModel(replies))


CASES = {
    "vrag": (lambda: VragGrader(_judge(["Score: [[3]], Reason: [[partly]]"])),
             Sample(id="s1", question="Capital?", answer="Paris", reference="Paris"),
             {"accept_rate": (0.0, False), "grade": (3.0, False)}),
    "thelma": (lambda: Thelma(Judge(ThelmaScript(default=1).model()), metrics=("rp", "gr")),
               Sample(id="s1", question="Who?", answer="Ada.", contexts=["Ada."]),
               {"rp": (1.0, True), "gr": (1.0, True)}),
    "relevance": (lambda: RelevanceEvaluator(_judge(['{"reason": "names it", "relevance": 2}'])),
                  RelevanceSample(id="s1", query="Capital?", document="Paris is the capital."),
                  {"relevance": (2.0, None)}),
    "pointwise": (lambda: PointwiseEvaluator(_judge(['{"relevance": 2, "accuracy": 2, "completeness": 1, '
                                                     '"precision": 0}'])),
                  PointwiseSample(id="s1", query="Capital?", answer="Paris"),
                  {"relevance": (2.0, None), "accuracy": (2.0, None), "completeness": (1.0, None),
                   "precision": (0.0, None)}),
    "pairwise": (lambda: PairwiseEvaluator(_judge(["[[C]]"])),
                 GameSample(id="s1", query="Capital?", answer_a="Paris", answer_b="Lyon"),
                 {"score_a": (0.5, None)}),
    "grammar": (lambda: ReferenceGrader(_judge(["Judgement: [[Incorrect]]"])),
                Sample(id="s1", question="Capital?", answer="Lyon", reference="Paris"),
                {"correct": (0.0, False)}),
    "reference_free": (lambda: FunctionVerdict(lambda s: len(s.answer) > 2),
                       ReliabilitySample(id="s1", question="Capital?", answer="Paris"),
                       {"correct": (1.0, True)}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_scored_result_reads_as_one_score_per_declared_name(name) -> None:
    make, sample, expected = CASES[name]
    evaluator = make()
    result = evaluator.evaluate(sample)
    assert not isinstance(result, Unscored), result
    scores = evaluator.scores(result)
    assert [s.name for s in scores] == list(evaluator.score_names()) == list(expected)
    for s in scores:
        assert s.scored and s.cause is None
        assert (s.value, s.passed) == expected[s.name]
        assert s.scale == evaluator.score_scale(s.name)
        assert Score.model_validate_json(s.model_dump_json()) == s


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_unscored_item_reads_as_one_unscored_score_per_name_with_its_cause(name) -> None:
    evaluator = CASES[name][0]()
    missing = Unscored(reason="judge said nothing", cause="unparseable")
    scores = evaluator.scores(missing)
    assert [s.name for s in scores] == list(evaluator.score_names())
    assert all(not s.scored and s.value is None and s.passed is None for s in scores)
    assert {(s.cause, s.reason) for s in scores} == {("unparseable", "judge said nothing")}
    assert all(s.normalised() is None for s in scores)


def test_a_thelma_metric_passes_where_it_is_not_low_at_the_evaluators_thresholds() -> None:
    judge = Judge(ThelmaScript(default=1).model())
    sample = Sample(id="s1", question="Who?", answer="Ada.", contexts=["Ada."])
    strict = Thelma(judge, metrics=("gr",), thresholds=Thresholds(default_low=0.5, low={"gr": 1.0}, high={"gr": 1.0}))
    (gr,) = strict.scores(strict.evaluate(sample))
    assert gr.value == 1.0 and gr.passed is True
    unscored = strict.evaluate(Sample(id="s2", question="Who?", answer="", contexts=["Ada."]))
    (gr,) = strict.scores(unscored)
    assert (gr.cause, gr.passed, gr.value) == ("undefined", None, None)


scales = st.tuples(st.floats(-1e6, 1e6), st.floats(1e-3, 1e6)).map(lambda t: (t[0], t[0] + t[1]))


@given(scales, st.floats(0, 1), st.booleans())
def test_normalised_maps_the_scale_onto_zero_to_one(scale, at, higher) -> None:
    low, high = scale
    value = min(high, max(low, low + at * (high - low)))
    s = ScoreScale(low, high, higher).score("x", value)
    assert 0.0 <= s.normalised() <= 1.0
    assert s.normalised() == pytest.approx(at, abs=1e-6)


@given(scales, st.floats(allow_nan=False, allow_infinity=False))
def test_a_value_off_its_scale_is_refused(scale, value) -> None:
    low, high = scale
    if low <= value <= high:
        assert ScoreScale(low, high).score("x", value).value == value
    else:
        with pytest.raises(ValidationError):
            ScoreScale(low, high).score("x", value)


def test_exactly_one_of_value_and_cause() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        Score(name="x", value=None, low=0, high=1)
    with pytest.raises(ValidationError, match="exactly one"):
        Score(name="x", value=0.5, low=0, high=1, cause="timeout")
    with pytest.raises(ValidationError, match="below"):
        Score(name="x", value=1, low=1, high=1)
    with pytest.raises(ValidationError, match="cannot pass"):
        Score(name="x", value=None, low=0, high=1, cause="timeout", passed=False)


@settings(deadline=None, max_examples=60)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=40), st.lists(st.booleans(), min_size=1, max_size=40))
def test_a_summary_reads_every_score_by_name_against_outside_oracles(values, verdicts) -> None:
    """Means and intervals from the typed scores alone: Student's t for a score (scipy's oracle),
    Wilson for a yes/no score (statsmodels' oracle), counts of unscored by cause."""
    import scipy.stats as sps
    from statsmodels.stats.proportion import proportion_confint

    from langrag_eval.results import summarize_scores

    n = max(len(values), len(verdicts))
    score, yes = ScoreScale(0, 1), ScoreScale(0, 1, binary=True)
    missing = Unscored(reason="no reply", cause="timeout")
    items = [[score.score("s", values[i]) if i < len(values) else score.unscored("s", missing),
              yes.score("y", float(verdicts[i]), passed=verdicts[i]) if i < len(verdicts) else yes.unscored("y", missing)]
             for i in range(n)]
    summary = summarize_scores(items, [None] * n)
    s, y = summary.scores["s"], summary.scores["y"]
    assert (summary.n, summary.scored, s.n, y.n) == (n, n, len(values), len(verdicts))
    assert s.unscored == ({"timeout": n - len(values)} if n > len(values) else {})
    assert s.mean == pytest.approx(sum(values) / len(values))
    sd = statistics.stdev(values)
    if sd > 1e-9:
        low, high = sps.t.interval(0.95, len(values) - 1, loc=s.mean, scale=sd / len(values) ** 0.5)
        assert (s.low, s.high) == (pytest.approx(low), pytest.approx(high))
    low, high = proportion_confint(sum(verdicts), len(verdicts), alpha=0.05, method="wilson")
    assert (y.low, y.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert y.mean == y.pass_rate == pytest.approx(sum(verdicts) / len(verdicts))
