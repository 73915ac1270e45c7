"""Modular evaluation of a RAG system on a GRAMMAR dataset (section 3.3): grade every answer against
the database's answer, group by SQL logic, compute R and Acc overall, per cluster and in the
retrieval-only view, attribute non-robust failures, compare two clusters, and optionally score
reference-free evaluators against the graded truth. The summary is stored as run artifact
``grammar`` (:func:`~langrag_eval.run.record_run`).

Every answer is graded through :func:`langrag_eval.run.aevaluate` (one agent's answers are the
samples of one grading evaluator), so the ``executor`` given judges them, a rerun reads finished
grades back, and an exception on one answer is that answer's ``Unscored``; the groups of variants,
the metrics and the attribution are pure functions on top of the grades.

Artifact ``grammar`` (JSON)::

    {"version": 1,
     "cluster_field": "style",                      # GrammarQuery field the clusters come from
     "agents": {
       "<agent>": {
         "items": 84, "answered": 84, "scored": 82, "unscored": 2,
         "overall":   Metrics,                        # see below
         "retrieval_view": Metrics,                  # wrong answers blamed on the LM removed
         "clusters": {"short": {"all": Metrics, "retrieval_view": Metrics}, "long": {...}},
         "attribution": {"retrieval": 3, "lm": 2, "unknown": 0},
         "comparison": null | {"a": "short", "b": "long", "test": "...", "informative_strata": 4,
                               "statistic": 3.1, "p_value": 0.078, "common_odds_ratio": 4.0,
                               "fisher_p_value": 0.12, "fisher_table": [[9, 1], [5, 5]], "note": null},
         "groups": [{"logic_id": "t1:ab12cd34ef", "template_id": "t1", "kind": "non_robust",
                     "correct": 1, "total": 2}, ...],
         "failures": [{"id": "t1:ab12cd34ef/long-1", "logic_id": "...", "cluster": "long",
                       "attribution": "retrieval"}, ...],
         "reference_free": {"<evaluator>": {"tp": 5, "fp": 3, "fn": 1, "tn": 2, "skipped": 0,
             "precision": Proportion, "recall": Proportion, "unscored": 0}}}},
     "problems": ["answers.jsonl: answer for unknown query id 'x' ignored", ...]}

    Metrics = {"total", "correct", "unscored", "gap_items", "groups": {"gap", "robust",
               "non_robust"}, "gap_share", "robustness", "accuracy"}   (floats or null)
    Proportion = {"successes", "n", "value", "low", "high"}            (95 % Wilson interval)

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.pipelines import AgentAnswer
>>> q = GrammarQuery(id="t1:a/short-1", logic_id="t1:a", template_id="t1", text_id="short-1",
...                  style="short", question="Where is HQ?", answer="Lyon", sql="SELECT 1", params={})
>>> a = AgentAnswer(id=q.id, question=q.question, agent="rag", answer="Lyon.")
>>> grader = ReferenceGrader(Judge(ScriptedModel(["Judgement: [[Correct]]"])))
>>> evaluate_answers([q], [a], grader)["agents"]["rag"]["overall"]["robustness"]
1.0
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ..pipelines import AgentAnswer, Query
from ..results import Unscored
from ..types import Sample
from ..evaluator import FunctionEvaluator
from ..run.evaluation import Executor, aevaluate, record_run
from ..runtime import RunStore, put_item_index, synchronous
from .analysis import (
    ItemResult, attribute_failures, compare_clusters, group_results, metrics, without_lm_failures,
)
from .dataset import GrammarQuery
from .grading import Correctness, ReferenceGrader
from .reliability import ReferenceFreeEvaluator, ReliabilitySample, aassess_reliability

__all__ = ["ARTIFACT", "aevaluate_answers", "as_pipeline_queries", "evaluate_answers"]

ARTIFACT = "grammar"


def as_pipeline_queries(queries: Sequence[GrammarQuery]) -> list[Query]:
    """The dataset as queries for :func:`langrag_eval.pipelines.arun_agents` (qid = query id)."""
    return [Query(qid=q.id, query=q.question) for q in queries]


class _Pair(BaseModel):
    key: str
    query: GrammarQuery
    answer: AgentAnswer | None


async def aevaluate_answers(queries: Sequence[GrammarQuery], answers: Sequence[AgentAnswer],
                           grader: ReferenceGrader, *, cluster_field: str = "style",
                           compare: tuple[str, str] | None = None,
                           reference_free: Mapping[str, ReferenceFreeEvaluator] | None = None,
                           store: RunStore | None = None, run_id: str | None = None,
                           concurrency: int = 16, executor: Executor | None = None) -> dict[str, Any]:
    """Grade and analyse every agent's answers; returns (and stores, given a store and run id) the
    ``grammar`` artifact and finishes the run with each agent's overall metrics. ``compare``
    defaults to ("short", "long") when both clusters exist. ``concurrency``: answers graded at
    once; ``executor``: where they are graded (default: this process)."""
    # A NULL-only answer kept as "unknown" is a true answer (the database holds no value); the
    # other flags mean no single true answer.
    by_id = {q.id: q for q in queries if q.answer is not None and q.flag in (None, "null_answer")}
    problems: list[str] = []
    skipped = len(queries) - len(by_id)
    if skipped:
        problems.append(f"{skipped} flagged quer{'y' if skipped == 1 else 'ies'} (no single true answer) "
                        "left out of grading")
    per_agent: dict[str, dict[str, AgentAnswer]] = defaultdict(dict)
    for a in answers:
        if a.id not in by_id:
            problems.append(f"answer of agent {a.agent!r} for unknown or flagged query id {a.id!r} ignored")
            continue
        per_agent[a.agent][a.id] = a
    summary: dict[str, Any] = {"version": 1, "cluster_field": cluster_field, "agents": {},
                               "problems": problems}
    for agent, answered in per_agent.items():
        pairs = [_Pair(key=f"{agent}/{qid}", query=q, answer=answered.get(qid)) for qid, q in by_id.items()]

        async def grade(pair: _Pair) -> Correctness | Unscored:
            if pair.answer is None:
                return Unscored(reason="the system gave no answer to this query", cause="invalid_input")
            return await grader.aevaluate(Sample(question=pair.query.question, reference=pair.query.answer or "",
                                                    answer=pair.answer.answer))

        if store is not None and run_id is not None:
            # keyed by agent: one index per agent, the cluster as the item's subject
            put_item_index(store, run_id, f"grammar/correct/{agent}",
                           ((p.key, p.query.question, p.query.answer,
                             str(getattr(p.query, cluster_field, None) or "") or None) for p in pairs))
        grading = FunctionEvaluator(grade, grader.task, Correctness, key_of=lambda p: p.key,
                                    description=f"grading {agent}", scorer=grader)
        grades = (await aevaluate(pairs, {"grammar": grading}, store=store, run_id=run_id,
                                  concurrency=concurrency, executor=executor))["grammar"]
        items = [ItemResult(id=p.query.id, logic_id=p.query.logic_id,
                            cluster=str(getattr(p.query, cluster_field, None)),
                            correct=None if isinstance(g, Unscored) else g.correct,
                            doc_ids=tuple(d.id for d in p.answer.contexts) if p.answer else ())
                 for p, g in zip(pairs, grades)]
        report = _analyse(items, pairs, compare)
        if reference_free:
            samples = [ReliabilitySample(id=p.key, question=p.query.question, answer=p.answer.answer,
                                         documents=p.answer.contexts, correct=i.correct)
                       for p, i in zip(pairs, items) if p.answer is not None]
            free = await aassess_reliability(reference_free, samples, store=store, run_id=run_id,
                                             concurrency=concurrency, executor=executor)
            report["reference_free"] = {
                name: {**r.reliability.model_dump(mode="json"), "unscored": r.unscored}
                for name, r in free.items()}
        summary["agents"][agent] = report
    if store is not None and run_id is not None:
        record_run(store, run_id, {ARTIFACT: summary},
                   finished={a: r["overall"] for a, r in summary["agents"].items()})
    return summary


def _analyse(items: list[ItemResult], pairs: list[_Pair], compare: tuple[str, str] | None) -> dict[str, Any]:
    groups = group_results(items)
    kinds = {g.logic_id: g.kind for g in groups}
    retrieval_items = without_lm_failures(items)
    # With the LM's failures removed, a group may turn robust: regroup for the retrieval view.
    retrieval_kinds = {g.logic_id: g.kind for g in group_results(retrieval_items)}
    attribution = attribute_failures(items)
    clusters = sorted({i.cluster for i in items if i.cluster is not None})
    template_of = {p.query.logic_id: p.query.template_id for p in pairs}
    if compare is None and {"short", "long"} <= set(clusters):
        compare = ("short", "long")
    comparison = None
    if compare is not None and set(compare) <= set(clusters):
        comparison = compare_clusters(items, *compare).model_dump(mode="json")
    by_id = {i.id: i for i in items}
    return {
        "items": len(items),
        "answered": sum(1 for p in pairs if p.answer is not None),
        "scored": sum(1 for i in items if i.correct is not None),
        "unscored": sum(1 for i in items if i.correct is None),
        "overall": metrics(items).model_dump(mode="json"),
        "retrieval_view": metrics(retrieval_items, kinds=retrieval_kinds).model_dump(mode="json"),
        "clusters": {c: {"all": metrics(items, kinds=kinds, cluster=c).model_dump(mode="json"),
                         "retrieval_view": metrics(retrieval_items, kinds=retrieval_kinds,
                                                   cluster=c).model_dump(mode="json")}
                     for c in clusters},
        "attribution": {k: Counter(attribution.values()).get(k, 0) for k in ("retrieval", "lm", "unknown")},
        "comparison": comparison,
        "groups": [{"logic_id": g.logic_id, "template_id": template_of.get(g.logic_id), "kind": g.kind,
                    "correct": g.correct, "total": g.total} for g in groups],
        "failures": [{"id": k, "logic_id": by_id[k].logic_id, "cluster": by_id[k].cluster, "attribution": v}
                     for k, v in attribution.items()],
    }


evaluate_answers = synchronous(aevaluate_answers)
