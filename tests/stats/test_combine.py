"""Combining human graders: median with odd and even counts, a chosen annotator, missing scores."""

from __future__ import annotations

import statistics

import pytest

from langrag_eval.errors import ConfigError
from langrag_eval.stats import combine, combine_annotator, combine_median, describe_combination


def test_odd_counts_equal_the_statistics_median() -> None:
    rows = {f"q{i}": {"a": (i * 7) % 5 + 1, "b": (i * 3) % 5 + 1, "c": (i * 11) % 5 + 1} for i in range(30)}
    combined = combine_median(rows)
    for item, row in rows.items():
        assert combined[item] == statistics.median(row.values())


def test_even_counts_follow_the_rule() -> None:
    rows = {"q1": {"a": 3, "b": 4}, "q2": {"a": 5, "b": 1, "c": 2, "d": 4}}
    assert combine_median(rows, even="low") == {"q1": 3, "q2": 2}
    assert combine_median(rows, even="high") == {"q1": 4, "q2": 4}
    # low: accepted (>= 4) only when a strict majority accepts
    assert combine_median({"x": {"a": 4, "b": 4, "c": 3, "d": 5}}, even="low")["x"] == 4
    assert combine_median({"x": {"a": 4, "b": 3, "c": 3, "d": 5}}, even="low")["x"] == 3


def test_random_even_rule_is_seeded_and_picks_a_middle_score() -> None:
    rows = {f"q{i}": {"a": 2, "b": 5} for i in range(40)}
    first = combine_median(rows, even="random", seed=1)
    assert first == combine_median(rows, even="random", seed=1)
    assert set(first.values()) == {2, 5}
    assert first != combine_median(rows, even="random", seed=2)


def test_missing_scores_are_left_out_and_all_missing_is_none() -> None:
    rows = {"q1": {"a": None, "b": 2, "c": 5}, "q2": {"a": None, "b": None}, "q3": {"a": 1, "b": None, "c": 3}}
    assert combine_median(rows, even="low") == {"q1": 2, "q2": None, "q3": 1}


def test_chosen_annotator() -> None:
    rows = {"q1": {"ann": 2, "bo": 4}, "q2": {"ann": None, "bo": 1}}
    assert combine_annotator(rows, "ann") == {"q1": 2, "q2": None}
    assert combine(rows, "bo") == {"q1": 4, "q2": 1}
    with pytest.raises(ConfigError, match="known: ann, bo"):
        combine(rows, "cy")
    with pytest.raises(ConfigError):
        combine_median(rows, even="mean")  # type: ignore[arg-type]


def test_two_graders_default_to_the_papers_seeded_random_pick() -> None:
    """vRAG-Eval (section 4.2) picked one of two experts' scores at random; that is the default, and
    it is reproducible from the seed and reported in words."""
    rows = {f"q{i}": {"a": 2, "b": 5} for i in range(400)}
    picked = combine(rows)
    assert picked == combine_median(rows, even="random", seed=0) == combine(rows, seed=0)
    share_b = sum(v == 5 for v in picked.values()) / len(picked)
    assert 0.4 < share_b < 0.6                       # a fair coin, not always the lower score
    assert describe_combination("median", ("a", "b")) == (
        "median of a, b (an even count: one of the two middle scores at random, seed 0, as vRAG-Eval)")
    assert describe_combination("median", ("a", "b"), even="low", seed=3).endswith("the lower middle score)")
    assert describe_combination("b", ("a", "b")) == "annotator b alone"
