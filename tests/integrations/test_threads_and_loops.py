"""Evaluators inside the frameworks' own concurrency: LangSmith ``evaluate`` with repetitions and a
thread pool, a 16-thread pool of sync calls sharing one judge, and LlamaIndex's ``asyncio.run`` per
thread. Each makes exactly one model call per distinct prompt and reports every result under its
own key."""

from __future__ import annotations

import asyncio
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("langsmith")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_langrag import LangragStringEvaluator, langsmith_evaluator
from langsmith import Client, evaluate
from langsmith.schemas import Example
from llama_index.evaluation.langrag import LangragEvaluator

from langrag_eval.grading import VragGrader
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval.thelma import Thelma

ROWS = [("Where are invoice lines stored?", "invoice_items", "They are in the invoice_items table."),
        ("Where are refund disputes filed?", "disputes", "In the disputes table."),
        ("Where do card tokens live?", "token_vault", "In the payments table."),
        ("Who approves refunds?", "finance", "The finance team approves them.")]
ANSWERS = {q: a for q, _, a in ROWS}
DOCS = {q: [Document(page_content=f"{label} holds the data.", id=f"doc-{label}")] for q, label, _ in ROWS}


def grade_reply(prompt: str) -> str:
    for _, label, answer in ROWS:
        if f"<answer>\n{answer}" in prompt:
            score = 5 if label in answer else 1
            return f"Score: [[{score}]], Reason: [[checked {label}]]"
    raise KeyError(prompt[:60])


def app():
    """A deterministic LCEL RAG app: every repetition gives the same answer, so the same prompts."""
    retrieve = RunnableLambda(lambda q: DOCS[q])
    return RunnableLambda(lambda inputs: inputs["question"]) | RunnableParallel(
        context=retrieve, question=RunnablePassthrough()).assign(
        answer=RunnableLambda(lambda x: ANSWERS[x["question"]]))


def examples() -> list[Example]:
    return [Example(id=uuid.uuid4(), inputs={"question": q}, outputs={"answer": label})
            for q, label, _ in ROWS]


def offline_client() -> Client:
    return Client(api_key="offline", auto_batch_tracing=False, tracing_sampling_rate=0.0)


def run_evaluate(evaluators, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(evaluate(app(), data=examples(), evaluators=evaluators, upload_results=False,
                             client=offline_client(), **kwargs))


def test_langsmith_evaluate_with_repetitions_and_max_concurrency_shares_one_judge() -> None:
    model = ScriptedModel(grade_reply, latency=0.02)
    judge = Judge(model, concurrency=3)
    script = ThelmaScript(default=1)
    thelma_model = script.model()
    rows = run_evaluate([langsmith_evaluator(VragGrader(judge)),
                         langsmith_evaluator(Thelma(Judge(thelma_model), metrics=("sp1", "gr")))],
                        num_repetitions=2, max_concurrency=4)
    assert len(rows) == 2 * len(ROWS)
    for row in rows:
        got = {r.key: r for r in row["evaluation_results"]["results"]}
        assert set(got) == {"vrag", "vrag_raw_score", "thelma_sp1", "thelma_gr", "thelma_diagnosis"}
        question = row["example"].inputs["question"]
        label = row["example"].outputs["answer"]
        assert got["vrag_raw_score"].score == (5 if label in ANSWERS[question] else 1)
        assert got["thelma_sp1"].score == 1.0 and got["thelma_gr"].score is not None
    assert model.calls == len(ROWS)  # one paid call per answer, however often it was graded
    assert judge.usage.calls == len(ROWS) and judge.usage.cached == len(ROWS)
    assert model.peak_concurrency <= 3
    alone = Judge(script.model())
    thelma_alone = langsmith_evaluator(Thelma(alone, metrics=("sp1", "gr")))
    for q, _, a in ROWS:
        thelma_alone(inputs={"question": q}, outputs={"answer": a, "context": DOCS[q]})
    assert thelma_model.calls == alone.model.calls


def test_a_failing_evaluation_is_reported_under_its_own_key() -> None:
    judge = Judge(ScriptedModel(grade_reply))
    vrag = langsmith_evaluator(VragGrader(judge), key="grade")

    async def broken(sample):
        raise RuntimeError("the grader broke")

    vrag.evaluator.aevaluate = broken  # type: ignore[attr-defined]
    rows = run_evaluate([vrag], max_concurrency=2)
    for row in rows:
        got = {r.key: r for r in row["evaluation_results"]["results"]}
        assert set(got) == {"grade", "grade_raw_score"}
        assert got["grade"].score is None and "the grader broke" in got["grade"].comment


def test_sixteen_threads_call_the_sync_evaluators_with_one_shared_judge() -> None:
    model = ScriptedModel(grade_reply, latency=0.01)
    judge = Judge(model, concurrency=4)
    lc = LangragStringEvaluator(VragGrader(judge))
    li = LangragEvaluator(VragGrader(judge), score="grade")
    jobs = [(i, ROWS[i % len(ROWS)]) for i in range(64)]

    def one(job):
        i, (q, label, answer) = job
        if i % 2:  # LlamaIndex's evaluate runs asyncio.run in this thread
            return li.evaluate(query=q, response=answer, reference=label).score
        return lc.evaluate_strings(prediction=answer, reference=label, input=q)["raw_score"]

    with ThreadPoolExecutor(16) as pool:
        scores = list(pool.map(one, jobs))
    assert scores == [5 if label in answer else 1 for _, (_, label, answer) in jobs]
    assert model.calls == len(ROWS) and model.peak_concurrency <= 4


def test_llamaindex_asyncio_run_per_thread_and_inside_a_running_loop() -> None:
    model = ScriptedModel(grade_reply, latency=0.02)
    ev = LangragEvaluator(VragGrader(Judge(model)), score="grade")
    q, label, answer = ROWS[0]

    def in_thread(_: int) -> float:
        return asyncio.run(ev.aevaluate(query=q, response=answer, reference=label)).score

    async def in_loop() -> float:  # evaluate() from code that already runs a loop
        return ev.evaluate(query=q, response=answer, reference=label).score

    with ThreadPoolExecutor(8) as pool:
        scores = list(pool.map(in_thread, range(8)))
    assert scores == [5.0] * 8 and asyncio.run(in_loop()) == 5.0
    assert model.calls == 1
