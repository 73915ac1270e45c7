"""One sample type and one way to run a dataset: ``Sample`` reads contexts in every shape an app hands
them over (a lone text is one context; one that is not text is kept as the sample's reason, not
raised), and ``langrag_eval.run.evaluate`` runs any evaluators over samples with one concurrency,
one store and run, and an executor seam."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from langrag_eval import Evaluator, Sample
from langrag_eval.errors import ConfigError
from langrag_eval.grading import VragGrader
from langrag_eval.results import Unscored
from langrag_eval.run import LocalExecutor, RunResult, evaluate, record_run
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.types import AgentAnswer, Document

texts = st.text(alphabet="abc xyz.", min_size=1, max_size=12).filter(str.strip)


@settings(max_examples=40, deadline=None)
@given(contexts=st.lists(texts, max_size=6))
def test_contexts_in_every_shape_read_as_the_same_texts(contexts: list[str]) -> None:
    as_dicts = [{"page_content": t} for t in contexts]
    as_text_dicts = [{"text": t, "id": f"d{i}"} for i, t in enumerate(contexts)]
    as_docs = [Document(id=f"d{i}", text=t) for i, t in enumerate(contexts)]
    for shape in (contexts, tuple(contexts), as_dicts, as_text_dicts, as_docs):
        s = Sample(question="q", contexts=shape)
        assert s.context_texts() == contexts and s.invalid_contexts is None
    assert Sample(contexts=as_docs).contexts == as_docs  # documents kept as they are, ids included


@given(text=texts)
def test_a_lone_text_is_one_context_never_one_per_character(text: str) -> None:
    assert Sample(contexts=text).context_texts() == [text]
    assert Sample(contexts={"text": text}).context_texts() == [text]


def test_blank_contexts_are_kept_they_were_retrieved() -> None:
    assert Sample(contexts=["a", "", " "]).context_texts() == ["a", "", " "]


@pytest.mark.parametrize("bad,where", [(["ok", 3], "context 2 is int"), ([None], "context 1 is NoneType"),
                                       ([{"title": "no text"}], "context 1 is dict"), (7, "contexts is int")])
def test_a_context_that_is_not_text_is_kept_as_the_reason(bad: Any, where: str) -> None:
    s = Sample(question="q", answer="a", contexts=bad)
    assert s.contexts == [] and s.invalid_contexts is not None and s.invalid_contexts.startswith(where)


def test_the_key_is_the_id_else_a_digest_that_tells_invalid_contexts_apart() -> None:
    assert Sample(id="x", question="q").key() == "x"
    same = Sample(question="q", contexts=["a"], answer="b")
    assert same.key() == Sample(question="q", contexts=[{"text": "a"}], answer="b").key()
    assert Sample(question="q", contexts=[1]).key() != Sample(question="q", contexts=[[2]]).key()


def test_an_agent_answer_is_a_sample() -> None:
    a = AgentAnswer(id="q1", question="Q?", agent="rag-bm25", answer="A.", contexts=["p"])
    assert isinstance(a, Sample) and a.context_texts() == ["p"] and a.variations == []


# ---------------------------------------------------------------- the run entry point

class Seen(BaseModel):
    text: str


class Slow(Evaluator[Sample, Seen]):
    """Counts the items in flight; raises KeyError on a question it has no entry for."""

    task, result_type = "slow", Seen

    def __init__(self, known: set[str]) -> None:
        self.known, self.now, self.most = known, 0, 0

    async def aevaluate(self, sample: Sample) -> Seen | Unscored:
        self.now += 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(0.01)
        self.now -= 1
        return Seen(text={q: q for q in self.known}[sample.question])


def _samples(n: int) -> list[Sample]:
    return [Sample(id=f"q{i}", question=f"question {i}", answer="Paris.", reference="Paris") for i in range(n)]


@pytest.mark.parametrize("concurrency", [1, 2, 5])
def test_concurrency_bounds_the_items_in_flight(concurrency: int) -> None:
    samples = _samples(12)
    slow = Slow({s.question for s in samples})
    run = evaluate(samples, slow, concurrency=concurrency)
    assert slow.most == concurrency and [r.text for r in run["slow"]] == [s.question for s in samples]


class Finishing(Evaluator[Sample, Seen]):
    """One judge call per sample, then a while finishing it (reading, storing): records, at each
    call the model starts, whether some sample was still finishing."""

    task, result_type = "finishing", Seen

    def __init__(self, judge: Judge) -> None:
        self.judge, self.finishing, self.calls_while_finishing = judge, 0, []

    def for_judge(self, judge: Judge) -> "Finishing":
        return self

    async def aevaluate(self, sample: Sample) -> Seen | Unscored:
        reply = await self.judge.complete(f"judge {sample.question}")
        self.finishing += 1
        await asyncio.sleep(0.02)
        self.finishing -= 1
        return Seen(text=reply.text)


def test_samples_are_read_ahead_so_a_freed_slot_never_waits_for_a_sample_to_finish() -> None:
    finishing: list[Finishing] = []

    class Watched(ScriptedModel):
        async def generate(self, prompt: str, params: Any, *, schema: Any = None) -> Any:
            finishing[0].calls_while_finishing.append((finishing[0].finishing, self.in_flight))
            return await super().generate(prompt, params, schema=schema)

    model = Watched(["ok"], latency=0.01)
    finishing.append(Finishing(Judge(model, concurrency=3)))
    run = evaluate(_samples(30), finishing[0], concurrency=3)
    assert [r.text for r in run["finishing"]] == ["ok"] * 30
    # the judge's limit still holds the calls; and while samples finish, every slot is in use: a
    # call starts beside two others (the scheduler kept only 3 samples in flight before, so a
    # sample finishing left at most 2 calls)
    assert model.peak_concurrency == 3
    assert any(busy and calls == 2 for busy, calls in finishing[0].calls_while_finishing)


def test_a_concurrency_below_the_judges_is_not_exceeded_by_reading_ahead() -> None:
    model = ScriptedModel(["ok"], latency=0.01)
    run = evaluate(_samples(12), Finishing(Judge(model, concurrency=16)), concurrency=2)
    assert len(run["finishing"]) == 12 and model.peak_concurrency == 2


def test_only_a_judge_that_limits_its_calls_is_read_ahead_of() -> None:
    from types import SimpleNamespace

    from langrag_eval.run.batch import in_flight

    unlimited = Finishing(Judge(ScriptedModel(["ok"])))
    unlimited.judge = SimpleNamespace(concurrency=4)  # a judge of the user's own: no limiter to wait at
    assert in_flight(unlimited, None) == 4 and in_flight(Finishing(Judge(ScriptedModel(["ok"]), concurrency=4)), None) == 8


def test_an_evaluator_error_is_that_items_unscored_and_every_evaluator_runs() -> None:
    samples = _samples(4)
    grader = VragGrader(Judge(ScriptedModel(lambda prompt: "Score: [[5]], Reason: [[ok]]")))
    run = evaluate(samples, [grader, Slow({"question 0", "question 2"})])
    assert isinstance(run, RunResult) and set(run.results) == {"vrag", "slow"}
    assert [g.score for g in run["vrag"]] == [5, 5, 5, 5]
    missed = [r for r in run["slow"] if isinstance(r, Unscored)]
    assert [r.cause for r in missed] == ["evaluator_error"] * 2 and "KeyError" in missed[0].reason
    assert run.summary("vrag").n == 4 and run.summary("vrag").details["items"] == 4


def test_a_run_in_the_store_resumes_without_judging_again(tmp_path: Path) -> None:
    model = ScriptedModel(lambda prompt: "Score: [[4]], Reason: [[close]]")
    store = RunStore(str(tmp_path / "runs.sqlite"))
    run_id = store.open_run("vrag", {})
    first = evaluate(_samples(3), VragGrader(Judge(model)), store=store, run_id=run_id)
    calls = len(model.prompts)
    again = evaluate(_samples(3), VragGrader(Judge(model)), store=store, run_id=run_id)
    assert len(model.prompts) == calls == 3 and again["vrag"] == first["vrag"]
    record_run(store, run_id, {"vrag": again.summary("vrag")}, finished={"items": 3})
    assert store.get_artifact(run_id, "vrag")["items"] == 3


def test_the_judge_given_replaces_each_evaluators_own() -> None:
    used = ScriptedModel(lambda prompt: "Score: [[2]], Reason: [[no]]")
    unused = ScriptedModel(lambda prompt: "Score: [[5]], Reason: [[yes]]")
    run = evaluate(_samples(2), VragGrader(Judge(unused)), judge=Judge(used))
    assert [g.score for g in run["vrag"]] == [2, 2] and unused.prompts == []


def test_the_executor_judges_the_items() -> None:
    class Recording(LocalExecutor):
        calls: list[tuple[str, int | None]] = []

        async def arun(self, evaluator: Any, samples: Any, **options: Any) -> list[Any]:
            self.calls.append((evaluator.task, options["concurrency"]))
            return await super().arun(evaluator, samples, **options)

    samples = _samples(2)
    run = evaluate(samples, {"a": Slow({"question 0", "question 1"})}, concurrency=3, executor=Recording())
    assert Recording.calls == [("slow", 3)] and [r.text for r in run["a"]] == ["question 0", "question 1"]


def test_configuration_errors_raise() -> None:
    with pytest.raises(ConfigError, match="no evaluator"):
        evaluate(_samples(1), [])
    with pytest.raises(ConfigError, match="concurrency"):
        evaluate(_samples(1), Slow(set()), concurrency=0)
    with pytest.raises(ConfigError, match="two evaluators are named 'slow'"):
        evaluate(_samples(1), [Slow(set()), Slow(set())])
