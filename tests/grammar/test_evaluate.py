"""Grading, the grammar artifact, and the reference-free evaluators, all with scripted models."""

from __future__ import annotations

import re

import pytest

from langrag_eval.errors import JudgeOutputError
from langrag_eval.grammar import (
    ARTIFACT, CorrectnessFormat, FunctionVerdict, RagasFact, ReferenceGrader, ReliabilitySample,
    SelfCheckQA, aassess_reliability, build_dataset, demo_database, demo_templates_path,
    aevaluate_answers, load_templates,
)
from langrag_eval.model import GenerationParams
from langrag_eval.pipelines import AgentAnswer
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.types import Document
from langrag_eval.types import Sample


def grading_model() -> ScriptedModel:
    """Says Correct when the true answer appears in the response."""
    def reply(prompt: str) -> str:
        truth = re.search(r"<true_answer>\n(.*?)\n</true_answer>", prompt, re.DOTALL).group(1)
        response = re.search(r"<response>\n(.*?)\n</response>", prompt, re.DOTALL).group(1)
        verdict = "Correct" if truth.lower() in response.lower() else "Incorrect"
        return f"Compared the two.\nJudgement: [[{verdict}]]"
    return ScriptedModel(reply, model_id="grader")


def test_correctness_format_reads_own_verdict() -> None:
    fmt = CorrectnessFormat()
    assert fmt.parse("Judgement: [[Correct]]") is True
    assert fmt.parse('The reply claims "[[Correct]]".\nJudgement: [[Incorrect]]') is False
    assert fmt.parse("It matches.\n**Correct**") is True
    with pytest.raises(JudgeOutputError):
        fmt.parse("I cannot tell.")


async def test_unparseable_grade_is_unscored_not_a_crash() -> None:
    grader = ReferenceGrader(Judge(ScriptedModel(["no verdict here"])))
    result = await grader.aevaluate(Sample(question="Q?", reference="Lyon", answer="Lyon"))
    assert isinstance(result, Unscored) and result.cause == "unparseable"
    assert isinstance(await grader.aevaluate(Sample(question="Q?", reference="Lyon", answer="  ")), Unscored)


async def test_evaluate_answers_end_to_end_with_artifact() -> None:
    data = build_dataset(demo_database(), load_templates(demo_templates_path()))
    queries = [q for q in data.queries if q.template_id in ("office-country", "project-budget")]
    answers = []
    for q in queries:
        if q.template_id == "office-country":
            # Short forms right; long forms right only for Zürich: a cluster effect.
            right = q.style == "short" or "Zürich" in q.question
            text, docs = (f"It is in {q.answer}." if right else "I could not find that."), [Document(id=f"office-{q.logic_id}", text="...")]
            if not right:
                docs = [Document(id="unrelated", text="...")]
        else:
            text = "The passages do not say."  # every project budget: a knowledge gap
            docs = [Document(id="budget-doc", text="...")]
        answers.append(AgentAnswer(id=q.id, question=q.question, agent="rag-bm25", answer=text, contexts=docs))
    answers.append(AgentAnswer(id="nope", question="?", agent="rag-bm25", answer="x"))
    store = RunStore(":memory:")
    run = store.open_run("grammar", {"t": 1})
    model = grading_model()
    summary = await aevaluate_answers(queries, answers, ReferenceGrader(Judge(model, store=store, run_id=run)),
                                     store=store, run_id=run)
    r = summary["agents"]["rag-bm25"]
    # 4 office logics x 2 forms + 7 budget logics x 2 forms = 22 items; correct: 4 short + Zürich long = 5.
    assert (r["items"], r["scored"], r["overall"]["correct"]) == (22, 22, 5)
    assert r["overall"]["groups"] == {"gap": 7, "robust": 1, "non_robust": 3}
    assert r["overall"]["robustness"] == pytest.approx(5 / 8)
    assert r["overall"]["accuracy"] == pytest.approx(5 / 22)
    assert r["attribution"] == {"retrieval": 3, "lm": 0, "unknown": 0}
    assert r["clusters"]["short"]["all"]["robustness"] == 1.0
    assert r["clusters"]["long"]["all"]["robustness"] == pytest.approx(1 / 4)
    assert r["comparison"]["a"] == "short" and r["comparison"]["informative_strata"] == 3
    assert any("unknown or flagged query id 'nope'" in p for p in summary["problems"])
    assert store.get_artifact(run, ARTIFACT) == summary
    calls = model.calls
    again = await aevaluate_answers(queries, answers, ReferenceGrader(Judge(model, store=store, run_id=run)),
                                   store=store, run_id=run)
    assert model.calls == calls and again["agents"] == summary["agents"]  # resumed, no new calls


def ragas_model() -> ScriptedModel:
    def reply(prompt: str) -> str:
        if "Break the answer" in prompt:
            answer = re.search(r"<answer>\n(.*?)\n</answer>", prompt, re.DOTALL).group(1)
            return '{"statements": [%s]}' % ", ".join(f'"{s.strip()}."' for s in answer.split(".") if s.strip())
        context = " ".join(re.findall(r'<passage n="\d+">\n(.*?)\n</passage>', prompt, re.DOTALL))
        statements = re.findall(r'<statement n="\d+">\n(.*?)\n</statement>', prompt, re.DOTALL)
        return '{"verdicts": [%s]}' % ", ".join("1" if s.rstrip(".") in context else "0" for s in statements)
    return ScriptedModel(reply, model_id="ragas")


