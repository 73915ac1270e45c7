"""Wilson and bootstrap intervals against statsmodels and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.stats.intervals import bootstrap, percentile, wilson


@given(st.integers(min_value=1, max_value=5000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))))
@settings(max_examples=200, deadline=None)
def test_wilson_matches_statsmodels(case: tuple[int, int]) -> None:
    from statsmodels.stats.proportion import proportion_confint

    k, n = case
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    e = wilson(k, n)
    assert e.value == k / n and e.n == n and e.successes == k
    assert math.isclose(e.low, low, abs_tol=1e-9) and math.isclose(e.high, high, abs_tol=1e-9)
    assert e.low <= e.value <= e.high


def test_wilson_of_nothing_has_no_value_and_bad_counts_are_refused() -> None:
    assert wilson(0, 0).value is None and wilson(0, 0).low is None
    with pytest.raises(ValueError):
        wilson(3, 2)


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=50),
       st.floats(min_value=0, max_value=100))
def test_percentile_matches_numpy(values: list[float], q: float) -> None:
    assert math.isclose(percentile(values, q), float(np.percentile(values, q)), rel_tol=1e-9, abs_tol=1e-6)


def test_bootstrap_interval_agrees_with_scipy_percentile_bootstrap() -> None:
    from scipy.stats import bootstrap as sp_bootstrap

    rng = np.random.default_rng(1)
    data = list(rng.normal(10.0, 2.0, size=200))
    mine = bootstrap(data, lambda xs: sum(xs) / len(xs), resamples=4000, seed=0)
    theirs = sp_bootstrap((np.array(data),), np.mean, n_resamples=4000, method="percentile",
                          random_state=0).confidence_interval
    assert mine.n == 200 and mine.low < mine.value < mine.high
    # two Monte Carlo estimates of the same interval: equal to within resampling noise
    assert abs(mine.low - theirs.low) < 0.06 and abs(mine.high - theirs.high) < 0.06


def test_bootstrap_skips_resamples_where_the_statistic_is_undefined() -> None:
    e = bootstrap([0, 1], lambda xs: None if len(set(xs)) < 2 else 0.5, seed=0)
    assert e.value == 0.5 and e.low == e.high == 0.5
    assert bootstrap([], lambda xs: 1.0).value is None
