"""LlamaIndex: the BaseRetriever wrapper over every mode, and the six agents as query engines that
LlamaIndex's own evaluators and BatchEvalRunner accept."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.evaluation import (
    BaseEvaluator,
    BatchEvalRunner,
    CorrectnessEvaluator,
    EvaluationResult,
    RetrieverEvaluator,
)
from llama_index.core.evaluation.retrieval.metrics import MRR, HitRate
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.prompts import PromptTemplate
from llama_index.evaluation.langrag import LangragQueryEngine, LangragRetriever, six_query_engines

from langrag_eval.models.embeddings import default_embedder
from langrag_eval.pipelines import AGENT_NAMES, RAGAgent
from langrag_eval.retrieval import Chunk, EmbeddedBackend, Retriever
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel

CORPUS = {
    "mic-ip": "The IM72D128 digital MEMS microphone has an IP rating of IP57: it survives immersion in water.",
    "mic-snr": "The IM72D128 reaches a signal-to-noise ratio of 72 dB.",
    "co2": "The PAS CO2 sensor module measures 14 x 13.8 x 7.5 mm.",
    "pressure": "The KP253 barometric pressure sensor is qualified for automotive side-airbag systems.",
    "radar": "The 60 GHz radar sensor detects presence and breathing through thin walls.",
}
QUESTION = "What is the IP rating of the IM72D128?"


def scripted(prompt: str) -> str:
    if "different search queries" in prompt:  # rewrites of the question itself
        question = re.search(r"<question>\n(.*?)\n</question>", prompt, re.DOTALL).group(1).rstrip("?")
        return f"1. {question} datasheet\n2. {question} specification"
    return "from " + ",".join(re.findall(r'<passage id="([^"]+)"', prompt))


class ScriptedLLM(CustomLLM):
    """A LlamaIndex LLM replying from a function of the prompt (INTERFACES.md, section 11)."""

    reply: Callable[[str], str]
    prompts: list = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.reply(prompt))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        yield self.complete(prompt)


class ContextRecorder(BaseEvaluator):
    """Passes when the response text names the first context's node id, and keeps what it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, list[str]]] = []

    def _get_prompts(self):
        return {"eval_template": PromptTemplate("unused {query}")}

    def _update_prompts(self, prompts) -> None:
        pass

    async def aevaluate(self, query=None, response=None, contexts=None, **kwargs) -> EvaluationResult:
        self.seen.append((response, list(contexts or [])))
        return EvaluationResult(query=query, response=response, contexts=contexts,
                                passing=bool(response and contexts), score=float(len(contexts or [])))


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


@pytest.fixture(scope="module")
def backend(embedder):
    chunks = [Chunk(id=k, text=v, metadata={"shelf": "sensors"}) for k, v in CORPUS.items()]
    b = EmbeddedBackend()
    b.index(chunks, embedder.embed([c.text for c in chunks]))
    return b


@pytest.mark.parametrize("mode", ["bm25", "knn", "hybrid"])
async def test_retriever_matches_the_core_retriever_in_every_mode(backend, embedder, mode):
    core = Retriever(backend, mode=mode, embedder=embedder, k=3)
    wrapped = LangragRetriever(core)
    nodes = wrapped.retrieve(QUESTION)
    expected = core.retrieve(QUESTION)
    assert [n.node.node_id for n in nodes] == [d.id for d in expected] and nodes[0].node.node_id == "mic-ip"
    assert [n.score for n in nodes] == [d.score for d in expected]
    assert [n.node.get_content() for n in nodes] == [d.text for d in expected]
    assert nodes[0].node.metadata == {"shelf": "sensors"}
    assert [n.node.node_id for n in await wrapped.aretrieve(QUESTION)] == [d.id for d in expected]


async def test_llamaindex_retrieval_metrics_see_our_chunk_ids(backend):
    retriever = LangragRetriever.from_backend(backend, mode="bm25", k=3)
    result = await RetrieverEvaluator(metrics=[MRR(), HitRate()], retriever=retriever).aevaluate(
        query="Which pressure sensor suits airbags?", expected_ids=["pressure"])
    assert result.retrieved_ids[0] == "pressure"
    assert result.metric_vals_dict == {"mrr": 1.0, "hit_rate": 1.0}


def test_six_agents_run_as_query_engines_with_a_llamaindex_llm(backend, embedder):
    llm = ScriptedLLM(reply=scripted, prompts=[])
    engines = six_query_engines(backend, embedder, llm, k=2)
    assert tuple(engines) == AGENT_NAMES
    for name, engine in engines.items():
        response = engine.query(QUESTION)
        ids = [n.node.node_id for n in response.source_nodes]
        assert response.response == "from " + ",".join(ids) and ids[0] == "mic-ip" and len(ids) == 2
        assert response.metadata["agent"] == name
        rewrites = [f"{QUESTION[:-1]} datasheet", f"{QUESTION[:-1]} specification"]
        expected = rewrites if name.startswith("fusion") else []
        assert response.metadata["variations"] == expected
    assert any("different search queries" in p for p in llm.prompts)


async def test_evaluate_response_and_batch_eval_runner_see_the_agents_passages(backend, embedder):
    engine = six_query_engines(backend, embedder, Judge(ScriptedModel(scripted)), k=2)["fusion-hybrid"]
    response = await engine.aquery(QUESTION)
    recorder = ContextRecorder()
    result = await recorder.aevaluate_response(query=QUESTION, response=response)
    assert result.passing and result.contexts == [n.node.get_content() for n in response.source_nodes]
    assert result.contexts[0] == CORPUS["mic-ip"]

    queries = [QUESTION, "Which pressure sensor suits airbags?"]
    correctness = CorrectnessEvaluator(llm=ScriptedLLM(reply=lambda p: "4.5\nGrounded in the passages.",
                                                       prompts=[]))
    runner = BatchEvalRunner({"contexts": ContextRecorder(), "correctness": correctness}, workers=2)
    results = await runner.aevaluate_queries(engine, queries=queries, reference=["IP57", "KP253"])
    assert [r.score for r in results["correctness"]] == [4.5, 4.5]
    assert [r.contexts[0] for r in results["contexts"]] == [CORPUS["mic-ip"], CORPUS["pressure"]]
    assert all(r.response.startswith("from ") for r in results["contexts"])


def test_a_failed_answer_is_a_response_without_text_and_with_the_reason(backend):
    engine = LangragQueryEngine(agent=RAGAgent(Retriever(backend), Judge(ScriptedModel(["  "]))))
    response = engine.query(QUESTION)
    assert response.response is None and response.source_nodes == []
    assert response.metadata["error"].startswith("unparseable: the generator returned an empty answer")
