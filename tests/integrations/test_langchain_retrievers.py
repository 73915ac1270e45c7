"""LangChain: the BaseRetriever wrapper over every mode, and the six agents as LCEL runnables."""

from __future__ import annotations

import re

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_langrag import LangragRetriever, as_runnable, six_runnables

from langrag_eval.models.embeddings import default_embedder
from langrag_eval.pipelines import AGENT_NAMES, FusionAgent
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


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


@pytest.fixture(scope="module")
def backend(embedder):
    chunks = [Chunk(id=k, text=v, metadata={"shelf": "sensors"}) for k, v in CORPUS.items()]
    b = EmbeddedBackend()
    b.index(chunks, embedder.embed([c.text for c in chunks]))
    return b


def scripted(prompt: str) -> str:
    if "different search queries" in prompt:  # rewrites of the question itself
        question = re.search(r"<question>\n(.*?)\n</question>", prompt, re.DOTALL).group(1).rstrip("?")
        return f"1. {question} datasheet\n2. {question} specification"
    return "from " + ",".join(re.findall(r'<passage id="([^"]+)"', prompt))


@pytest.mark.parametrize("mode", ["bm25", "knn", "hybrid"])
def test_retriever_matches_the_core_retriever_in_every_mode(backend, embedder, mode):
    core = Retriever(backend, mode=mode, embedder=embedder, k=3)
    wrapped = LangragRetriever(retriever=core)
    docs = wrapped.invoke(QUESTION)
    expected = core.retrieve(QUESTION)
    assert [d.id for d in docs] == [d.id for d in expected] and docs[0].id == "mic-ip"
    assert [d.metadata["id"] for d in docs] == [d.id for d in expected]
    assert [d.metadata["score"] for d in docs] == [d.score for d in expected]
    assert [d.page_content for d in docs] == [d.text for d in expected]
    assert all(d.metadata["shelf"] == "sensors" for d in docs)


async def test_async_path_and_k_override(backend, embedder):
    wrapped = LangragRetriever.from_backend(backend, mode="knn", embedder=embedder, k=4)
    sync_docs = wrapped.invoke(QUESTION)
    async_docs = await wrapped.ainvoke(QUESTION)
    assert [d.id for d in async_docs] == [d.id for d in sync_docs] and len(sync_docs) == 4
    assert len(LangragRetriever(retriever=wrapped.retriever, k=2).invoke(QUESTION)) == 2


def test_retriever_composes_in_an_lcel_chain_and_reports_to_callbacks(backend):
    class Capture(BaseCallbackHandler):
        documents: list = []

        def on_retriever_end(self, documents, **kwargs):
            self.documents = list(documents)

    retriever = LangragRetriever.from_backend(backend, mode="bm25", k=2)
    prompt = ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
    chain = RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(
        answer=prompt | FakeListChatModel(responses=["IP57"]) | StrOutputParser())
    capture = Capture()
    out = chain.invoke(QUESTION, config={"callbacks": [capture]})
    assert out["answer"] == "IP57" and out["question"] == QUESTION
    assert [d.id for d in out["context"]] == [d.id for d in capture.documents] and out["context"][0].id == "mic-ip"


def test_six_agents_run_as_runnables(backend, embedder):
    model = ScriptedModel(scripted)
    chains = six_runnables(backend, embedder, Judge(model), k=2)
    assert tuple(chains) == AGENT_NAMES
    for name, chain in chains.items():
        out = chain.invoke({"question": QUESTION, "qid": "q1"})
        assert (out["agent"], out["qid"], out["error"]) == (name, "q1", None)
        assert out["answer"] == "from " + ",".join(d.id for d in out["context"])
        assert out["context"][0].id == "mic-ip" and len(out["context"]) == 2
        assert all(isinstance(d.metadata["score"], float) for d in out["context"])
        rewrites = [f"{QUESTION[:-1]} datasheet", f"{QUESTION[:-1]} specification"]
        expected = rewrites if name.startswith("fusion") else []
        assert out["variations"] == expected
    # The runnables compose: pick the answer out with a plain LCEL step.
    assert (chains["rag-bm25"] | RunnableLambda(lambda o: o["answer"])).invoke(QUESTION).startswith("from mic-ip")


def test_agents_answer_with_a_langchain_chat_model(backend):
    fusion = six_runnables(backend, None, FakeListChatModel(
        responses=["IM72D128 waterproof\nIM72D128 IP57", "It is rated IP57."]), k=2)["fusion-bm25"]
    out = fusion.invoke(QUESTION)
    assert out["variations"] == ["IM72D128 waterproof", "IM72D128 IP57"]
    assert out["answer"] == "It is rated IP57." and out["context"][0].id == "mic-ip"

    rag = six_runnables(backend, None, FakeListChatModel(responses=["IP57."]), k=1)["rag-bm25"]
    assert rag.invoke(QUESTION)["answer"] == "IP57."


async def test_batch_and_failures_as_data(backend):
    chain = as_runnable(FusionAgent(Retriever(backend), Judge(ScriptedModel(scripted)), k=2))
    outs = await chain.abatch([QUESTION, {"query": "KP253 airbag"}, "   "])
    assert [o["error"] is None for o in outs] == [True, True, False]
    assert outs[1]["context"][0].id == "pressure"
    assert outs[2]["answer"] is None and outs[2]["error"].startswith("invalid_input: empty query")
    with pytest.raises(Exception, match="question"):
        chain.invoke(42)
