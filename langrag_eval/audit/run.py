"""Running a judge audit end to end: sample the batteries, ask the judge, measure, decide, store.

>>> import asyncio, re
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> def reply(prompt):          # a judge that accepts everything and prefers the first answer
...     return "<output>1</output>" if "<claim>" in prompt else (
...         "[[A]]" if "<answer_a>" in prompt else "Score: [[5]], Reason: [[fine]]")
>>> card = run_audit(Judge(ScriptedModel(reply)), max_items=6)
>>> card.measure("pairwise.position_flips").estimate.value, card.verdict("grading").verdict
(1.0, 'unfit')
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..errors import ArgumentError
from ..grading import VragGrade
from ..model import ChatModel, GenerationParams, Reply
from ..results import Unscored
from ..run.evaluation import record_run
from ..runtime import Judge, run_id_for, synchronous
from ..tournament.pairwise import GameRecord
from . import batteries as B
from . import measures as M
from .card import ARTIFACT, USES, JudgeCard, Measure, decide
from .data import AnswerItem, PairItem, load_answers, load_pairs, stratified_sample

__all__ = ["arun_audit", "run_audit", "audit_run_id", "BATTERIES", "TimedModel"]

BATTERIES = ("pairwise", "correctness", "groundedness")


class TimedModel:
    """A model wrapper that records each attempt's latency, tokens and whether it failed; the judge
    runtime's retries call it once per attempt. Everything else is the wrapped model's."""

    def __init__(self, model: ChatModel) -> None:
        self.inner = model
        self.latencies: list[float] = []
        self.tokens: list[int] = []
        self.failures = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        start = time.perf_counter()
        try:
            reply = await self.inner.generate(prompt, params, schema=schema)
        except BaseException:
            self.failures += 1
            raise
        self.latencies.append(time.perf_counter() - start)
        self.tokens.append(reply.usage.prompt_tokens + reply.usage.completion_tokens)
        return reply


CALLS_ARTIFACT = "judge_audit_calls"


def _merge_calls(judge: Judge, run_id: str | None, timed: TimedModel) -> dict[str, Any]:
    """This session's per-call latencies and tokens added to those of earlier sessions of the same
    run (kept as an artifact), so a resumed audit still reports the calls it made before."""
    log: dict[str, Any] = {"latencies": [], "tokens": [], "failures": 0}
    if judge.store is not None and run_id is not None:
        log = judge.store.get_artifact(run_id, CALLS_ARTIFACT) or log
    log = {"latencies": log["latencies"] + timed.latencies, "tokens": log["tokens"] + timed.tokens,
           "failures": log["failures"] + timed.failures}
    if judge.store is not None and run_id is not None:
        record_run(judge.store, run_id, {CALLS_ARTIFACT: log})
    return log


def audit_run_id(judge_id: str, *, max_items: int | None, temperature: float,
                 batteries: Sequence[str] = BATTERIES, seed: int = 0, data: str | None = None,
                 human_col: str | None = None, threshold: int = 4) -> tuple[str, dict[str, Any]]:
    """The run id (and config) of an audit with these settings: the same in the CLI and in the
    quickstart, so either resumes the audit the other began. ``data``: the user file's digest."""
    config = {"judge": judge_id, "max_items": max_items, "temperature": temperature, "batteries": list(batteries),
              "seed": seed, "data": data, "human_col": human_col, "threshold": threshold}
    return run_id_for("judge-audit", config), config


def _stratum(item: AnswerItem) -> object:
    return item.human_score if item.human_score is not None else item.correct


Done = tuple[list[Measure], list[object]]


