"""The ``tournament`` artifact: what a tournament found, as plain JSON for the run store and report.

Shape (every number a float or int; ``null`` where undefined, never NaN)::

    {
      "agents": ["fusion-bm25", ...],
      "config": {...TournamentConfig...},
      "ranking": [                                   # best first, by Bradley-Terry rating
        {"rank": 1, "agent": "fusion-bm25",
         "bt_rating": 1061.2, "bt_low": 1040.0, "bt_high": 1083.9,   # Elo scale, bootstrap interval
         "elo": 1052.3, "elo_std": 9.1, "elo_low": 1034.8, "elo_high": 1069.5,
         "wins": 120, "ties": 60, "losses": 20}, ...],
      "bradley_terry": {"theta": {agent: log-strength}, "level": 0.95, "n_boot": 200,
                        "regularised": false},
      "elo_table": [{"rank", "agent", "elo", "std", "low", "high"}, ...],   # the paper's Table 6
      "win_matrix": {agent: {opponent: {"games", "win", "tie", "loss"},     # the paper's Table 5
                             "average": {"win"}}},
      "retrieval": {"k": 5, "attributed": true, "documents_judged": 812, "documents_unscored": 0,
                    "levels": {"0": 301, "1": 250, "2": 261},
                    "per_agent": {agent: {"queries", "mrr": {"somewhat", "very"}, "ndcg", "ndcg_gain",
                                          "ndcg_undefined", "unjudged_in_top_k"}}},   # Table 4
      "pointwise": null | {"criteria": [...], "scored": n, "unscored": n,
                           "means": {agent: {criterion: mean}},
                           "t_tests": [{"agent_a", "agent_b", "criterion", "n", "mean_difference",
                                        "t", "p", "note"}]},
      "games": {"available": n, "scheduled": n, "played": n, "unscored": n,
                "skipped_missing_answer": n, "orders": 1 | 2, "consistent": n, "position_flips": n},
      "adaptive": null | {"rounds": [{"games", "total", "ranking", "unsettled"}], "stopped": "settled"},
      "left_out": {"counts": {kind: n}, "messages": [...], "truncated": n},
      "judge_calls": n, "usage": {...}
    }

>>> "ranking" in SHAPE_KEYS and "win_matrix" in SHAPE_KEYS
True
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ..files.terminal import shown
from ..results import Unscored
from ..stats.significance import paired_t_test
from .data import TournamentData
from .evaluators import CRITERIA, PointwiseScores, RelevanceJudgment
from .pairwise import GameRecord
from .ranking import bradley_terry_intervals, elo_ratings, elo_table, outcome_counts, win_matrix

__all__ = ["SHAPE_KEYS", "summarize", "format_summary"]

SHAPE_KEYS = ("agents", "config", "ranking", "bradley_terry", "elo_table", "win_matrix", "retrieval",
              "pointwise", "games", "adaptive", "left_out", "judge_calls", "usage")


def _pointwise(data: TournamentData, point: Mapping[tuple[str, str], PointwiseScores | Unscored]
               ) -> dict[str, Any] | None:
    if not point:
        return None
    scored = {k: v for k, v in point.items() if isinstance(v, PointwiseScores)}
    means: dict[str, dict[str, float | None]] = {}
    for agent in data.agents:
        mine = [v for (q, a), v in scored.items() if a == agent]
        means[agent] = {c: (sum(getattr(v, c) for v in mine) / len(mine) if mine else None) for c in CRITERIA}
    tests = []
    for x, y in itertools.combinations(data.agents, 2):
        shared = sorted(q for (q, a) in scored if a == x and (q, y) in scored)
        for c in CRITERIA:
            t = paired_t_test([getattr(scored[(q, x)], c) for q in shared],
                              [getattr(scored[(q, y)], c) for q in shared])
            tests.append({"agent_a": x, "agent_b": y, "criterion": c, "n": t.n,
                          "mean_difference": t.mean_difference, "t": t.t, "p": t.p, "note": t.note})
    return {"criteria": list(CRITERIA), "scored": len(scored), "unscored": len(point) - len(scored),
            "means": means, "t_tests": tests}


def summarize(data: TournamentData, config: Any, *, relevance: Mapping[tuple[str, str], Any],
                  retrieval: dict[str, Any], pointwise: Mapping[tuple[str, str], Any],
                  played: Sequence[tuple[Any, GameRecord | Unscored]], available: int, skipped: int,
                  adaptive: dict[str, Any] | None) -> dict[str, Any]:
    agents = data.agents
    records = [r for _, r in played if isinstance(r, GameRecord)]
    games = [(r.agent_a, r.agent_b, r.score_a) for r in records]
    ranking: list[dict[str, Any]] = []
    bt: dict[str, Any] = {"theta": {}, "level": config.level, "n_boot": 0, "regularised": False}
    elo_rows: list[dict[str, Any]] = []
    matrix: dict[str, Any] = {}
    if len(agents) >= 2:
        elo = elo_ratings(games, agents, k=config.elo_k, initial=config.initial,
                          tournaments=config.tournaments, seed=config.seed)
        fit = bradley_terry_intervals(games, agents, [r.qid for r in records], n_boot=config.n_boot,
                                      level=config.level, seed=config.seed, initial=config.initial)
        counts = outcome_counts(games, agents)
        for i, agent in enumerate(sorted(agents, key=lambda a: -fit.fit.rating[a])):
            totals = {k: sum(c[k] for c in counts[agent].values()) for k in ("win", "tie", "loss")}
            ranking.append({"rank": i + 1, "agent": agent, "bt_rating": fit.fit.rating[agent],
                            "bt_low": fit.low[agent], "bt_high": fit.high[agent], "elo": elo.mean[agent],
                            "elo_std": elo.std[agent], "elo_low": elo.low[agent], "elo_high": elo.high[agent],
                            "wins": totals["win"], "ties": totals["tie"], "losses": totals["loss"]})
        bt = {"theta": fit.fit.theta, "level": fit.level, "n_boot": fit.n_boot,
              "regularised": fit.fit.regularised}
        elo_rows = elo_table(elo)
        matrix = win_matrix(games, agents)
    levels = {"0": 0, "1": 0, "2": 0}
    for j in relevance.values():
        if isinstance(j, RelevanceJudgment):
            levels[str(j.relevance)] += 1
    return {
        "agents": agents,
        "config": config.model_dump(),
        "ranking": ranking,
        "bradley_terry": bt,
        "elo_table": elo_rows,
        "win_matrix": matrix,
        "retrieval": {"k": config.k, "attributed": data.attributed, "documents_judged": sum(levels.values()),
                      "documents_unscored": sum(isinstance(j, Unscored) for j in relevance.values()),
                      "levels": levels, "per_agent": retrieval},
        "pointwise": _pointwise(data, pointwise),
        "games": {"available": available, "scheduled": len(played), "played": len(records),
                  "unscored": len(played) - len(records), "skipped_missing_answer": skipped,
                  "orders": config.orders, "consistent": sum(r.consistent for r in records),
                  "position_flips": sum(not r.consistent for r in records)},
        "adaptive": adaptive,
        "left_out": data.summary_of_problems(),
    }


def rank_labels(ranking: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ranks as printed, best first: agents whose ratings print alike share the rank of the first
    of them, marked as a tie (``=1``, ``=1``, ``3``), so equal ratings never read as an order.

    >>> rank_labels([{"bt_rating": 1000.0}, {"bt_rating": 1000.01}, {"bt_rating": 950.0}])
    ['=1', '=1', '3']
    """
    shown = [round(float(r["bt_rating"]), 1) for r in ranking]
    return [f"={shown.index(v) + 1}" if shown.count(v) > 1 else str(shown.index(v) + 1) for v in shown]


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_summary(summary: Mapping[str, Any]) -> str:
    """Plain-text tables for the terminal: ranking with intervals, win matrix, MRR@k, left out."""
    out: list[str] = []
    ranking = summary["ranking"]
    if ranking:
        level = round(summary["bradley_terry"]["level"] * 100)
        # names as the terminal shows them (controls escaped), so the columns line up
        width = max(len(shown(r["agent"])) for r in ranking)
        out.append(f"Ranking (Bradley-Terry, Elo scale, {level}% bootstrap interval; Elo mean of "
                   f"{summary['config']['tournaments']} tournaments; BT: Bradley-Terry rating, W-T-L: "
                   f"games won, tied, lost):")
        out.append(f"  {'#':>2}  {'agent':<{width}}  {'BT':>7}  {'interval':>17}  {'Elo':>7}  {'W-T-L':>11}")
        for r, label in zip(ranking, rank_labels(ranking)):
            out.append(f"  {label:>2}  {shown(r['agent']):<{width}}  {r['bt_rating']:7.1f}  "
                       f"[{r['bt_low']:7.1f}, {r['bt_high']:7.1f}]  {r['elo']:7.1f}  "
                       f"{r['wins']}-{r['ties']}-{r['losses']:<}")
        agents = [r["agent"] for r in ranking]
        out.append("")
        out.append("Win share of row agent against column agent (win/tie/loss):")
        col = max(12, max(len(shown(a)) for a in agents))
        out.append("  " + " " * width + "".join(f"  {shown(a):>{col}}" for a in agents))
        for x in agents:
            cells = []
            for y in agents:
                c = summary["win_matrix"][x].get(y)
                text = "-" if c is None else "{:.0%}/{:.0%}/{:.0%}".format(c["win"], c["tie"], c["loss"])
                cells.append(f"  {text:>{col}}")
            out.append(f"  {shown(x):<{width}}" + "".join(cells))
    else:
        out.append("No ranking: fewer than two agents with valid answers.")
    retrieval = summary["retrieval"]
    out.append("")
    if retrieval["per_agent"]:
        k = retrieval["k"]
        gains = {m.get("ndcg_gain", "exponential") for m in retrieval["per_agent"].values()}
        out.append(f"Retrieval (LLM-judged qrels): MRR@{k} somewhat (>=1), very (>=2), "
                   f"nDCG@{k} ({'/'.join(sorted(gains))} gain):")
        out.append(f"  (MRR@{k}: mean reciprocal rank of the first relevant document in the top {k}; "
                   f"nDCG@{k}: normalised discounted cumulative gain of the top {k})")
        for agent, m in sorted(retrieval["per_agent"].items()):
            out.append(f"  {shown(agent)}: {_f(m['mrr']['somewhat'])}  {_f(m['mrr']['very'])}  {_f(m['ndcg'])}")
    else:
        out.append("Retrieval: documents are not attributed to agents (no agent column); no MRR per agent.")
    g = summary["games"]
    out.append("")
    how = (f"{g['position_flips']} with verdicts that changed with the order, counted as ties"
           if g.get("orders", 2) == 2 else "each judged in one order, the answer shown first chosen by a "
           "seeded coin, as in the RAGElo paper's Table 5")
    out.append(f"Games: {g['played']} played ({how}), {g['unscored']} unscored, {g['skipped_missing_answer']} "
               f"skipped for a missing answer. Judge calls: {summary.get('judge_calls', '-')}.")
    left = summary["left_out"]
    if left["counts"]:
        out.append("Left out: " + ", ".join(f"{n} {kind}" for kind, n in sorted(left["counts"].items())))
        out.extend(f"  {shown(m)}" for m in left["messages"][:10])
        more = len(left["messages"]) - 10 + left["truncated"]
        if more > 0:
            out.append(f"  ... and {more} more (all in the run store's tournament artifact)")
    return "\n".join(out)
