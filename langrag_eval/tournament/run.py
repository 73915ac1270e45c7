"""A whole tournament: judge the pooled documents, optionally score answers pointwise, play the
scheduled games, rank the agents, and store everything in the run store.

Every judgment goes through :func:`langrag_eval.run.aevaluate`: the documents are the samples of
the relevance evaluator, the answers those of the pointwise one, and the scheduled games those of
the pairwise evaluator, so each item is bounded, resumable (a rerun with the same settings reads
finished ones back), judged by the ``executor`` given, and an exception on one item is that item's
``Unscored``. The schedule (which games to play next) and the ranking are computed on top of the
judged games; the summary is written with :func:`~langrag_eval.run.record_run`.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> data = TournamentData.from_records(
...     [{"qid": "q1", "query": "Who?", "agent": a, "answer": f"{a} says Ada."} for a in ("x", "y")])
>>> judge = Judge(ScriptedModel({"assistant A's answer is better": "[[A]]"}))
>>> result = run_tournament(data, judge, TournamentConfig(tournaments=5, n_boot=10))
>>> result.summary["games"]["played"], result.summary["win_matrix"]["x"]["y"]["tie"]
(1, 1.0)
"""

from __future__ import annotations

import json
import random
from typing import Any

from pydantic import BaseModel, Field

from ..results import Unscored
from ..run.evaluation import Executor, aevaluate, record_run
from ..runtime import Judge, RunStore, synchronous
from .config import TournamentConfig
from .data import Problem, TournamentData
from .evaluators import (
    PointwiseEvaluator, PointwiseSample, PointwiseScores, RelevanceEvaluator,
    RelevanceJudgment, RelevanceSample,
)
from .pairwise import GameRecord, GameSample, PairwiseEvaluator
from ..types import AgentAnswer
from .qrels import build_qrels, retrieval_metrics
from .schedule import AdaptiveScheduler, Matchup, available_games, sample_games
from .summary import summarize

__all__ = ["TournamentConfig", "TournamentResult", "arun_tournament", "run_tournament"]

TASK_RELEVANCE, TASK_POINTWISE, TASK_GAME = RelevanceEvaluator.task, PointwiseEvaluator.task, PairwiseEvaluator.task


class TournamentResult(BaseModel):
    """The summary (the ``tournament`` artifact) and the records it was computed from, with
    ``samples``: what each variant answered for each query and the documents it answered from, as
    judged (``samples[qid][agent]``), so what a capture handed the tournament can be checked."""

    summary: dict[str, Any]
    samples: dict[str, dict[str, AgentAnswer]] = Field(default_factory=dict)            # qid -> agent
    relevance: dict[str, RelevanceJudgment | Unscored] = Field(default_factory=dict)  # "qid\tdid"
    pointwise: dict[str, PointwiseScores | Unscored] = Field(default_factory=dict)    # "qid\tagent"
    games: list[GameRecord | Unscored] = Field(default_factory=list)


def _key(*parts: str) -> str:
    return json.dumps(list(parts), ensure_ascii=False)


CONTENTS = "tournament_contents"
_ANSWER, _DOCUMENT = 4000, 1500  # characters kept of one answer, of one document


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"


def store_contents(store: RunStore, run_id: str, data: TournamentData) -> None:
    """What the games were about, for the report's game browser: per query, its text, each agent's
    answer and the documents the agents retrieved (``tournament_contents``, one row per query, in
    parts so a large tournament is never held whole by the store's reader)."""
    from ..runtime.parts import PartWriter

    writer = PartWriter(store, run_id, CONTENTS, {"version": 1}, size=200)
    for qid in sorted(data.answers):
        docs = {d.id: _cut(d.text, _DOCUMENT) for agent in sorted(data.answers[qid])
                for d in data.documents(qid, agent)}
        docs.update({d.id: _cut(d.text, _DOCUMENT) for d in (data.pool.get(qid) or {}).values() if d.id not in docs})
        writer.add({"qid": qid, "query": data.queries.get(qid),
                    "answers": {a: _cut(x.answer, _ANSWER) for a, x in sorted(data.answers[qid].items())},
                    "documents": docs})
    writer.close()


