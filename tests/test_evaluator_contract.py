"""The one evaluator contract: every capability's evaluator is an ``Evaluator``; its sync and batch
forms are derived once, behave alike everywhere (also inside a running event loop), resume from a
run store, and never judge the same finished item twice."""

from __future__ import annotations

import ast
import asyncio
import inspect
from pathlib import Path

import pytest

import langrag_eval
from langrag_eval import Sample, Unscored
from langrag_eval.errors import ConfigError
from langrag_eval.evaluator import Evaluator
from langrag_eval.grading import VragGrader
from langrag_eval.grammar.grading import ReferenceGrader
from langrag_eval.grammar.reliability import FunctionVerdict, RagasFact, ReliabilitySample, SelfCheckQA
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval.thelma import Thelma
from langrag_eval.tournament import (
    GameSample, PairwiseEvaluator, PointwiseEvaluator, PointwiseSample, RelevanceEvaluator,
    RelevanceSample,
)

ROOT = Path(langrag_eval.__file__).parent


def _judge(replies, **kw) -> Judge:
    return Judge(ScriptedModel(replies), **kw)


CASES = {
    "vrag": (lambda: VragGrader(_judge(["Score: [[5]], Reason: [[same]]"])),
             Sample(id="s1", question="Capital?", answer="Paris", reference="Paris")),
    "thelma": (lambda: Thelma(Judge(ThelmaScript(default=1).model()), metrics=("rp",)),
               Sample(id="s1", question="Who?", answer="Ada.", contexts=["Ada."])),
    "relevance": (lambda: RelevanceEvaluator(_judge(['{"reason": "names it", "relevance": 2}'])),
                  RelevanceSample(id="s1", query="Capital?", document="Paris is the capital.")),
    "pointwise": (lambda: PointwiseEvaluator(_judge(['{"relevance": 2, "accuracy": 2, "completeness": 1, '
                                                     '"precision": 2}'])),
                  PointwiseSample(id="s1", query="Capital?", answer="Paris")),
    "pairwise": (lambda: PairwiseEvaluator(_judge(["[[C]]"])),
                 GameSample(id="s1", query="Capital?", answer_a="Paris", answer_b="Lyon")),
    "grammar": (lambda: ReferenceGrader(_judge(["Judgement: [[Correct]]"])),
                Sample(id="s1", question="Capital?", answer="Paris", reference="Paris")),
    "reference_free": (lambda: FunctionVerdict(lambda s: len(s.answer) > 2),
                       ReliabilitySample(id="s1", question="Capital?", answer="Paris")),
}


def test_every_evaluator_in_the_package_implements_the_contract() -> None:
    found = set()
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                    "Evaluator" in ast.unparse(b) for b in node.bases) and node.name != "Evaluator":
                found.add(node.name)
    assert {"VragGrader", "Thelma", "RelevanceEvaluator", "PointwiseEvaluator", "PairwiseEvaluator",
            "ReferenceGrader", "ReferenceFreeEvaluator", "RagasFact", "SelfCheckQA", "FunctionVerdict"} <= found
    for cls in (VragGrader, Thelma, RelevanceEvaluator, PointwiseEvaluator, PairwiseEvaluator,
                ReferenceGrader, RagasFact, SelfCheckQA, FunctionVerdict):
        assert issubclass(cls, Evaluator)
        assert inspect.iscoroutinefunction(cls.aevaluate) and not inspect.iscoroutinefunction(cls.evaluate)


