"""Every dataset-level entry point runs its items through ``langrag_eval.run.aevaluate``: an executor
passed as ``executor=`` is handed the tournament's documents and games, GRAMMAR's answers and
reference-free samples, the agents' (agent, query) pairs, the meta-evaluation's samples and pairs,
the synthetic-query jobs and the apps' questions, and what it returns is what the entry point
reads. An exception an evaluator raises on one item is that item's ``Unscored`` (cause
``evaluator_error``); the other items finish."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from langrag_eval import Sample
from langrag_eval.grammar import FunctionVerdict, GrammarQuery, ReliabilitySample, aassess_reliability
from langrag_eval.grammar import evaluate_answers
from langrag_eval.grammar.grading import ReferenceGrader
from langrag_eval.pipelines import AgentAnswer, Query, run_agents
from langrag_eval.results import Unscored
from langrag_eval.run import LocalExecutor
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.synth import Passage, QueryGenerator
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval.thelma import MetaEvaluation, Thelma
from langrag_eval.tournament import (
    GameRecord, PairwiseEvaluator, TournamentConfig, TournamentData, run_tournament,
    tournament_over_apps,
)


class Recording(LocalExecutor):
    """Judges locally and records, per task, the samples it was handed and the results it gave."""

    def __init__(self) -> None:
        object.__setattr__(self, "seen", {})

    async def arun(self, evaluator: Any, samples: Any, **options: Any) -> list[Any]:
        results = await super().arun(evaluator, samples, **options)
        self.seen.setdefault(evaluator.task_name(), []).append((list(samples), results, options))
        return results

    def samples(self, task: str) -> list[Any]:
        return [s for batch, _, _ in self.seen.get(task, []) for s in batch]

    def results(self, task: str) -> list[Any]:
        return [r for _, batch, _ in self.seen.get(task, []) for r in batch]


AGENTS = ("x", "y", "z")


def _tournament_data() -> TournamentData:
    return TournamentData.from_records(
        [{"qid": q, "query": f"Who wrote {q}?", "agent": a, "answer": f"{a} says Ada wrote {q}.",
          "documents": [{"id": f"{q}-d{a}", "text": f"Ada wrote {q}."}]}
         for q in ("q1", "q2") for a in AGENTS])


def _tournament_judge() -> Judge:
    def reply(prompt: str) -> str:
        if "relevance" in prompt.lower() and '"relevance"' in prompt:
            return '{"reason": "names it", "relevance": 2}'
        return "[[A]]"
    return Judge(ScriptedModel(reply))


def test_the_tournament_hands_its_documents_and_games_to_the_executor() -> None:
    executor = Recording()
    config = TournamentConfig(tournaments=5, n_boot=0)
    result = run_tournament(_tournament_data(), _tournament_judge(), config, concurrency=3, executor=executor)
    games = executor.samples(PairwiseEvaluator.task)
    expected = {(q, a, b) for q in ("q1", "q2") for a, b in itertools.combinations(AGENTS, 2)}
    assert {(g.qid, g.agent_a, g.agent_b) for g in games} == expected and len(games) == len(expected)
    assert executor.results(PairwiseEvaluator.task) == result.games  # the executor's records are played
    assert {s.document.id for s in executor.samples("tournament/relevance")} == \
        {f"{q}-d{a}" for q in ("q1", "q2") for a in AGENTS}
    assert all(options["concurrency"] == 3 for batches in executor.seen.values() for _, _, options in batches)
    assert result.summary["games"]["played"] == len(expected)


def test_an_adaptive_tournament_plays_every_round_through_the_executor() -> None:
    executor = Recording()
    config = TournamentConfig(schedule="adaptive", adaptive_initial=1, adaptive_batch=1, tournaments=5, n_boot=0)
    result = run_tournament(_tournament_data(), _tournament_judge(), config, executor=executor)
    rounds = result.summary["adaptive"]["rounds"]
    assert len(executor.seen[PairwiseEvaluator.task]) == len(rounds) >= 1
    assert [len(batch) for batch, _, _ in executor.seen[PairwiseEvaluator.task]] == [r["games"] for r in rounds]


def test_a_key_error_on_one_game_is_that_games_unscored_and_the_others_finish(monkeypatch) -> None:
    played = PairwiseEvaluator.aevaluate

    async def faulty(self: PairwiseEvaluator, sample: Any) -> Any:
        if (sample.qid, sample.agent_a, sample.agent_b) == ("q2", "x", "z"):
            return {}["missing"]
        return await played(self, sample)

    monkeypatch.setattr(PairwiseEvaluator, "aevaluate", faulty)
    result = run_tournament(_tournament_data(), _tournament_judge(), TournamentConfig(tournaments=5, n_boot=0))
    missed = [g for g in result.games if isinstance(g, Unscored)]
    assert len(missed) == 1 and missed[0].cause == "evaluator_error" and "KeyError" in missed[0].reason
    assert sum(isinstance(g, GameRecord) for g in result.games) == 5
    assert result.summary["games"]["played"] == 5
    assert any("game x vs z on query 'q2' left out" in m for m in result.summary["left_out"]["messages"])


def test_the_tournament_over_apps_asks_the_apps_through_the_executor() -> None:
    async def short(q: str) -> tuple[str, list[Any]]:
        return "Paris.", []

    async def long(q: str) -> tuple[str, list[Any]]:
        return "Paris, on the Seine.", []

    executor = Recording()
    result = tournament_over_apps({"short": short, "long": long}, ["Capital?", "River?"],
                                  Judge(ScriptedModel(["[[C]]"])), TournamentConfig(tournaments=5, n_boot=0),
                                  executor=executor)
    assert sorted(executor.samples("tournament/answers")) == sorted(
        itertools.product(("q1", "q2"), ("short", "long")))
    assert len(executor.samples(PairwiseEvaluator.task)) == 2 and result.summary["games"]["played"] == 2


# ---------------------------------------------------------------- GRAMMAR

def _grammar() -> tuple[list[GrammarQuery], list[AgentAnswer]]:
    queries = [GrammarQuery(id=f"t1:a/{style}-1", logic_id="t1:a", template_id="t1", text_id=f"{style}-1",
                            style=style, question=f"Where is HQ ({style})?", answer="Lyon", sql="SELECT 1",
                            params={}) for style in ("short", "long")]
    answers = [AgentAnswer(id=q.id, question=q.question, agent=agent, answer=f"Lyon, says {agent}.")
               for agent in ("rag", "fusion") for q in queries]
    return queries, answers


def test_grammar_hands_every_answer_to_the_executor() -> None:
    queries, answers = _grammar()
    executor = Recording()
    free = {"long_enough": FunctionVerdict(lambda s: len(s.answer) > 3)}
    summary = evaluate_answers(queries, answers, ReferenceGrader(Judge(ScriptedModel(["Judgement: [[Correct]]"]))),
                               reference_free=free, executor=executor)
    graded = executor.samples(ReferenceGrader.task)
    assert sorted((p.answer.agent, p.answer.id, p.answer.answer) for p in graded) == \
        sorted((a.agent, a.id, a.answer) for a in answers)
    assert len(executor.samples("grammar/free/long_enough")) == len(answers)
    assert {a: r["scored"] for a, r in summary["agents"].items()} == {"rag": 2, "fusion": 2}
    assert summary["agents"]["rag"]["reference_free"]["long_enough"]["unscored"] == 0


def test_a_key_error_on_one_grammar_answer_is_that_answers_unscored(monkeypatch) -> None:
    queries, answers = _grammar()
    graded = ReferenceGrader.aevaluate

    async def faulty(self: ReferenceGrader, sample: Sample) -> Any:
        if sample.answer == "Lyon, says fusion." and "long" in (sample.question or ""):
            return {}["missing"]
        return await graded(self, sample)

    monkeypatch.setattr(ReferenceGrader, "aevaluate", faulty)
    executor = Recording()
    summary = evaluate_answers(queries, answers, ReferenceGrader(Judge(ScriptedModel(["Judgement: [[Correct]]"]))),
                               executor=executor)
    assert {a: (r["scored"], r["unscored"]) for a, r in summary["agents"].items()} == {"rag": (2, 0), "fusion": (1, 1)}
    missed = [r for r in executor.results(ReferenceGrader.task) if isinstance(r, Unscored)]
    assert [m.cause for m in missed] == ["evaluator_error"] and "KeyError" in missed[0].reason


def test_grammar_stores_its_artifact_and_finishes_the_run(tmp_path) -> None:
    queries, answers = _grammar()
    store = RunStore(str(tmp_path / "runs.sqlite"))
    run_id = store.open_run("grammar", {})
    model = ScriptedModel(lambda prompt: "Judgement: [[Correct]]")
    first = evaluate_answers(queries, answers, ReferenceGrader(Judge(model)), store=store, run_id=run_id)
    calls = len(model.prompts)
    again = evaluate_answers(queries, answers, ReferenceGrader(Judge(model)), store=store, run_id=run_id)
    assert calls == len(answers) and len(model.prompts) == calls and again == first  # read back, not judged
    assert store.get_artifact(run_id, "grammar") == first


def test_reference_free_evaluators_run_through_the_executor() -> None:
    samples = [ReliabilitySample(id=f"s{i}", question="Q?", answer="A" * i, correct=i > 1) for i in range(4)]
    executor = Recording()
    report = aassess_reliability_sync({"long": FunctionVerdict(lambda s: len(s.answer) > 1)}, samples, executor)
    assert executor.samples("grammar/free/long") == samples
    assert report["long"].verdicts == {"s0": False, "s1": False, "s2": True, "s3": True}


def aassess_reliability_sync(evaluators: Any, samples: Any, executor: Any) -> Any:
    import asyncio
    return asyncio.run(aassess_reliability(evaluators, samples, executor=executor))


# ---------------------------------------------------------------- agents, meta-evaluation, synth

class EchoAgent:
    def __init__(self, name: str) -> None:
        self.name = name

    async def arun(self, query: str, *, qid: str | None = None) -> AgentAnswer | Unscored:
        if "fail" in query:
            raise KeyError(query)
        return AgentAnswer(id=qid, question=query, agent=self.name, answer=f"{self.name}: {query}")


def test_the_agents_answer_through_the_executor() -> None:
    executor = Recording()
    queries = [Query(qid="q1", query="Capital?"), Query(qid="q2", query="please fail"), Query(qid="q3", query="River?")]
    runs = run_agents([EchoAgent("a"), EchoAgent("b")], queries, concurrency=2, executor=executor)
    pairs = executor.samples("pipelines/answer")
    assert [(agent.name, q.qid) for agent, q in pairs] == [(r.agent, r.qid) for r in runs]
    assert executor.results("pipelines/answer") == [r.result for r in runs]
    failed = [r for r in runs if not r.ok]
    assert [(r.agent, r.qid, r.result.cause) for r in failed] == [("a", "q2", "evaluator_error"),
                                                                  ("b", "q2", "evaluator_error")]
    assert sum(r.ok for r in runs) == 4


def test_the_meta_evaluation_scores_its_samples_and_pairs_through_the_executor() -> None:
    script = ThelmaScript(essential=lambda key: "blue" not in key[1],
                          rewrite=lambda kind, text: text + " The hall is blue.")
    samples = [Sample(id=f"s{i}", question="Who?", contexts=["Ada."], answer=f"Ada did it {i}.") for i in range(3)]
    executor = Recording()
    meta = MetaEvaluation(Thelma(Judge(script.model())), metrics=("rp",), concurrency=2)
    report = meta.run(samples, executor=executor)
    assert executor.samples(meta.thelma.task_name()) == samples
    assert [(samples[i].id, m) for i, m in executor.samples("thelma/meta")] == [("s0", "rp"), ("s1", "rp"),
                                                                                 ("s2", "rp")]
    assert executor.results("thelma/meta") == report.pairs and report.rows[0].agreement == 1.0


def test_synthetic_queries_are_generated_through_the_executor() -> None:
    executor = Recording()
    model = ScriptedModel(lambda prompt: '{"questions": ["What is it?", "Why?"]}', model_id="m1")
    generator = QueryGenerator([Judge(model)], examples=["Example?"], per_passage=2, concurrency=2)
    passages = [Passage(id=f"p{i}", doc_id="d", text=f"Passage {i} text.", tokens=3) for i in range(3)]
    result = generator.synthesize(passages, executor=executor)
    assert [(p.id, gid) for p, gid in executor.samples("synth/queries")] == [(f"p{i}", "m1") for i in range(3)]
    assert result.report.pool_size == 6


@pytest.mark.parametrize("name", ["concurrency"])
def test_the_entry_points_take_concurrency_not_limit(name: str) -> None:
    import inspect

    from langrag_eval.evaluator import Evaluator
    from langrag_eval.grammar import aauthor_templates, aevaluate_answers, aphrase_templates
    from langrag_eval.pipelines import arun_agents
    from langrag_eval.runtime import gather_bounded, run_batch
    from langrag_eval.tournament import acollect_answers, arun_tournament, atournament_over_apps

    for fn in (Evaluator.aevaluate_many, Evaluator.evaluate_many, run_batch, gather_bounded, arun_tournament,
               atournament_over_apps, acollect_answers, aevaluate_answers, aassess_reliability,
               aauthor_templates, aphrase_templates, arun_agents):
        params = inspect.signature(fn).parameters
        assert name in params and "limit" not in params, fn.__qualname__
    for cls in (MetaEvaluation, QueryGenerator):
        assert name in cls.__dataclass_fields__ and "limit" not in cls.__dataclass_fields__
