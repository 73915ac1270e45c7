"""Elo against hand-computed games, Bradley-Terry against known cases, the win matrix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from langrag_eval.tournament.ranking import (
    bradley_terry, bradley_terry_intervals, elo_ratings, elo_table, elo_update, expected_score,
    win_matrix,
)


def test_elo_update_by_hand_including_ties() -> None:
    # game 1: 1000 vs 1000, a wins: E = 0.5, delta = 32 * 0.5 = 16
    a, b = elo_update(1000.0, 1000.0, 1.0)
    assert (a, b) == (1016.0, 984.0)
    # game 2: a tie between 1016 and 984: E_a = 1 / (1 + 10 ** (-32 / 400)) = 0.5459219...
    # delta = 32 * (0.5 - 0.5459219) = -1.4695015...; the stronger side loses points on a tie
    a2, b2 = elo_update(a, b, 0.5)
    assert a2 == pytest.approx(1014.5304985, abs=1e-6)
    assert b2 == pytest.approx(985.4695015, abs=1e-6)
    # game 3: the weaker side wins: delta = 32 * (0 - E_a)
    e = 1 / (1 + 10 ** ((b2 - a2) / 400))
    a3, b3 = elo_update(a2, b2, 0.0)
    assert a3 == pytest.approx(a2 - 32 * e) and b3 == pytest.approx(b2 + 32 * e)
    assert a3 + b3 == pytest.approx(2000.0)   # zero-sum, never truncated to int
    assert expected_score(1200.0, 1000.0) == pytest.approx(1 / (1 + 10 ** (-0.5)))


def _reference(games, agents, order, k=32.0, initial=1000.0):
    r = {x: initial for x in agents}
    for g in order:
        x, y, s = games[g]
        r[x], r[y] = elo_update(r[x], r[y], s, k)
    return r


def test_vectorised_elo_equals_game_by_game_loop_per_tournament() -> None:
    games = [("a", "b", 1.0), ("b", "c", 0.5), ("a", "c", 0.0), ("c", "b", 1.0), ("a", "b", 0.5)]
    agents = ["a", "b", "c"]
    result = elo_ratings(games, agents, tournaments=7, seed=3)
    # rebuild the orders the function drew (same generator, same call) and replay each one by hand
    orders = np.random.default_rng(3).permuted(np.tile(np.arange(len(games)), (7, 1)), axis=1)
    finals = [_reference(games, agents, order) for order in orders]
    for x in agents:
        assert result.mean[x] == pytest.approx(sum(f[x] for f in finals) / 7, abs=1e-9)
    # each tournament starts afresh: one tournament equals the first order replayed from 1000
    single = elo_ratings(games, agents, tournaments=1, seed=3)
    assert single.mean == pytest.approx(finals[0])


def test_elo_ties_between_equals_change_nothing_and_seed_reproduces() -> None:
    ties = [("a", "b", 0.5)] * 10
    assert elo_ratings(ties, ["a", "b"], tournaments=5).mean == {"a": 1000.0, "b": 1000.0}
    games = [("a", "b", 1.0), ("b", "a", 1.0), ("a", "b", 1.0)]
    assert elo_ratings(games, ["a", "b"], seed=9).mean == elo_ratings(games, ["a", "b"], seed=9).mean
    # order matters for Elo, so different seeds average different orders
    assert elo_table(elo_ratings(games, ["a", "b"]))[0]["agent"] == "a"


def test_bradley_terry_recovers_exact_strengths_from_expected_counts() -> None:
    theta = {"a": 0.0, "b": math.log(2), "c": math.log(4)}
    games = []
    # 60 games per pair split in the exact expected proportions: the MLE is the truth
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        p = 1 / (1 + math.exp(theta[y] - theta[x]))
        wins = round(60 * p)
        games += [(x, y, 1.0)] * wins + [(x, y, 0.0)] * (60 - wins)
    assert all(round(60 / (1 + math.exp(theta[y] - theta[x]))) == 60 / (1 + math.exp(theta[y] - theta[x]))
               for x, y in (("a", "b"), ("a", "c"), ("b", "c")))
    fit = bradley_terry(games, ["a", "b", "c"])
    centred = {x: v - sum(theta.values()) / 3 for x, v in theta.items()}
    assert fit.theta == pytest.approx(centred, abs=1e-8)
    assert not fit.regularised
    assert fit.rating["c"] - fit.rating["a"] == pytest.approx(400 / math.log(10) * math.log(4))


def test_bradley_terry_ties_are_half_wins_and_unbeaten_needs_a_prior() -> None:
    split = bradley_terry([("a", "b", 1.0), ("a", "b", 0.0)], ["a", "b"])
    tied = bradley_terry([("a", "b", 0.5), ("a", "b", 0.5)], ["a", "b"])
    assert split.theta == pytest.approx({"a": 0.0, "b": 0.0})
    assert tied.theta == pytest.approx({"a": 0.0, "b": 0.0})
    unbeaten = bradley_terry([("a", "b", 1.0)] * 5, ["a", "b"])
    assert unbeaten.regularised and math.isfinite(unbeaten.theta["a"]) and unbeaten.theta["a"] > 0


def test_bootstrap_intervals_bracket_the_fit_and_are_seeded() -> None:
    rng = np.random.default_rng(0)
    games, groups = [], []
    for q in range(40):
        for x, y, p in (("a", "b", 0.7), ("b", "c", 0.6), ("a", "c", 0.8)):
            games.append((x, y, float(rng.random() < p)))
            groups.append(f"q{q}")
    one = bradley_terry_intervals(games, ["a", "b", "c"], groups, n_boot=100, seed=5)
    two = bradley_terry_intervals(games, ["a", "b", "c"], groups, n_boot=100, seed=5)
    assert one.low == two.low and one.high == two.high
    for x in "abc":
        assert one.low[x] < one.fit.rating[x] < one.high[x]
    assert one.fit.rating["a"] > one.fit.rating["b"] > one.fit.rating["c"]


def test_win_matrix_counts_both_directions() -> None:
    m = win_matrix([("a", "b", 1.0), ("b", "a", 1.0), ("a", "b", 0.5), ("a", "c", 1.0)], ["a", "b", "c"])
    assert m["a"]["b"] == {"games": 3, "win": pytest.approx(1 / 3), "tie": pytest.approx(1 / 3),
                           "loss": pytest.approx(1 / 3)}
    assert m["c"]["a"]["loss"] == 1.0 and m["b"]["c"]["games"] == 0
    assert m["a"]["average"]["win"] == pytest.approx((1 / 3 + 1.0) / 2)


def test_standard_errors_shrink_when_ties_make_scores_less_variable() -> None:
    # the same points per pair, once as wins and losses, once mostly as ties
    coin = [("a", "b", 1.0)] * 30 + [("a", "b", 0.0)] * 20
    ties = [("a", "b", 1.0)] * 10 + [("a", "b", 0.5)] * 40
    fit_coin, fit_ties = bradley_terry(coin, ["a", "b"]), bradley_terry(ties, ["a", "b"])
    assert fit_coin.theta == pytest.approx(fit_ties.theta)                 # 30 of 50 points either way
    assert fit_coin.dispersion == pytest.approx(1.0, abs=0.05)
    assert fit_ties.dispersion < 0.5
    assert fit_ties.se_difference("a", "b") < fit_coin.se_difference("a", "b")