async def _pairwise(j: Judge, card: JudgeCard, pairs: Sequence[PairItem] | None, max_items: int | None,
                    seed: int) -> Done:
    chosen = stratified_sample(pairs if pairs is not None else load_pairs(), lambda p: str(p.majority),
                               max_items, seed=seed)
    card.items["pairwise"] = len(chosen)
    card.data["pairwise"] = "PandaLM test set (shipped subset)" if pairs is None else "given pairs"
    games = await B.judge_pairs(j, chosen, task="audit/pairwise")
    measures = M.pairwise_measures(chosen, games, seed=seed)
    # pad the worse response of the items the judge decided right when clean
    right = [p for p, g in zip(chosen, games)
             if isinstance(g, GameRecord) and p.majority in ("a", "b") and g.outcome == p.majority]
    worse = {p.id: "b" if p.majority == "a" else "a" for p in right}
    padded = await B.judge_pairs(j, right, task="audit/verbosity", padded=worse)
    measures.append(M.verbosity_measure(right, padded))
    return measures, [*games, *padded]


async def _correctness(j: Judge, card: JudgeCard, answers: Sequence[AnswerItem] | None, max_items: int | None,
                       seed: int, temperature: float, data_name: str | None) -> Done:
    chosen = stratified_sample(answers if answers is not None else load_answers(), _stratum, max_items, seed=seed)
    card.items["correctness"] = len(chosen)
    card.data["correctness"] = data_name or ("HaluEval QA (shipped subset)" if answers is None
                                             else "given items")

    async def probes() -> list[list[VragGrade | Unscored]]:
        repeats = [B.regrade(j, chosen, task="audit/repeat-t0", temperature=0.0, seed=1)]
        if temperature > 0:
            repeats += [B.regrade(j, chosen, task=f"audit/repeat-user-{k}", temperature=temperature, seed=k)
                        for k in (1, 2)]
        return list(await asyncio.gather(*repeats))

    async def graded_then_attacked() -> tuple[list[VragGrade | Unscored], list[VragGrade | Unscored]]:
        grades = await B.grade_answers(j, chosen, task="audit/correctness")
        rejected = [i for i, g in zip(chosen, grades)
                    if not i.correct and isinstance(g, VragGrade) and not g.accepted]
        return grades, await B.inject(j, rejected, task="audit/injection")

    (grades, attacked), repeats = await asyncio.gather(graded_then_attacked(), probes())
    measures = M.correctness_measures(chosen, grades, seed=seed)
    measures.append(M.consistency_measure("grading.consistency_t0", "self-consistency at temperature 0",
                                          grades, repeats[0]))
    if temperature > 0:
        measures.append(M.consistency_measure(
            "grading.consistency_user", f"self-consistency at temperature {temperature:g}", *repeats[1:]))
    measures.append(M.injection_measure(attacked))
    tally: dict[str, Counter[str]] = {}
    for i, g in enumerate(attacked):
        c = tally.setdefault(B.attack_for(i).name, Counter())
        if isinstance(g, VragGrade):
            c["n"] += 1
            c["succeeded"] += int(g.accepted)
    card.attacks = {name: {"n": c["n"], "succeeded": c["succeeded"]} for name, c in tally.items()}
    return measures, [*grades, *(g for r in repeats for g in r), *attacked]


async def _groundedness(j: Judge, card: JudgeCard, max_items: int | None, seed: int) -> Done:
    chosen = stratified_sample(load_answers(), lambda a: a.correct, max_items, seed=seed)
    card.items["groundedness"] = len(chosen)
    card.data["groundedness"] = "HaluEval QA passages (shipped subset)"
    support = await B.judge_support(j, chosen, task="audit/groundedness")
    return M.groundedness_measures(chosen, support, seed=seed), list(support)