def test_no_hand_written_sync_wrapper_outside_the_one_that_derives_them() -> None:
    """Sync forms come from ``synchronous`` (langrag_eval/concurrency), never from a hand-written
    ``*_sync`` function running its coroutine twin (the OpenSearch transport's ``drive_sync`` is a
    real synchronous driver, not a wrapper: it runs no coroutine)."""
    offenders = []
    for path in [*ROOT.rglob("*.py"), *(ROOT.parent / "integrations").rglob("*.py")]:
        if path.parent == ROOT / "concurrency":  # the one helper that derives them
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_sync"):
                calls = {ast.unparse(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}
                if calls & {"run_sync", "asyncio.run", "loop.run_until_complete"}:
                    offenders.append(f"{path.name}:{node.name}")
    assert offenders == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_sync_async_and_batch_forms_agree(name: str) -> None:
    make, sample = CASES[name]
    sync = make().evaluate(sample)
    asynchronous = asyncio.run(make().aevaluate(sample))
    batch = make().evaluate_many([sample])
    assert not isinstance(sync, Unscored)
    assert sync == asynchronous == batch[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_sync_forms_work_inside_a_running_event_loop(name: str) -> None:
    make, sample = CASES[name]

    async def inside() -> object:
        return make().evaluate(sample), make().evaluate_many([sample])[0]

    one, many = asyncio.run(inside())
    assert not isinstance(one, Unscored) and one == many


def test_a_batch_resumes_from_the_store_and_rejudges_only_changed_content(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    model = ScriptedModel(["Score: [[4]], Reason: [[close]]"])
    grader = VragGrader(Judge(model, store=store))
    samples = [Sample(id=f"q{i}", question=f"Question {i}?", answer="An answer.", reference="The label.")
               for i in range(6)]
    store.open_run("vrag", {}, run_id="r1")
    first = grader.evaluate_many(samples, run_id="r1")
    calls = model.calls
    assert calls == 6
    # a fresh judge (empty memory cache) on the same store: everything is read back
    again_model = ScriptedModel(["Score: [[1]], Reason: [[never asked]]"])
    again = VragGrader(Judge(again_model, store=store)).evaluate_many(samples, run_id="r1")
    assert again == first and again_model.calls == 0
    # one answer edited under the same id: that one item, and only it, is judged again
    edited = [*samples[:2], samples[2].model_copy(update={"answer": "Another answer."}), *samples[3:]]
    third = VragGrader(Judge(again_model, store=store)).evaluate_many(edited, run_id="r1")
    assert again_model.calls == 1 and third[2].score == 1 and third[:2] == first[:2]


def test_repeated_ids_in_a_batch_are_refused_in_one_line() -> None:
    grader = VragGrader(_judge(["Score: [[4]], Reason: [[x]]"]))
    twice = [Sample(id="a", question="q", answer="x", reference="y")] * 2
    with pytest.raises(ConfigError, match="repeated: a"):
        grader.evaluate_many(twice)


def test_samples_without_ids_are_keyed_by_content() -> None:
    grader = VragGrader(_judge(["Score: [[4]], Reason: [[x]]"]))
    samples = [Sample(question=f"q{i}", answer="x", reference="y") for i in range(3)]
    assert len({grader.key(s) for s in samples}) == 3
    assert [r.score for r in grader.evaluate_many(samples)] == [4, 4, 4]


def test_a_failing_item_is_unscored_and_the_batch_goes_on() -> None:
    grader = VragGrader(_judge({"BROKEN": "no verdict at all", "": "Score: [[5]], Reason: [[fine]]"}))
    samples = [Sample(id=str(i), question="q", answer="BROKEN" if i == 1 else "fine", reference="y")
               for i in range(3)]
    results = grader.evaluate_many(samples)
    assert [getattr(r, "score", None) for r in results] == [5, None, 5]
    assert isinstance(results[1], Unscored) and results[1].cause == "unparseable"


def test_summaries_share_one_name() -> None:
    grader = VragGrader(_judge(["Score: [[4]], Reason: [[x]]"]))
    results = grader.evaluate_many([Sample(id="a", question="q", answer="x", reference="y")])
    summary = grader.summarize(results)
    assert summary.scores["accept_rate"].mean == 1.0 and summary.details["accept_rate"] == 1.0
    thelma, sample = CASES["thelma"][0](), CASES["thelma"][1]
    summary = thelma.summarize(thelma.evaluate_many([sample]))
    assert summary.scores["rp"].n == 1 and summary.details["metrics"]["rp"]["n"] == 1
    counts = RelevanceEvaluator(_judge(["not json"])).summarize([Unscored(reason="x", cause="unparseable")])
    assert (counts.n, counts.scored, counts.unscored) == (1, 0, {"unparseable": 1})
    assert counts.scores["relevance"].unscored == {"unparseable": 1} and counts.scores["relevance"].mean is None


# The model seam's building blocks exist only as coroutines and keep plain names.
COROUTINE_BUILDING_BLOCKS = {"generate", "ask", "complete", "run_batch", "gather_bounded", "slot"}


def test_public_coroutines_carry_the_a_prefix() -> None:
    """Every public coroutine function (in the ``__all__`` of a module of the README's API table, or a
    public method of a class there) is named ``aname``, except the seam's building blocks; those
    once named otherwise have a synchronous twin derived by ``synchronous``."""
    import importlib
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "docs"))
    from api_table import MODULES

    wrong = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            owners = [(module_name, name, obj)] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                owners = [(obj, attr, value) for attr, value in vars(obj).items() if not attr.startswith("_")]
            for owner, attr, value in owners:
                if not inspect.iscoroutinefunction(value) or attr in COROUTINE_BUILDING_BLOCKS:
                    continue
                label = f"{module_name}: {getattr(owner, '__name__', '')}.{attr}".replace(": .", ": ")
                if not attr.startswith("a"):
                    wrong.append(label)
    assert wrong == [], "name coroutines aname and derive name with runtime.synchronous:\n" + "\n".join(wrong)

    from langrag_eval.grammar import aauthor_templates, author_templates
    from langrag_eval.pipelines import FusionAgent
    from langrag_eval.synth import QueryGenerator
    from langrag_eval.thelma import Decomposer, Matcher, MetaEvaluation
    from langrag_eval.tournament import AdaptiveScheduler

    renamed = [(aauthor_templates, author_templates)] + [
        (getattr(cls, "a" + name), getattr(cls, name)) for cls, names in [
            (QueryGenerator, ["synthesize"]), (Decomposer, ["claims", "questions"]),
            (Matcher, ["source", "essential", "addresses", "supported", "answers"]),
            (MetaEvaluation, ["negative"]), (AdaptiveScheduler, ["run"]), (FusionAgent, ["variations"])]
        for name in names]
    for coroutine, twin in renamed:
        assert inspect.iscoroutinefunction(coroutine) and not inspect.iscoroutinefunction(twin)
        assert (getattr(twin, "__wrapped__", None) is coroutine
                or "synchronous(" in inspect.getsource(inspect.unwrap(twin)))
