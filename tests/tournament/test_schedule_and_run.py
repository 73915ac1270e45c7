"""Scheduling (sampled and adaptive), seeded reproducibility, pointwise significance."""

from __future__ import annotations

import random

import pytest
from tournament_helpers import marker_judge, records

from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.tournament import (
    AdaptiveScheduler, GameRecord, Matchup, TournamentConfig, TournamentData, available_games,
    arun_tournament, sample_games,
)


def test_sample_games_is_seeded_and_bounded(three_agents) -> None:
    games, skipped, _ = available_games(three_agents)
    assert len(games) == 9 and skipped == 0
    one = sample_games(games, 2, seed=1)
    assert one == sample_games(games, 2, seed=1)
    assert all(sum(g.qid == q for g in one) == 2 for q in ("q0", "q1", "q2"))
    assert any(sample_games(games, 2, seed=s) != one for s in range(2, 8))


def _simulated_play(strength: dict[str, float], seed: int = 0):
    rng = random.Random(seed)

    async def play(batch: list[Matchup]) -> list[GameRecord]:
        out = []
        for g in batch:
            p = 1 / (1 + 10 ** ((strength[g.agent_b] - strength[g.agent_a]) / 400))
            win = rng.random() < p
            out.append(GameRecord(qid=g.qid, agent_a=g.agent_a, agent_b=g.agent_b,
                                  outcome="a" if win else "b", forward="A" if win else "B",
                                  backward="B" if win else "A"))
        return out
    return play


async def test_adaptive_scheduler_settles_clear_rankings_with_fewer_games() -> None:
    agents = ["a", "b", "c", "d"]
    games = [Matchup(f"q{q}", x, y) for q in range(150) for i, x in enumerate(agents) for y in agents[i + 1:]]
    strength = {"a": 0.0, "b": 200.0, "c": 400.0, "d": 600.0}
    sched = AdaptiveScheduler(initial_per_pair=5, batch_per_pair=5, seed=0)
    played = await sched.arun(games, agents, _simulated_play(strength))
    assert sched.stopped == "settled"
    assert len(played) < len(games) / 3
    assert sched.rounds[-1]["ranking"] == ["d", "c", "b", "a"]
    assert len({(g.qid, g.agent_a, g.agent_b) for g, _ in played}) == len(played)   # no game twice


async def test_adaptive_scheduler_stops_when_equal_agents_exhaust_their_queries() -> None:
    agents = ["a", "b"]
    games = [Matchup(f"q{q}", "a", "b") for q in range(30)]
    sched = AdaptiveScheduler(initial_per_pair=10, batch_per_pair=10, z=50.0)
    played = await sched.arun(games, agents, _simulated_play({"a": 0.0, "b": 0.0}))
    assert sched.stopped == "exhausted" and len(played) == 30
    budget = AdaptiveScheduler(initial_per_pair=10, batch_per_pair=10, z=50.0, max_games=15)
    assert len(await budget.arun(games, agents, _simulated_play({"a": 0.0, "b": 0.0}))) == 15
    assert budget.stopped == "budget"


async def test_seeded_tournament_is_reproducible_and_ranks_by_quality(three_agents) -> None:
    config = TournamentConfig(tournaments=50, n_boot=50, seed=4, schedule="sample", n_games_per_query=2)
    one = await arun_tournament(three_agents, Judge(ScriptedModel(marker_judge)), config)
    two = await arun_tournament(three_agents, Judge(ScriptedModel(marker_judge)), config)
    assert one.summary["ranking"] == two.summary["ranking"]
    assert one.summary["elo_table"] == two.summary["elo_table"]
    assert [r.model_dump() for r in one.games] == [r.model_dump() for r in two.games]
    assert one.summary["games"]["played"] == 6
    full = await arun_tournament(three_agents, Judge(ScriptedModel(marker_judge)),
                                TournamentConfig(tournaments=50, n_boot=50))
    assert [r["agent"] for r in full.summary["ranking"]] == ["strong", "middle", "weak"]
    assert full.summary["win_matrix"]["strong"]["weak"]["win"] == 1.0
    elo = {r["agent"]: r["elo"] for r in full.summary["ranking"]}
    assert elo["strong"] > elo["middle"] > elo["weak"]
    assert sum(elo.values()) == pytest.approx(3000.0)


async def test_adaptive_schedule_through_the_runner(three_agents) -> None:
    data = TournamentData.from_records(records({"strong": 3, "middle": 2, "weak": 1}, queries=30, docs=1))
    model = ScriptedModel(marker_judge)
    result = await arun_tournament(data, Judge(model), TournamentConfig(
        schedule="adaptive", adaptive_initial=3, adaptive_batch=3, tournaments=20, n_boot=20))
    s = result.summary
    assert s["adaptive"]["stopped"] in {"settled", "exhausted"}
    assert s["games"]["played"] < s["games"]["available"] == 90
    assert [r["agent"] for r in s["ranking"]] == ["strong", "middle", "weak"]


async def test_pointwise_t_tests_in_summary() -> None:
    data = TournamentData.from_records(records({"good": 2, "poor": 0}, queries=4, docs=1)
                                       + [{"qid": "q9", "query": "?", "agent": "good", "answer": "quality=1"}])
    result = await arun_tournament(data, Judge(ScriptedModel(marker_judge)),
                                  TournamentConfig(pointwise=True, tournaments=10, n_boot=10))
    p = result.summary["pointwise"]
    assert p["means"]["good"]["relevance"] == pytest.approx((2 * 4 + 1) / 5)
    rel = next(t for t in p["t_tests"] if t["criterion"] == "relevance")
    assert rel["n"] == 4 and rel["mean_difference"] == 2.0 and rel["t"] is None   # constant differences
    assert "constant" in rel["note"]


async def test_adaptive_budget_is_never_exceeded_when_common_opponents_are_played() -> None:
    agents = ["a", "b", "c"]
    games = [Matchup(f"q{q}", x, y) for q in range(12) for x, y in (("a", "b"), ("a", "c"), ("b", "c"))]
    for budget in range(4, 37, 3):
        sched = AdaptiveScheduler(initial_per_pair=1, batch_per_pair=5, z=50.0, max_games=budget)
        played = await sched.arun(games, agents, _simulated_play({"a": 0.0, "b": 0.0, "c": 0.0}))
        assert len(played) == min(budget, len(games))
    # once a-b has no direct query left, both play the common opponent nearest in the ranking
    routes = AdaptiveScheduler._routes(("a", "b"), ["a", "b", "c", "d"],
                                       {("a", "b"): [], ("a", "c"): ["q1"], ("b", "c"): ["q2"],
                                        ("a", "d"): ["q3"], ("b", "d"): ["q4"]})
    assert routes == [("c", [("a", "c"), ("b", "c")]), ("d", [("a", "d"), ("b", "d")])]
    direct = AdaptiveScheduler._routes(("a", "b"), ["a", "b", "c"], {("a", "b"): ["q9"], ("a", "c"): ["q1"]})
    assert direct == [("direct", [("a", "b")])]
