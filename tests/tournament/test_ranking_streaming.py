"""Streamed game orders: the same permutations numpy's ``permuted`` draws, and the same Elo ratings
bit for bit whether the orders stay in memory in one block or go through a temporary file in many."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.tournament import orders, ranking
from langrag_eval.tournament.orders import step_blocks
from langrag_eval.tournament.ranking import elo_ratings

game_lists = st.integers(2, 6).flatmap(lambda n: st.tuples(
    st.just([f"a{i}" for i in range(n)]),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, n - 1), st.sampled_from([0.0, 0.5, 1.0]))
             .map(lambda g: (f"a{g[0]}", f"a{(g[0] + g[1]) % n}", g[2])), min_size=1, max_size=120)))


@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(st.integers(0, 300), min_size=1, max_size=200), tournaments=st.integers(1, 9),
       seed=st.integers(0, 2 ** 32), block_bytes=st.integers(1, 64), in_memory=st.sampled_from([0, 1 << 30]))
def test_blocks_replay_numpys_permuted_orders(kinds, tournaments, seed, block_bytes, in_memory) -> None:
    codes = np.asarray(kinds)
    got = np.vstack(list(step_blocks(codes, max(kinds) + 1, tournaments=tournaments,
                                     rng=np.random.default_rng(seed), in_memory=in_memory,
                                     block_bytes=block_bytes)))
    orders_ = np.random.default_rng(seed).permuted(np.tile(np.arange(len(kinds)), (tournaments, 1)), axis=1)
    assert got.shape == (len(kinds), tournaments)
    assert np.array_equal(got.T, codes[orders_])
    assert got.dtype == np.min_scalar_type(max(kinds))   # the smallest code type holds the orders


@settings(max_examples=40, deadline=None)
@given(case=game_lists, tournaments=st.integers(1, 40), seed=st.integers(0, 10 ** 6),
       steps=st.integers(1, 7), block_bytes=st.integers(1, 300))
def test_elo_is_bit_identical_through_a_spill_file_and_small_blocks(case, tournaments, seed, steps,
                                                                    block_bytes) -> None:
    agents, games = case
    whole = elo_ratings(games, agents, tournaments=tournaments, seed=seed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(orders, "IN_MEMORY", 0)            # every order goes through the temporary file
        mp.setattr(orders, "BLOCK_BYTES", block_bytes)
        mp.setattr(ranking, "_STEPS", steps)
        spilled = elo_ratings(games, agents, tournaments=tournaments, seed=seed)
    assert (spilled.mean, spilled.std, spilled.low, spilled.high) == (whole.mean, whole.std, whole.low,
                                                                      whole.high)


def test_kinds_keep_each_games_pair_and_score() -> None:
    # reversed pairs and every score are distinct kinds: a mix-up would move the ratings
    games = [("a", "b", 1.0), ("b", "a", 1.0), ("a", "b", 0.5), ("a", "c", 0.0), ("c", "a", 0.5)]
    one = elo_ratings(games, ["a", "b", "c"], tournaments=1, seed=4)
    order = np.random.default_rng(4).permutation(len(games))
    r = {x: 1000.0 for x in "abc"}
    for g in order:
        x, y, s = games[g]
        r[x], r[y] = ranking.elo_update(r[x], r[y], s)
    assert one.mean == pytest.approx(r, abs=1e-9)


@pytest.mark.parametrize(("games", "message"), [
    ([("a", "b", 1.0), ("a", "z", 1.0)], "game 1 names an agent not in the list: 'a' vs 'z'"),
    ([("b", "b", 0.5)], "game 0 pits 'b' against itself"),
    ([("a", "b", 1.0), ("a", "b", 0.3)], "game 1 has score 0.3; expected 0, 0.5 or 1"),
    ([("a", "b", "1")], "game 0 has score '1'; expected 0, 0.5 or 1"),
    ([("a", "b", float("nan"))], "game 0 has score nan; expected 0, 0.5 or 1"),
    ([("a", "b")], "not enough values to unpack"),
])
def test_bad_games_are_named_by_position(games, message) -> None:
    for rank in (lambda: elo_ratings(games, ["a", "b"]),
                 lambda: ranking.bradley_terry_intervals(games, ["a", "b"], ["q"] * len(games))):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
            rank()


def test_scores_of_any_numeric_type_encode_alike() -> None:
    from decimal import Decimal
    from fractions import Fraction
    plain = elo_ratings([("a", "b", 1.0), ("b", "a", 0.5)], ["a", "b"], tournaments=3)
    for one, half in ((1, Fraction(1, 2)), (True, np.float32(0.5)), (Decimal(1), Decimal("0.5"))):
        assert elo_ratings([("a", "b", one), ("b", "a", half)], ["a", "b"], tournaments=3) == plain
