"""Every metric on inputs where it is undefined: a recorded Unscored with a reason, never NaN,
never a division by zero, never a crash; and judge failures as Unscored, not silent zeros."""

from __future__ import annotations

import math

import pytest

from langrag_eval.models.embeddings import FunctionEmbedder
from langrag_eval.errors import ConfigError
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RetryPolicy
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval import Sample
from langrag_eval.thelma import METRICS, Thelma
from langrag_eval.types import Document

# Sentences sharing their first word are "similar" (cosine 1), others orthogonal.
FIRST_WORD = FunctionEmbedder(lambda ts: [[float(t.split()[0].lower() == w) for w in ("paris", "rome", "oslo")]
                                          + [0.1] for t in ts], model_id="first-word")


def thelma(script=None, **kw):
    return Thelma(Judge((script or ThelmaScript(default=1)).model(), retry=RetryPolicy(max_attempts=1)),
                  embedder=FIRST_WORD, **kw)


def check_defined(result):
    for metric, value in result.metrics.items():
        if isinstance(value, Unscored):
            assert value.reason and value.cause in ("undefined", "invalid_input", "unparseable", "model_error")
        else:
            assert 0.0 <= value.score <= 1.0 and not math.isnan(value.score)


async def test_empty_sources():
    r = await thelma().aevaluate(Sample(question="Capital of France?", contexts=[], answer="Paris."))
    for m in ("sp1", "sp2", "sqc", "gr"):
        assert r.metrics[m].cause == "undefined" and "no sources" in r.metrics[m].reason
    assert r.score("rp") == 1.0 and r.score("rqc") == 1.0 and r.score("sd") == 1.0
    check_defined(r)


async def test_empty_response():
    r = await thelma().aevaluate(Sample(question="Capital of France?", contexts=["Paris is the capital."],
                                             answer="   "))
    for m in ("rp", "rqc", "sd", "gr"):
        assert r.metrics[m].cause == "undefined" and "empty response" in r.metrics[m].reason
    assert r.score("sp1") == 1.0 and r.score("sqc") == 1.0
    r2 = await thelma().aevaluate(Sample(question="q?", contexts=["s"], answer=None))
    assert r2.metrics["rp"].cause == "undefined"


async def test_no_extractable_claims():
    script = ThelmaScript(claims={"Hello!": []}, default=1)
    r = await thelma(script).aevaluate(Sample(question="Capital?", contexts=["Paris is the capital."],
                                                   answer="Hello!"))
    assert r.metrics["rp"].reason == "no claims in the response: precision undefined"
    assert r.metrics["gr"].reason == "no claims in the response: groundedness undefined"
    assert r.score("sd") == 1.0          # one sentence cannot repeat another
    check_defined(r)


async def test_sources_that_are_not_strings():
    r = await thelma().aevaluate(Sample(question="Capital?", contexts=["Paris.", None, 3], answer="Paris."))
    for m in ("sp1", "sp2", "sqc", "gr"):
        assert r.metrics[m].cause == "invalid_input"
        assert "context 2 is NoneType, not text" in r.metrics[m].reason
    assert r.score("rp") == 1.0  # the response metrics still run
    doc = await thelma().aevaluate(Sample(question="Capital?", answer="Paris.",
                                               contexts=[Document(id="d", text="Paris."), {"page_content": "P"}]))
    assert doc.score("sp1") == 1.0


async def test_sources_yield_no_facts_and_empty_source_text():
    script = ThelmaScript(claims={"...": []}, source={"...": 1}, default=1)
    r = await thelma(script, metrics=("sp1", "sp2")).aevaluate(
        Sample(question="Capital?", contexts=["...", ""], answer="x"))
    assert r.metrics["sp2"].reason == "no facts extracted from the sources: precision undefined"
    assert r.metrics["sp1"].verdicts == [1, 0]   # the empty source counts as non-essential, no call
    r2 = await thelma(script).aevaluate(Sample(question="Capital?", contexts=["", " "], answer="x"))
    assert r2.metrics["sp1"].reason == "every retrieved source is empty"


