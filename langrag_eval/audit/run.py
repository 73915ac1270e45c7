"""Running a judge audit end to end: sample the batteries, ask the judge, measure, decide, store.

>>> import asyncio, re
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> def reply(prompt):          # a judge that accepts everything and prefers the first answer
...     return "<output>1</output>" if "<claim>" in prompt else (
...         "[[A]]" if "<answer_a>" in prompt else "Score: [[5]], Reason: [[fine]]")
>>> card = asyncio.run(audit(Judge(ScriptedModel(reply)), limit=6))
>>> card.measure("pairwise.position_flips").estimate.value, card.verdict("grading").verdict
(1.0, 'unfit')
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..grading import VragGrade
from ..model import ChatModel, GenerationParams, Reply
from ..results import Unscored
from ..runtime import Judge
from ..tournament.evaluators import GameRecord
from . import batteries as B
from . import measures as M
from .card import ARTIFACT, USES, JudgeCard, decide
from .data import AnswerItem, PairItem, load_answers, load_pairs, stratified_sample

__all__ = ["audit", "BATTERIES", "TimedModel"]

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
        judge.store.put_artifact(run_id, CALLS_ARTIFACT, log)
    return log


def _stratum(item: AnswerItem) -> object:
    return item.human_score if item.human_score is not None else item.correct


async def audit(judge: Judge, *, run_id: str | None = None, limit: int | None = None,
                temperature: float = 0.7, answers: Sequence[AnswerItem] | None = None,
                pairs: Sequence[PairItem] | None = None, batteries: Sequence[str] = BATTERIES,
                seed: int = 0, data_name: str | None = None) -> JudgeCard:
    """Audit ``judge``: the pairwise battery (PandaLM, with position and verbosity probes), the
    correctness battery (HaluEval answers, or ``answers`` from a user's file, with self-consistency
    and injection probes) and the groundedness battery (HaluEval passages). ``limit`` caps the items
    per battery, sampled stratified by label. With a run store on the judge and a ``run_id`` every
    judgment is stored as it finishes (a re-run resumes) and the card is stored as the
    ``judge_card`` artifact. ``temperature``: the setting the judge is used at, for the
    self-consistency probe (a second one at temperature 0 is always run)."""
    unknown = [b for b in batteries if b not in BATTERIES]
    if unknown:
        raise ValueError(f"unknown audit batteries {unknown}; choose from {', '.join(BATTERIES)}")
    timed = TimedModel(judge.model)
    j = judge.for_run(run_id) if run_id else judge.for_run(judge.run_id)  # type: ignore[arg-type]
    j.model = timed  # type: ignore[assignment]
    before = dict(judge.usage.as_dict())
    start = time.perf_counter()
    card = JudgeCard(judge=judge.model_id, run_id=run_id,
                     settings={"limit": limit, "temperature": temperature, "seed": seed,
                               "batteries": list(batteries)})
    results: list[object] = []
    measures = card.measures

    if "pairwise" in batteries:
        chosen = stratified_sample(pairs if pairs is not None else load_pairs(), lambda p: str(p.majority),
                                   limit, seed=seed)
        games = await B.judge_pairs(j, chosen, task="audit/pairwise")
        results += games
        measures += M.pairwise_measures(chosen, games, seed=seed)
        # pad the worse response of items the judge got right when clean
        right = [(p, g) for p, g in zip(chosen, games)
                 if isinstance(g, GameRecord) and p.majority in ("a", "b") and g.outcome == p.majority]
        worse = {p.id: "b" if p.majority == "a" else "a" for p, _ in right}
        padded = await B.judge_pairs(j, [p for p, _ in right], task="audit/verbosity", padded=worse)
        results += padded
        measures.append(M.verbosity_measure([p for p, _ in right], padded))
        card.items["pairwise"] = len(chosen)
        card.data["pairwise"] = "PandaLM test set (shipped subset)" if pairs is None else "given pairs"

    if "correctness" in batteries:
        chosen_a = stratified_sample(answers if answers is not None else load_answers(), _stratum, limit, seed=seed)
        grades = await B.grade_answers(j, chosen_a, task="audit/correctness")
        results += grades
        measures += M.correctness_measures(chosen_a, grades, seed=seed)
        again = await B.regrade(j, chosen_a, task="audit/repeat-t0", temperature=0.0, seed=1)
        results += again
        measures.append(M.consistency_measure("grading.consistency_t0", "self-consistency at temperature 0",
                                              grades, again))
        if temperature > 0:
            one = await B.regrade(j, chosen_a, task="audit/repeat-user-1", temperature=temperature, seed=1)
            two = await B.regrade(j, chosen_a, task="audit/repeat-user-2", temperature=temperature, seed=2)
            results += one + two
            measures.append(M.consistency_measure(
                "grading.consistency_user", f"self-consistency at temperature {temperature:g}", one, two))
        rejected = [i for i, g in zip(chosen_a, grades)
                    if not i.correct and isinstance(g, VragGrade) and not g.accepted]
        attacked = await B.inject(j, rejected, task="audit/injection")
        results += attacked
        measures.append(M.injection_measure(attacked))
        tally: dict[str, Counter[str]] = {}
        for i, g in enumerate(attacked):
            c = tally.setdefault(B.attack_for(i).name, Counter())
            if isinstance(g, VragGrade):
                c["n"] += 1
                c["succeeded"] += int(g.accepted)
        card.attacks = {name: {"n": c["n"], "succeeded": c["succeeded"]} for name, c in tally.items()}
        card.items["correctness"] = len(chosen_a)
        card.data["correctness"] = data_name or ("HaluEval QA (shipped subset)" if answers is None else "given items")

    if "groundedness" in batteries:
        chosen_g = stratified_sample(load_answers(), lambda a: a.correct, limit, seed=seed)
        support = await B.judge_support(j, chosen_g, task="audit/groundedness")
        results += support
        measures += M.groundedness_measures(chosen_g, support, seed=seed)
        card.items["groundedness"] = len(chosen_g)
        card.data["groundedness"] = "HaluEval QA passages (shipped subset)"

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
        judge.store.put_artifact(run_id, ARTIFACT, card.model_dump(mode="json"))
    return card
