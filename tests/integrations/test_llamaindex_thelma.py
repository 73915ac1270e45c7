"""THELMA in LlamaIndex: per-metric and combined BaseEvaluators on a real query engine's response
(contexts from ``source_nodes``), inside BatchEvalRunner, with a LlamaIndex embedding model for
self-distinctness, prompts get/update, unscored results; and capturing (query, contexts, answer)
from an unmodified query engine through instrumentation events."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.evaluation import BatchEvalRunner
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.evaluation.langrag import LangragEvaluator, LlamaIndexEmbedder, RAGCapture, capturing

from langrag_eval.errors import ConfigError
from langrag_eval.runtime import Judge
from langrag_eval.testing import ThelmaScript
from langrag_eval.thelma import METRICS, Thelma

DOCS = ["Ada was born in 1815.", "Ada wrote the first program.", "Paris is in France."]
QUERY = "When was Ada born?"
ANSWER = "Ada was born in 1815. She also liked horses."


class AppLLM(CustomLLM):
    reply: str
    seen: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="app")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.seen.append(prompt)
        return CompletionResponse(text=self.reply)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        yield self.complete(prompt, formatted=formatted)


@pytest.fixture
def engine():
    index = VectorStoreIndex.from_documents([Document(text=t) for t in DOCS], embed_model=MockEmbedding(embed_dim=8))
    return index.as_query_engine(llm=AppLLM(reply=ANSWER), similarity_top_k=3)  # every document: MockEmbedding ties break at random


def truth():
    return ThelmaScript(questions={QUERY: [QUERY]},
                        source=lambda key: int("born" in key[1]),
                        essential=lambda key: int("born" in key[1]),
                        supported=lambda key: int(key[0] in " ".join(key[1])),
                        answers=lambda key: int(key[1] is not None and "born" in key[1]),
                        addresses=lambda key: int("born" in key[1]))


def test_per_metric_evaluators_read_source_nodes(engine):
    response = engine.query(QUERY)
    contexts = [n.get_content() for n in response.source_nodes]
    assert sorted(contexts) == sorted(DOCS)
    judge = Judge(truth().model())
    sp1 = LangragEvaluator(Thelma(judge, metrics=("sp1",)), score="sp1").evaluate_response(query=QUERY, response=response)
    assert sp1.contexts == contexts
    assert sp1.score == pytest.approx(1 / 3)
    gr = LangragEvaluator(Thelma(judge, metrics=("gr",)), score="gr").evaluate_response(query=QUERY, response=response)
    assert gr.score == 0.5 and gr.passing is True and "1 of 2 components matched" in gr.feedback
    rp = LangragEvaluator(Thelma(judge, metrics=("rp",)), score="rp").evaluate_response(query=QUERY, response=response)
    assert rp.score == 0.5
    assert LangragEvaluator(Thelma(judge, metrics=("sp2",)), score="sp2").evaluate(
        query=QUERY, response=ANSWER, contexts=["Ada was born in 1815. Ada wrote the first program."]).score == 0.5
    with pytest.raises(ConfigError):
        Thelma(judge, metrics=("sp3",))
    with pytest.raises(ConfigError, match="gives no score 'rp'; its scores: gr"):
        LangragEvaluator(Thelma(judge, metrics=("gr",)), score="rp")


def test_unscored_is_an_invalid_result():
    r = LangragEvaluator(Thelma(Judge(truth().model()), metrics=("sqc",)), score="sqc").evaluate(query=QUERY, response=ANSWER, contexts=[])
    assert r.invalid_result and r.invalid_reason == "undefined: no sources retrieved" and r.score is None


def test_llamaindex_embedding_model_for_self_distinctness():
    embedder = LlamaIndexEmbedder(MockEmbedding(embed_dim=4))    # every text gets the same vector
    assert embedder.embed(["a", "b"]).shape == (2, 4) and embedder.dimension == 4
    ev = LangragEvaluator(Thelma(Judge(truth().model()), metrics=("sd",), embedder=embedder), score="sd")
    r = ev.evaluate(query=QUERY, response="One thing. Another thing. A third.")
    assert r.score == 0.0 and r.passing is False


async def test_combined_evaluator_in_batch_eval_runner(engine):
    judge = Judge(truth().model())
    combined = LangragEvaluator(Thelma(judge, metrics=tuple(m for m in METRICS if m != "sd")))
    runner = BatchEvalRunner({"thelma": combined, "gr": LangragEvaluator(Thelma(judge, metrics=("gr",)), score="gr")}, workers=2)
    responses = [engine.query(QUERY), engine.query("Where is Paris?")]
    out = await runner.aevaluate_responses(queries=[QUERY, "Where is Paris?"], responses=responses)
    first = out["thelma"][0]
    assert "gr=0.500" in first.feedback and "sqc=" in first.feedback
    assert first.score is not None and 0 <= first.score <= 1
    assert out["gr"][0].score == 0.5
    assert first.result.score("gr") == 0.5 and first.scores["gr"] == 0.5  # the ThelmaResult itself


def test_prompts_get_and_update():
    ev = LangragEvaluator(Thelma(Judge(truth().model()), metrics=("gr",)), score="gr")
    prompts = ev.get_prompts()
    assert set(prompts) == {"decompose_claims", "match_supported", "batch_supported"}
    assert "task: thelma/match_supported" in prompts["match_supported"].get_template()
    mine = ("{#\ntask: mine\nvariables: claim, sources\noutput: 0 or 1\n#}\n"
            "Is <claim>{{ claim }}</claim> backed? {% for s in sources %}<source n=\"1\">{{ s }}</source>{% endfor %}")
    ev.update_prompts({"match_supported": mine})
    assert ev.get_prompts()["match_supported"].get_template().startswith("{#\ntask: mine")
    r = ev.evaluate(query=QUERY, response="Ada was born in 1815.", contexts=["Ada was born in 1815."])
    assert r.score == 1.0
    with pytest.raises(ConfigError):
        ev.update_prompts({"match_essential": mine})


def test_capture_from_an_unmodified_query_engine(engine):
    with capturing() as cap:
        engine.query(QUERY)
        engine.query("Where is Paris?")
    engine.query("not captured")
    assert isinstance(cap, RAGCapture)
    assert [s.question for s in cap.samples] == [QUERY, "Where is Paris?"]
    assert cap.samples[0].answer == ANSWER and len(cap.samples[0].contexts) == 3
    assert all(d.text in DOCS for d in cap.samples[0].contexts)
    result = LangragEvaluator(Thelma(Judge(truth().model()), metrics=("gr",)), score="gr").evaluate(
        query=cap.samples[0].question, response=cap.samples[0].answer, contexts=cap.samples[0].contexts)
    assert result.score is not None