async def test_query_without_questions_and_empty_query():
    script = ThelmaScript(questions={"Hello there.": []}, default=1)
    r = await thelma(script).aevaluate(Sample(question="Hello there.", contexts=["s."], answer="Hi."))
    assert "asks no question" in r.metrics["sqc"].reason and "asks no question" in r.metrics["rqc"].reason
    r2 = await thelma().aevaluate(Sample(question="", contexts=["s."], answer="Hi."))
    for m in ("sp1", "sp2", "sqc", "rp", "rqc"):
        assert r2.metrics[m].reason == "empty query"
    assert r2.score("gr") == 1.0 and r2.score("sd") == 1.0


async def test_unparseable_judge_is_unscored_not_zero():
    model = ScriptedModel({"<passage>": "<output>\n- Paris is the capital.\n</output>",
                           "": "I would rather not say."})
    r = await Thelma(Judge(model), metrics=("rp", "gr")).aevaluate(
        Sample(question="Capital?", contexts=["Paris is the capital."], answer="Paris is the capital."))
    for m in ("rp", "gr"):
        assert r.metrics[m].cause == "unparseable" and "1 of 1 match verdicts failed" in r.metrics[m].reason
    assert r.usage.repairs == 2


async def test_failed_decomposition_propagates_to_the_metrics_that_need_it():
    model = ScriptedModel({"<passage>": "no list here", "": "<output>1</output>"})
    r = await Thelma(Judge(model), metrics=("rp", "gr", "sp1")).aevaluate(
        Sample(question="Capital?", contexts=["Paris."], answer="Paris."))
    assert r.metrics["rp"].cause == "unparseable" and r.metrics["gr"].cause == "unparseable"
    assert r.score("sp1") == 1.0 and r.claims is None


async def test_coverage_failure_settled_by_another_source():
    # A source the judge cannot read does not matter when another source answers the question.
    script = ThelmaScript(questions={"Capital?": ["Capital?"]}, answers={("Capital?", "Paris is it."): 1})

    def reply(prompt):
        return "garbled" if "Lyon" in prompt and "<question>" in prompt else script.reply(prompt)
    r = await Thelma(Judge(ScriptedModel(reply), repair=False), metrics=("sqc",)).aevaluate(
        Sample(question="Capital?", contexts=["Lyon is big.", "Paris is it."]))
    assert r.score("sqc") == 1.0


async def test_self_distinctness_threshold_and_repeats():
    text = "Paris is the capital. Rome is old. Paris is French. Oslo is cold."
    r = await thelma(metrics=("sd",)).aevaluate(Sample(question="q", answer=text))
    assert r.score("sd") == pytest.approx(0.5) and r.metrics["sd"].verdicts == [1, 0, 1, 0]
    loose = await thelma(metrics=("sd",), sd_threshold=0.005).aevaluate(  # unrelated pairs sit at 0.0099
        Sample(question="q", answer=text))
    assert loose.score("sd") == 0.0
    with pytest.raises(ConfigError):
        Thelma(Judge(ScriptedModel(["x"])), sd_threshold=1.5)


async def test_broken_embedder_is_unscored():
    def boom(texts):
        raise RuntimeError("embedding service down")
    r = await Thelma(Judge(ScriptedModel(["x"])), metrics=("sd",), embedder=FunctionEmbedder(boom)).aevaluate(
        Sample(question="q", answer="One. Two."))
    assert r.metrics["sd"].cause == "model_error" and "embedding service down" in r.metrics["sd"].reason


def test_unknown_metric_rejected():
    with pytest.raises(ConfigError, match="unknown THELMA metric"):
        Thelma(Judge(ScriptedModel(["x"])), metrics=("sp3",))
    assert set(METRICS) == {"sp1", "sp2", "sqc", "rp", "rqc", "sd", "gr"}