async def arun_audit(judge: Judge, *, run_id: str | None = None, max_items: int | None = None,
                temperature: float = 0.7, answers: Sequence[AnswerItem] | None = None,
                pairs: Sequence[PairItem] | None = None, batteries: Sequence[str] = BATTERIES,
                seed: int = 0, data_name: str | None = None) -> JudgeCard:
    """Audit ``judge``: the pairwise battery (PandaLM, with position and verbosity probes), the
    correctness battery (HaluEval answers, or ``answers`` from a user's file, with self-consistency
    and injection probes) and the groundedness battery (HaluEval passages). ``max_items`` caps the items
    per battery, sampled stratified by label. With a run store on the judge and a ``run_id`` every
    judgment is stored as it finishes (a re-run resumes), the card is stored as the ``judge_card``
    artifact and the run is marked finished, so reports of other runs by this judge show the card.
    ``temperature``: the setting the judge is used at, for the
    self-consistency probe (a second one at temperature 0 is always run)."""
    unknown = [b for b in batteries if b not in BATTERIES]
    if unknown:
        raise ArgumentError(f"unknown audit batteries {unknown}; choose from {', '.join(BATTERIES)}")
    if judge.store is not None and run_id is not None and run_id not in {r["id"] for r in judge.store.runs()}:
        # a run the caller opened (the CLI, with its own settings) is used as it is; otherwise made here
        judge.store.open_run("judge-audit", {"judge": judge.model_id, "max_items": max_items, "seed": seed,
                                             "temperature": temperature, "batteries": list(batteries)},
                             run_id, judge=judge.model_id)
    timed = TimedModel(judge.model)
    j = judge.for_run(run_id) if run_id else judge.for_run(judge.run_id)  # type: ignore[arg-type]
    j.model = timed  # type: ignore[assignment]
    before = dict(judge.usage.as_dict())
    start = time.perf_counter()
    card = JudgeCard(judge=judge.model_id, run_id=run_id,
                     settings={"max_items": max_items, "temperature": temperature, "seed": seed,
                               "batteries": list(batteries)})
    # The batteries are independent: run together, the judge's limiter keeps every slot busy
    # instead of idling through each battery's tail.
    jobs = {"pairwise": lambda: _pairwise(j, card, pairs, max_items, seed),
            "correctness": lambda: _correctness(j, card, answers, max_items, seed, temperature, data_name),
            "groundedness": lambda: _groundedness(j, card, max_items, seed)}
    chosen = [b for b in BATTERIES if b in batteries]
    done = await asyncio.gather(*(jobs[b]() for b in chosen))
    measures = card.measures
    results: list[object] = []
    for battery_measures, battery_results in done:
        measures += battery_measures
        results += battery_results
    calls_log = _merge_calls(judge, run_id, timed)
    usage = (judge.store.usage(run_id)["total"] if judge.store is not None and run_id is not None else
             {k: v - before.get(k, 0) if isinstance(v, (int, float)) and before.get(k) is not None else v
              for k, v in judge.usage.as_dict().items()})
    calls = max(1, usage.get("calls", 0) + usage.get("cached", 0))
    per_judgment = calls / max(1, len(results))
    costs = None
    tokens = calls_log["tokens"]
    if usage.get("cost") is not None and tokens and usage.get("calls"):
        # the store keeps the total cost; spread it over calls in proportion to their tokens
        mean_tokens = sum(tokens) / len(tokens)
        costs = [usage["cost"] / usage["calls"] * t / mean_tokens for t in tokens]
    measures += M.reliability_measures(results, calls_log["latencies"], tokens,
                                       attempts=len(calls_log["latencies"]) + calls_log["failures"],
                                       failed_attempts=calls_log["failures"], calls_per_judgment=per_judgment,
                                       cost_per_call=costs, seed=seed)
    card.unscored = dict(Counter(r.cause for r in results if isinstance(r, Unscored)))
    card.usage = usage
    card.seconds = time.perf_counter() - start
    card.verdicts = [decide(use, measures) for use in USES]
    if judge.store is not None and run_id is not None:
        record_run(judge.store, run_id, {ARTIFACT: card.model_dump(mode="json")},
                   finished={v.use: v.verdict for v in card.verdicts})
    return card


run_audit = synchronous(arun_audit)
