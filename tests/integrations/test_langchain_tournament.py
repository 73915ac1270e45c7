"""LangChain interfaces of the tournament: pairwise string evaluator, LangSmith comparative evaluator
(inside the real ``evaluate_comparative``), and the one-call tournament over runnables."""

from __future__ import annotations

import re
import socket
import uuid
from datetime import datetime, timezone

from langchain_core.documents import Document as LCDocument
from langchain_core.runnables import RunnableLambda
from langchain_langrag import LangragPairwiseEvaluator, langsmith_evaluator, tournament_from_runnables
from langsmith import Client
from langsmith.evaluation import evaluate_comparative
from langsmith.evaluation.evaluator import comparison_evaluator
from langsmith.schemas import ComparativeExperiment, Example, LangSmithInfo, Run, TracerSession

from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.tournament import PairwiseEvaluator


def judge_reply(prompt: str) -> str:
    """Documents mentioning Paris are very relevant, others not; the answer saying Paris wins."""
    if "<document>" in prompt:
        doc = prompt.split("<document>")[1]
        level = 2 if "Paris" in doc else 0
        return f'Checked.\n{{"reason": "mentions Paris: {level == 2}", "relevance": {level}}}'
    first = prompt.split("<answer_a>")[1].split("</answer_a>")[0]
    second = prompt.split("<answer_b>")[1].split("</answer_b>")[0]
    if ("Paris" in first) == ("Paris" in second):
        return "Same.\n[[C]]"
    return "Compared.\n" + ("[[A]]" if "Paris" in first else "[[B]]")


def test_pairwise_string_evaluator_with_contexts_and_threshold() -> None:
    model = ScriptedModel(judge_reply)
    ev = LangragPairwiseEvaluator(PairwiseEvaluator(Judge(model)))
    r = ev.evaluate_string_pairs(prediction="Lyon", prediction_b="It is Paris", input="Capital of France?",
                                 contexts=[LCDocument(page_content="Paris is the capital.")],
                                 contexts_b=["Paris is the capital.", "Lyon has silk."])
    assert (r["score"], r["value"], r["verdicts"], r["consistent"]) == (0, "B", ["B", "A"], True)
    assert r["dropped_documents"] == 1 and len(r["documents"]) == 1    # "Lyon has silk." is under 2
    games = [p for p in model.prompts if "<answer_a>" in p]
    assert len(games) == 2 and all("Lyon has silk." not in p and "Paris is the capital." in p for p in games)
    assert sum("<document>" in p for p in model.prompts) == 2         # the shared document judged once
    again = ev.evaluate_string_pairs(prediction="Lyon", prediction_b="It is Paris", input="Capital of France?",
                                     contexts=["Paris is the capital."])
    assert again["score"] == 0 and model.calls == 4                    # all from the judge's cache


async def test_async_pairwise_and_unscored() -> None:
    ev = LangragPairwiseEvaluator(PairwiseEvaluator(Judge(ScriptedModel(["no verdict at all"]))))
    r = await ev.aevaluate_string_pairs(prediction="a", prediction_b="b", input="q?")
    assert r["score"] is None and r["unscored"] == "unparseable"


def _run(run_id: uuid.UUID, example_id: uuid.UUID, session: uuid.UUID, outputs: dict) -> Run:
    return Run(id=run_id, name="rag", start_time=datetime.now(timezone.utc), run_type="chain",
               inputs={"question": "Capital of France?"}, outputs=outputs, trace_id=run_id,
               reference_example_id=example_id, session_id=session)


def test_comparative_evaluator_function_directly() -> None:
    fn = langsmith_evaluator(PairwiseEvaluator(Judge(ScriptedModel(judge_reply))))
    example = Example(id=uuid.uuid4(), inputs={"question": "Capital of France?"}, outputs={})
    a = _run(uuid.uuid4(), example.id, uuid.uuid4(), {"answer": "Paris", "context": ["Paris is the capital."]})
    b = _run(uuid.uuid4(), example.id, uuid.uuid4(), {"output": "Lyon", "documents": []})
    result = comparison_evaluator(fn).compare_runs([a, b], example)   # the wrapper evaluate_comparative uses
    assert result.key == "ragelo_preference" and result.scores == {a.id: 1.0, b.id: 0.0}
    assert "A shown first" in result.comment