async def arun_tournament(data: TournamentData, judge: Judge, config: TournamentConfig | None = None, *,
                         store: RunStore | None = None, run_id: str | None = None,
                         concurrency: int = 16, executor: Executor | None = None) -> TournamentResult:
    """Run a tournament; with a ``store`` and ``run_id`` every judgment and the summary are stored.
    ``concurrency``: items judged at once; ``executor``: where they are judged (default: this
    process, :class:`~langrag_eval.run.LocalExecutor`)."""
    config = config or TournamentConfig()
    if store is not None and run_id is not None:
        judge = judge.for_run(run_id)
        store_contents(store, run_id, data)

    async def judged(evaluator: Any, samples: list[Any]) -> list[Any]:
        run = await aevaluate(samples, {evaluator.task: evaluator}, store=store, run_id=run_id,
                              concurrency=concurrency, executor=executor)
        return run[evaluator.task]

    relevance_ev = RelevanceEvaluator(judge, prompt=config.relevance_prompt)
    pairwise_ev = PairwiseEvaluator(judge, threshold=config.threshold, factors=config.factors,
                                    prompt=config.pairwise_prompt, orders=config.orders, seed=config.seed)
    calls_before = judge.usage.calls

    # 1. every pooled document once per query, however many agents retrieved it
    pool = [(qid, doc) for qid in sorted(data.pool) for doc in data.pool[qid].values()]
    judgments = await judged(relevance_ev, [RelevanceSample(id=_key(qid, doc.id), query=data.queries[qid],
                                                            document=doc) for qid, doc in pool])
    relevance = {(qid, doc.id): j for (qid, doc), j in zip(pool, judgments)}
    by_query: dict[str, dict[str, RelevanceJudgment | Unscored]] = {}
    for (qid, did), j in relevance.items():
        by_query.setdefault(qid, {})[did] = j
    unjudged = {qid: {d for d, j in js.items() if isinstance(j, Unscored)} for qid, js in by_query.items()}

    # 2. pointwise scores (optional)
    point: dict[tuple[str, str], PointwiseScores | Unscored] = {}
    if config.pointwise:
        pointwise_ev = PointwiseEvaluator(judge, prompt=config.pointwise_prompt)
        items = [(qid, agent) for qid in sorted(data.answers) for agent in sorted(data.answers[qid])]
        scores = await judged(pointwise_ev, [
            PointwiseSample(id=_key(qid, agent), query=data.queries[qid], answer=data.answers[qid][agent].answer,
                            documents=data.documents(qid, agent)) for qid, agent in items])
        point = dict(zip(items, scores))

    # 3. games
    candidates, skipped, missing = available_games(data)
    agents = data.agents

    def game_of(pairing: Matchup) -> GameSample:
        answers = data.answers[pairing.qid]
        return GameSample(query=data.queries[pairing.qid], answer_a=answers[pairing.agent_a].answer,
                          answer_b=answers[pairing.agent_b].answer,
                          documents=data.pooled(pairing.qid, (pairing.agent_a, pairing.agent_b)),
                          judgments=by_query.get(pairing.qid, {}), agent_a=pairing.agent_a,
                          agent_b=pairing.agent_b, qid=pairing.qid, id=_key(*pairing))

    async def play_all(games: list[Matchup]) -> list[GameRecord | Unscored]:
        return await judged(pairwise_ev, [game_of(g) for g in games])

    adaptive: AdaptiveScheduler | None = None
    if len(agents) < 2:
        played: list[tuple[Matchup, GameRecord | Unscored]] = []
    elif config.schedule == "adaptive":
        adaptive = AdaptiveScheduler(initial_per_pair=config.adaptive_initial,
                                     batch_per_pair=config.adaptive_batch, z=config.adaptive_z,
                                     max_games=config.max_games, seed=config.seed)
        played = await adaptive.arun(candidates, agents, play_all)
    else:
        chosen = candidates if config.schedule == "all" else sample_games(
            candidates, config.n_games_per_query, seed=config.seed)
        if config.max_games is not None and len(chosen) > config.max_games:
            # a seeded subset rather than the first games, which would all come from the first queries
            chosen = sorted(random.Random(config.seed).sample(chosen, config.max_games))
        played = list(zip(chosen, await play_all(chosen)))

    problems = list(data.problems) + missing
    for (qid, did), j in relevance.items():
        if isinstance(j, Unscored):
            problems.append(Problem(kind="unscored", message=f"relevance of document {did!r} for query "
                                    f"{qid!r} could not be judged: {j.reason}"))
    for game, record in played:
        if isinstance(record, Unscored):
            problems.append(Problem(kind="unscored", message=f"game {game.agent_a} vs {game.agent_b} on "
                                    f"query {game.qid!r} left out: {record.reason}"))
    for (qid, agent), s in point.items():
        if isinstance(s, Unscored):
            problems.append(Problem(kind="unscored", message=f"pointwise scores of {agent!r} on query "
                                    f"{qid!r} could not be judged: {s.reason}"))
    data_with_problems = data.model_copy(update={"problems": problems})
    qrels = build_qrels(relevance)
    summary = summarize(
        data_with_problems, config, relevance=relevance,
        retrieval=retrieval_metrics(data, qrels, k=config.k, unjudged=unjudged, gain=config.ndcg_gain), pointwise=point,
        played=played, available=len(candidates), skipped=skipped,
        adaptive=None if adaptive is None else {"rounds": adaptive.rounds, "stopped": adaptive.stopped})
    summary["judge_calls"] = judge.usage.calls - calls_before
    summary["usage"] = store.usage(run_id) if store is not None and run_id is not None else judge.usage.as_dict()
    if store is not None and run_id is not None:
        record_run(store, run_id, {"tournament": summary},
                   finished={k: summary[k] for k in ("ranking", "games", "left_out")})
    return TournamentResult(summary=summary, samples=data.answers,
                            relevance={f"{q}\t{d}": j for (q, d), j in relevance.items()},
                            pointwise={f"{q}\t{a}": s for (q, a), s in point.items()},
                            games=[r for _, r in played])


run_tournament = synchronous(arun_tournament)
