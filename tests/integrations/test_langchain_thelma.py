"""THELMA in LangChain: string evaluators per metric and combined, LangChain Embeddings for
self-distinctness, and the LangSmith evaluator (one result per metric) inside ``langsmith.evaluate``
with an offline client, on an LCEL app that exposes its contexts."""

from __future__ import annotations

import uuid
import warnings

import pytest

pytest.importorskip("langchain_classic")
pytest.importorskip("langsmith")

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda
from langchain_langrag import LangChainEmbedder, LangragStringEvaluator, as_judge, langsmith_evaluator
from langsmith import Client, evaluate
from langsmith.schemas import Example

from langrag_eval.errors import ConfigError
from langrag_eval.runtime import Judge
from langrag_eval.testing import ThelmaScript
from langrag_eval.thelma import METRICS, Thelma, Thresholds

SOURCE = "Ada was born in 1815. Ada wrote the first program."
QUERY = "When was Ada born?"
RESPONSE = "Ada was born in 1815. Ada liked horses."


class FirstWord(Embeddings):
    """Sentences with the same first word embed identically."""

    def embed_documents(self, texts):
        return [[float(t.split()[0] == "Ada"), float(t.split()[0] != "Ada")] for t in texts]

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def script():
    return ThelmaScript(
        questions={QUERY: [QUERY]},
        essential=lambda key: int("born" in key[1]),
        supported=lambda key: int(key[0] in " ".join(key[1])),
        source=lambda key: 1,
        answers=lambda key: int(key[1] is not None and "born" in key[1]),
        addresses=lambda key: int("born" in key[1]))


def test_string_evaluator_per_metric_and_combined():
    judge = Judge(script().model())
    rp = LangragStringEvaluator(Thelma(judge, metrics=("rp",)), score="rp")
    r = rp.evaluate_strings(prediction=RESPONSE, input=QUERY, contexts=[Document(page_content=SOURCE)])
    assert r["score"] == 0.5 and "1 of 2 components matched" in r["reasoning"]
    assert rp.evaluation_name == "thelma_rp"
    with pytest.raises(ValueError, match="requires an input"):
        rp.evaluate_strings(prediction=RESPONSE)
    every = LangragStringEvaluator(Thelma(judge, embedder=LangChainEmbedder(FirstWord())))
    r = every.evaluate_strings(prediction=RESPONSE, input=QUERY, contexts=[SOURCE])
    assert r["metrics"]["sd"] == 0.0                    # both sentences open with "Ada"
    assert r["metrics"]["gr"] == 0.5 and r["metrics"]["sqc"] == 1.0
    assert r["score"] == pytest.approx(sum(r["metrics"].values()) / len(METRICS))
    none = LangragStringEvaluator(Thelma(judge, metrics=("gr",)), score="gr").evaluate_strings(
        prediction="", input=QUERY, contexts=[SOURCE])
    assert none["score"] is None and none["reasoning"] == "undefined: empty response"
    with pytest.raises(ConfigError):
        Thelma(judge, metrics=("nope",))


def test_langchain_embeddings_wrapper():
    e = LangChainEmbedder(FirstWord())
    assert e.embed(["Ada x", "Bob y"]).shape == (2, 2) and e.dimension == 2


async def test_async_string_evaluator():
    chat = FakeListChatModel(responses=["<output>\n- Ada was born in 1815.\n</output>", "<output>1</output>"])
    ev = LangragStringEvaluator(Thelma(as_judge(chat), metrics=("gr",)), score="gr")
    r = await ev.aevaluate_strings(prediction="Ada was born in 1815.", input=QUERY, contexts=[SOURCE])
    assert r["score"] == 1.0


def test_langsmith_evaluate_offline_one_result_per_metric():
    app = RunnableLambda(lambda inputs: {"answer": RESPONSE, "context": [Document(page_content=SOURCE)]})
    offline = Client(api_key="offline", auto_batch_tracing=False, tracing_sampling_rate=0.0)
    examples = [Example(id=uuid.uuid4(), inputs={"question": QUERY}, outputs={})]
    evaluator = langsmith_evaluator(Thelma(Judge(script().model()), embedder=LangChainEmbedder(FirstWord()),
                                           thresholds=Thresholds(default_low=0.51, default_high=0.51)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate(app, data=examples, evaluators=[evaluator], upload_results=False, client=offline)
    (row,) = list(res)
    got = {r.key: r for r in row["evaluation_results"]["results"]}
    assert set(got) == {f"thelma_{m}" for m in METRICS} | {"thelma_diagnosis"}
    assert got["thelma_rp"].score == 0.5 and got["thelma_sqc"].score == 1.0 and got["thelma_gr"].score == 0.5
    assert got["thelma_sd"].score == 0.0
    assert "2 of 2 components repeated" in got["thelma_sd"].comment       # both repeat each other
    # sp2 0.5 (one fact of two is essential) with sqc 1.0; rp 0.5 with sp1 1.0
    assert got["thelma_diagnosis"].value == "retriever, prompt or source chunking"


def test_langsmith_evaluator_reports_unscored_with_reason():
    ev = langsmith_evaluator(Thelma(Judge(script().model()), metrics=("gr",)))
    out = ev({"question": QUERY}, {"answer": RESPONSE, "documents": []})
    assert out["results"][0] == {"key": "thelma_gr", "score": None, "metadata": {"unscored": "undefined"},
                                 "comment": "undefined: no sources retrieved: groundedness undefined"}
    # nothing scored: not diagnosed, which is not "no pattern fired"
    assert out["results"][1] == {"key": "thelma_diagnosis", "value": None, "metadata": {"unscored": "undefined"},
                                 "comment": "unscored: no metric was scored, so nothing to diagnose (gr: undefined: "
                                            "no sources retrieved: groundedness undefined)"}


async def test_an_output_holding_only_the_answer_has_no_contexts() -> None:
    """The answer must never be read back as its own retrieved context."""
    from langrag_eval.testing import overlap_model

    evaluate = langsmith_evaluator(Thelma(Judge(overlap_model()), metrics=("sp1", "gr")), asynchronous=True)
    results = {r["key"]: r for r in (await evaluate({"question": "q?"}, {"answer": "A claim."}))["results"]}
    assert results["thelma_sp1"]["score"] is None and "no sources" in results["thelma_sp1"]["comment"]
    assert results["thelma_gr"]["score"] is None