class InMemoryClient(Client):
    """``evaluate_comparative`` reads experiments' runs and dataset examples from the LangSmith API and
    posts feedback; this client serves those five calls from memory, so the real function runs
    offline (tests block the network)."""

    def __init__(self, runs: dict[uuid.UUID, list[Run]], examples: list[Example], dataset: uuid.UUID) -> None:
        super().__init__(api_key="offline", auto_batch_tracing=False, tracing_sampling_rate=0.0)
        self._runs, self._examples, self._dataset, self.feedback = runs, examples, dataset, []

    @property
    def info(self) -> LangSmithInfo:
        return LangSmithInfo(instance_flags={})            # ClickHouse backend: list_runs is used

    def list_runs(self, *, project_id=None, **kwargs):
        return iter(self._runs[project_id])

    def list_examples(self, *, example_ids=None, **kwargs):
        return iter([e for e in self._examples if e.id in set(example_ids)])

    def create_comparative_experiment(self, name, experiments, **kwargs):
        now = datetime.now(timezone.utc)
        return ComparativeExperiment(id=kwargs.get("id") or uuid.uuid4(), name=name, tenant_id=uuid.uuid4(),
                                     created_at=now, modified_at=now, reference_dataset_id=self._dataset)

    def create_feedback(self, run_id=None, key=None, score=None, **kwargs):
        self.feedback.append((run_id, key, score))


def test_evaluate_comparative_runs_offline_with_the_evaluator(monkeypatch) -> None:
    lookups: list[object] = []
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: lookups.append(a[0]) or real(*a, **k))
    dataset = uuid.uuid4()
    examples = [Example(id=uuid.uuid4(), inputs={"question": q}, outputs={}, dataset_id=dataset)
                for q in ("Capital of France?", "Where is the Louvre?")]
    sessions = [TracerSession(id=uuid.uuid4(), name=n, tenant_id=uuid.uuid4(), reference_dataset_id=dataset)
                for n in ("fusion", "plain")]
    runs = {sessions[0].id: [_run(uuid.uuid4(), e.id, sessions[0].id,
                                  {"answer": "Paris", "context": ["Paris is the capital."]}) for e in examples],
            sessions[1].id: [_run(uuid.uuid4(), e.id, sessions[1].id,
                                  {"answer": "Lyon", "context": ["Lyon has silk."]}) for e in examples]}
    client = InMemoryClient(runs, examples, dataset)
    evaluator = langsmith_evaluator(PairwiseEvaluator(Judge(ScriptedModel(judge_reply))))
    results = evaluate_comparative((sessions[0], sessions[1]), evaluators=[evaluator], client=client,
                                   max_concurrency=0)
    rows = list(results)
    assert len(rows) == 2
    fusion_ids = {r.id for r in runs[sessions[0].id]}
    assert sorted(score for _, _, score in client.feedback) == [0.0, 0.0, 1.0, 1.0]
    assert all(score == (1.0 if rid in fusion_ids else 0.0) for rid, _, score in client.feedback)
    assert {key for _, key, _ in client.feedback} == {"ragelo_preference"}
    assert lookups == []                                      # not even a DNS lookup


def test_tournament_from_runnables() -> None:
    def app(answer: str, context: list[str]):
        return RunnableLambda(lambda q: {"answer": answer, "context": [LCDocument(page_content=c) for c in context]})

    def broken(q: str) -> dict:
        raise RuntimeError("retriever down")

    runnables = {"good": app("Paris", ["Paris is the capital."]), "bad": app("Lyon", ["Lyon has silk."]),
                 "plain": RunnableLambda(lambda q: "Marseille"), "broken": RunnableLambda(broken)}
    result = tournament_from_runnables(runnables, ["Capital of France?", "Main city of France?"],
                                       Judge(ScriptedModel(judge_reply)))
    s = result.summary
    assert s["ranking"][0]["agent"] == "good"
    assert s["retrieval"]["per_agent"]["good"]["mrr"]["very"] == 1.0
    assert s["retrieval"]["per_agent"]["bad"]["mrr"]["somewhat"] == 0.0
    assert s["left_out"]["counts"]["app_error"] == 2
    assert any(re.search(r"app 'broken' failed on query 'q1': RuntimeError: retriever down", m)
               for m in s["left_out"]["messages"])
    assert s["games"]["played"] == 2 * 3
    # what each variant was judged on, per query, as its app returned it
    assert sorted(result.samples) == ["q1", "q2"] and sorted(result.samples["q1"]) == ["bad", "good", "plain"]
    judged = result.samples["q2"]["good"]
    assert (judged.answer, [d.text for d in judged.contexts]) == ("Paris", ["Paris is the capital."])
    assert result.samples["q1"]["plain"].contexts == []
