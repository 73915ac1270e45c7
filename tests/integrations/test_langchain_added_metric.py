"""A THELMA metric registered from outside the package, as ``tests/thelma/test_add_a_metric.py``
registers it (a module and its prompt file), reaches LangChain's string evaluator and LangSmith's
evaluate through the generic wrappers with no other edit: its score, comment and pass call are the
core's typed score."""

from __future__ import annotations

import uuid
import warnings

import pytest

pytest.importorskip("langchain_classic")
pytest.importorskip("langsmith")

from langchain_core.runnables import RunnableLambda
from langchain_langrag import LangragStringEvaluator, langsmith_evaluator
from langsmith import Client, evaluate
from langsmith.schemas import Example

from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import Thelma
from tests.thelma.test_add_a_metric import SAMPLES, metric_module, replies  # noqa: F401 - the fixture

COMMENT = "claim concision: 0 of 1 components matched"


def test_a_registered_metric_reaches_the_langchain_string_evaluator(metric_module) -> None:
    thelma = Thelma(Judge(ScriptedModel(replies(0))), metrics=("rp", "cc"))
    row = SAMPLES[0]
    both = LangragStringEvaluator(thelma).evaluate_strings(prediction=row["response"], input=row["query"],
                                                           contexts=row["sources"])
    assert both["metrics"] == both["scores"] == {"rp": 1.0, "cc": 0.0}
    assert both["score"] == 0.5 and COMMENT in both["reasoning"]
    one = LangragStringEvaluator(thelma, score="cc")
    r = one.evaluate_strings(prediction=row["response"], input=row["query"], contexts=row["sources"])
    assert one.evaluation_name == "thelma_cc" and (r["score"], r["reasoning"]) == (0.0, COMMENT)


def test_a_registered_metric_reaches_langsmith_evaluate(metric_module) -> None:
    thelma = Thelma(Judge(ScriptedModel(replies(1))), metrics=("rp", "cc"))
    by_question = {r["query"]: r for r in SAMPLES[:3]}
    app = RunnableLambda(lambda inputs: {"answer": by_question[inputs["question"]]["response"],
                                         "context": by_question[inputs["question"]]["sources"]})
    examples = [Example(id=uuid.uuid4(), inputs={"question": q}, outputs={}) for q in by_question]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = list(evaluate(app, data=examples, evaluators=[langsmith_evaluator(thelma)], upload_results=False,
                             client=Client(api_key="offline", auto_batch_tracing=False, tracing_sampling_rate=0.0)))
    assert len(rows) == 3
    for row in rows:
        got = {r.key: r for r in row["evaluation_results"]["results"]}
        assert set(got) == {"thelma_rp", "thelma_cc", "thelma_diagnosis"}
        assert got["thelma_cc"].score == 1.0 and got["thelma_cc"].comment == "claim concision: 1 of 1 components matched"
