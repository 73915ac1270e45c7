"""A ``create_agent`` app evaluated the way teams run evaluations: LangSmith ``evaluate`` with
``num_repetitions=2, max_concurrency=4`` (message-shaped inputs and outputs read by the evaluator),
and a 16-thread pool calling ``evaluate`` on captured samples with one shared judge. Each makes
exactly one model call per distinct prompt."""

from __future__ import annotations

import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("langsmith")

from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools.retriever import create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_langrag import capturing, langsmith_evaluator
from langsmith import Client, evaluate
from langsmith.schemas import Example

from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval.thelma import Thelma

ROWS = {"How long is the pump warranty?": "two years", "How fast do seals ship?": "five days",
        "How much power does the pump draw?": "40 watts"}
DOCS = [Document(page_content="The pump carries a two-year warranty.", id="warranty"),
        Document(page_content="Spare seals ship within five days.", id="seals"),
        Document(page_content="The pump draws 40 watts.", id="power")]


class ToolThenAnswer(BaseChatModel):
    """A stateless fake: calls the search tool with the user's question, then answers with what the
    tool returned (safe to share between threads, unlike the list-driven fakes)."""

    @property
    def _llm_type(self) -> str:
        return "tool-then-answer"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        tool = [m for m in messages if m.type == "tool"]
        question = next(m.content for m in messages if m.type == "human")
        message = AIMessage(content=f"From the docs: {tool[-1].content}") if tool else AIMessage(
            content="", tool_calls=[{"name": "search", "args": {"query": question}, "id": "c1"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture(scope="module")
def agent():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(DOCS)
    tool = create_retriever_tool(store.as_retriever(search_kwargs={"k": 1}), "search", "Search the docs.")
    return create_agent(ToolThenAnswer(), tools=[tool])


def messages(question: str) -> dict:
    return {"messages": [{"role": "user", "content": question}]}


def test_langsmith_evaluate_repetitions_and_concurrency_on_an_agent(agent) -> None:
    model = ScriptedModel(lambda prompt: "Score: [[4]], Reason: [[Close.]]", latency=0.02)
    judge = Judge(model, concurrency=2)
    examples = [Example(id=uuid.uuid4(), inputs=messages(q), outputs={"answer": a}) for q, a in ROWS.items()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = list(evaluate(agent, data=examples, evaluators=[langsmith_evaluator(VragGrader(judge))],
                             num_repetitions=2, max_concurrency=4, upload_results=False,
                             client=Client(api_key="offline", auto_batch_tracing=False, tracing_sampling_rate=0.0)))
    assert len(rows) == 2 * len(ROWS)
    for row in rows:
        got = {r.key: r for r in row["evaluation_results"]["results"]}
        assert got["vrag_raw_score"].score == 4 and got["vrag"].value == "accept"
    assert model.calls == len(ROWS) and model.peak_concurrency <= 2
    graded = {(p.split("<question>\n")[1].split("\n</question>")[0]) for p in model.prompts}
    assert graded == set(ROWS)  # the question came out of the agent's messages


def test_sixteen_threads_score_captured_agent_samples_with_one_judge(agent) -> None:
    with capturing() as cap:
        for q in ROWS:
            agent.invoke(messages(q))
    samples = cap.samples
    assert [s.question for s in samples] == list(ROWS) and all(len(s.contexts) == 1 for s in samples)
    script = ThelmaScript(default=1)
    alone = Judge(script.model())
    expected = [Thelma(alone, metrics=("sp1", "gr")).evaluate(s).score_values() for s in samples]
    shared_model = script.model(latency=0.005)
    thelma = Thelma(Judge(shared_model, concurrency=4), metrics=("sp1", "gr"))
    with ThreadPoolExecutor(16) as pool:
        got = list(pool.map(lambda i: thelma.evaluate(samples[i % len(samples)]), range(48)))
    assert [g.score_values() for g in got] == [expected[i % len(samples)] for i in range(48)]
    assert shared_model.calls == alone.model.calls and shared_model.peak_concurrency <= 4