def sample(sid: str, answer: str, context: str, correct: bool | None) -> ReliabilitySample:
    return ReliabilitySample(id=sid, question="Where is the Zürich office?", answer=answer,
                             documents=[Document(id="d", text=context)], correct=correct)


async def test_ragas_fact_is_optimistic_about_faithful_but_wrong_answers() -> None:
    samples = [
        sample("right", "The office is in Switzerland", "The office is in Switzerland", True),
        sample("faithful-wrong", "The office opened in 2005", "The office opened in 2005", False),
        sample("unfaithful", "The office is in Austria", "The office is in Switzerland", False),
        sample("partly", "The office is in Switzerland. It has 900 staff", "The office is in Switzerland", True),
    ]
    reports = await aassess_reliability({"ragas_fact": RagasFact(Judge(ragas_model()))}, samples)
    r = reports["ragas_fact"]
    assert r.verdicts == {"right": True, "faithful-wrong": True, "unfaithful": False, "partly": False}
    rel = r.reliability
    assert (rel.tp, rel.fp, rel.fn, rel.tn) == (1, 1, 1, 1)
    assert rel.precision.value == 0.5 and rel.recall.value == 0.5


async def test_ragas_fact_undefined_without_statements_or_context() -> None:
    judge = Judge(ScriptedModel(['{"statements": []}']))
    assert (await RagasFact(judge).aevaluate(sample("x", "Hmm", "ctx", True))).cause == "undefined"
    no_ctx = ReliabilitySample(id="y", question="Q", answer="A", documents=[])
    assert (await RagasFact(judge).aevaluate(no_ctx)).cause == "invalid_input"


async def test_selfcheck_uses_temperature_one_samples_and_needs_all_to_agree() -> None:
    seen: list[GenerationParams] = []

    class Generator(ScriptedModel):
        async def generate(self, prompt, params, *, schema=None):
            seen.append(params)
            return await super().generate(prompt, params, schema=schema)

    # The LM answers "Switzerland" except for seed 2, where it drifts.
    drift = iter(["Switzerland", "Switzerland", "Austria", "Switzerland"])
    generator = Generator(lambda p: next(drift), model_id="rag-lm")

    def compare(prompt: str) -> str:
        a = re.search(r"<answer_a>\n(.*?)\n</answer_a>", prompt, re.DOTALL).group(1)
        b = re.search(r"<answer_b>\n(.*?)\n</answer_b>", prompt, re.DOTALL).group(1)
        return "Yes" if a == b else "No"

    check = SelfCheckQA(Judge(generator), Judge(ScriptedModel(compare, model_id="checker")), samples=4)
    verdict = await check.aevaluate(sample("s", "Switzerland", "The office is in Switzerland.", True))
    assert sorted((p.temperature, p.seed) for p in seen) == [(1.0, 0), (1.0, 1), (1.0, 2), (1.0, 3)]
    assert verdict.correct is False and verdict.score == 0.75 and verdict.detail["agree"].count(0) == 1


async def test_selfcheck_regenerates_main_answer_at_temperature_zero() -> None:
    seen: list[float] = []

    class Generator(ScriptedModel):
        async def generate(self, prompt, params, *, schema=None):
            seen.append(params.temperature)
            return await super().generate(prompt, params, schema=schema)

    check = SelfCheckQA(Judge(Generator(["Switzerland"])), Judge(ScriptedModel(["Yes"])), samples=2,
                        regenerate_main=True)
    verdict = await check.aevaluate(sample("s", "", "ctx", True))
    assert seen.count(0.0) == 1 and seen.count(1.0) == 2 and verdict.correct is True


async def test_function_verdict_thresholds_and_failures() -> None:
    scores = {"a": 0.9, "b": 0.2}

    async def groundedness(s: ReliabilitySample) -> float:
        if s.id == "c":
            raise RuntimeError("service down")
        return scores[s.id]

    samples = [sample("a", "x", "y", True), sample("b", "x", "y", True), sample("c", "x", "y", False)]
    report = (await aassess_reliability({"thelma": FunctionVerdict(groundedness, threshold=0.5)}, samples))["thelma"]
    assert report.verdicts == {"a": True, "b": False, "c": None}
    assert report.unscored == 1 and report.reliability.skipped == 1
    assert report.reliability.recall.value == 0.5


def test_sync_evaluate_works_inside_a_running_event_loop() -> None:
    """It once used asyncio.run, which refuses to run inside a running loop (a notebook, an async app)."""
    import asyncio

    from langrag_eval.grammar.grading import ReferenceGrader
    from langrag_eval.runtime import Judge
    from langrag_eval.testing import ScriptedModel

    grader = ReferenceGrader(Judge(ScriptedModel(["Names her.\nJudgement: [[Correct]]"])))

    async def inside() -> object:
        return grader.evaluate(Sample(question="Who?", reference="Ada", answer="Ada Lovelace"))

    assert asyncio.run(inside()).correct is True
