"""Pictures that tell the truth on any data: a tournament whose ratings are all equal, that played no
game, whose games all tied, or that had one agent says so in a sentence instead of drawing a ranking;
equal ratings share a rank; an agent that played no game is not ranked; THELMA's spread is not drawn
under five scores; every abbreviation has its key; settings read as words."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from langrag_eval.report import build_report
from langrag_eval.report.svg import interval_chart
from langrag_eval.report.views import plain, tournament_view
from langrag_eval.runtime import RunStore


def _row(agent: str, rating: float, wins: int, ties: int, losses: int) -> dict:
    return {"rank": 0, "agent": agent, "bt_rating": rating, "bt_low": rating - 5, "bt_high": rating + 5,
            "elo": rating, "elo_std": 1.0, "wins": wins, "ties": ties, "losses": losses}


rows = st.lists(st.tuples(st.sampled_from([990.0, 1000.0, 1010.0]), st.integers(0, 3), st.integers(0, 3),
                          st.integers(0, 3)), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(rows)
def test_ranks_share_equal_ratings_and_leave_out_agents_without_games(data) -> None:
    ranking = [_row(f"agent{i}", *r) for i, r in enumerate(data)]
    view = tournament_view({"ranking": ranking, "games": {"played": 1}})
    played = [r for r in view["ranking"] if r["games"]]
    for r in view["ranking"]:
        if not r["games"]:
            assert r["shown_rank"] == "not ranked (no game)"
    # a rank is 1 + the number of agents rated strictly higher; ties say so
    for r in played:
        better = sum(1 for o in played if o["bt_rating"] > r["bt_rating"] + 1e-6)
        equal = sum(1 for o in played if abs(o["bt_rating"] - r["bt_rating"]) < 1e-6)
        assert str(r["shown_rank"]) == (f"{better + 1} (tied)" if equal > 1 else str(better + 1))
    assert view["separated"] == (len({r["bt_rating"] for r in played}) > 1)
    if not view["separated"]:
        assert view["notes"]  # said in words, not drawn


def _tournament_store(tmp_path: Path, ranking: list[dict], *, played: int, mrr: list[float]) -> str:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("tournament", {"schedules": ["pairwise", "bias"], "factors": None, "debug": False},
                         judge="scripted")
    agents = [r["agent"] for r in ranking]
    store.put_artifact(run, "tournament", {
        "agents": agents, "ranking": ranking, "games": {"played": played, "scheduled": played},
        "win_matrix": {a: {b: {"games": 2, "win": 0.0, "tie": 1.0, "loss": 0.0} for b in agents if b != a}
                       for a in agents},
        "retrieval": {"k": 5, "per_agent": {a: {"mrr": {"very": m, "somewhat": m}, "ndcg": m}
                                            for a, m in zip(agents, mrr)}}})
    return build_report(store, run)


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


def test_equal_ratings_and_ties_are_said_not_drawn(tmp_path: Path) -> None:
    ranking = [_row(f"agent-{i}", 1000.0, 0, 4, 0) for i in range(6)]
    html = _tournament_store(tmp_path, ranking, played=12, mrr=[1.0] * 6)
    text = " ".join(_text(html).split())
    assert "the same rating (1,000)" in text and "separated no agent" in text
    assert "Every game ended in a tie" in text and "the same MRR@5 (1.00)" in text
    assert "Bradley-Terry rating (Elo scale)" not in html  # no plot reading 1,000 at both ends
    assert text.count("1 (tied)") == 6


def test_no_game_and_one_agent(tmp_path: Path) -> None:
    html = _tournament_store(tmp_path / "a", [_row("solo", 1000.0, 0, 0, 0)], played=0, mrr=[0.5])
    assert "Only one agent took part" in _text(html) and "not ranked (no game)" in html
    (tmp_path / "b").mkdir()
    html = _tournament_store(tmp_path / "b", [_row("x", 1000.0, 0, 0, 0), _row("y", 1000.0, 0, 0, 0)],
                             played=0, mrr=[0.5, 0.7])
    assert "No game was played" in _text(html) and "Share of games" not in html


def test_thelma_spread_under_five_scores_and_the_key(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("thelma", {}, judge="scripted")
    store.put_artifact(run, "thelma", {
        "metrics": {"sqc": {"name": "source query coverage", "mean": 0.5, "std": 0.1, "min": 0.4, "max": 0.6,
                            "n": 3, "unscored": 0},
                    "rqc": {"name": "response query coverage", "mean": 0.7, "std": 0.1, "min": 0.6, "max": 0.8,
                            "n": 8, "unscored": 0}},
        "diagnosis": {"on_means": [], "by_sample": [
            {"rule": "SQC-low RQC-low", "component": "retriever", "interpretation": "misses", "samples": 6,
             "share": 0.75},
            {"rule": "RQC-low SQC-high", "component": "generator", "interpretation": "ignores", "samples": 4,
             "share": 0.5}], "samples": 8}})
    text = " ".join(_text(build_report(store, run)).split())
    assert "SQC source query coverage" in text and "RQC response query coverage" in text
    assert "Fewer than five scores for SQC" in text
    assert "add up to more than 100 %" in text


def test_settings_read_as_words() -> None:
    assert plain(["pairwise", "bias"]) == "pairwise, bias" and plain([]) == "none" and plain(False) == "no"
    assert plain({"question": "question", "id": None}) == "question: question"
    assert "{{" not in plain("Grade: {{ rubric }}")


def test_an_axis_of_equal_values_reads_differently_at_each_end() -> None:
    svg = interval_chart(["a", "b"], [1000.0, 1000.0], [1000.0, 1000.0], [1000.0, 1000.0])
    ticks = re.findall(r'<text x="[^"]+" y="[^"]+"(?: text-anchor="\w+")?>([\d.,]+)</text>', svg)
    assert len(set(ticks)) == 3, ticks
