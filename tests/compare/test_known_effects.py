"""Constructed runs of known effect: a real 8-point drop in accept rate over 400 items is flagged;
no change is flagged in at most 5 % of 200 seeded resamples; the comparison's tests equal
statsmodels' McNemar and scipy's Wilcoxon on the same pairs."""

from __future__ import annotations

import numpy as np
import pytest
from compare_helpers import baseline_scores, grade_observations, perturb, put_grade_run
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from langrag_eval.compare import compare_observations, compare_runs, gate_observations, gate_runs
from langrag_eval.runtime import RunStore

N = 400


def test_an_eight_point_drop_over_400_items_is_flagged(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    base = baseline_scores(N, seed=1)
    accepted = np.flatnonzero(base >= 4)
    rejected = np.flatnonzero(base < 4)
    branch = base.copy()
    branch[accepted[:40]] = 2           # 40 answers lost ...
    branch[rejected[:8]] = 5            # ... 8 gained: 32 of 400, an 8-point drop
    put_grade_run(store, "main", base.tolist())
    put_grade_run(store, "branch", branch.tolist())
    result = gate_runs(store, "branch", "main", ["accept_rate=0.02"])
    (check,) = result.checks
    m = check.comparison
    assert m.diff == pytest.approx(-0.08) and m.lost == 40 and m.gained == 8 and m.n == N
    assert check.status == "fail" and result.exit_code == 1
    assert m.high < -0.02                # flagged by the interval's bound, not the point estimate
    # the same drop passes a gate that allows ten points
    assert gate_runs(store, "branch", "main", ["accept_rate=0.10"]).exit_code == 0


def test_random_eight_point_drops_are_flagged_with_high_power():
    """Random drops of 8 points in expectation (accepted answers lost at 12.3 %, rejected gained at
    5 %): the gate at 2 points flags nearly all of 100 seeded draws."""
    flagged = 0
    for seed in range(100):
        base = baseline_scores(N, seed=seed)
        branch = perturb(base, seed=10_000 + seed, lose=0.123, gain=0.05)
        r = gate_observations({"vrag": grade_observations(base)}, {"vrag": grade_observations(branch)},
                              {"accept_rate": 0.02}, resamples=200)
        flagged += r.exit_code == 1
    assert flagged >= 90, flagged


def test_no_change_is_not_flagged_in_200_seeded_resamples():
    """Same quality, different noise: accepted answers lost at 5 %, rejected gained at 15 % (equal in
    expectation). Gating accept rate at 2 points and grade at 0.1 together, and then the strictest
    gate (any drop at all), each raises a false alarm in at most 5 % of 200 seeded resamples."""
    alarms = {"2 points": 0, "any drop": 0}
    for seed in range(200):
        base = baseline_scores(N, seed=seed)
        branch = perturb(base, seed=50_000 + seed, lose=0.05, gain=0.15)
        a, b = {"vrag": grade_observations(base)}, {"vrag": grade_observations(branch)}
        alarms["2 points"] += gate_observations(a, b, {"accept_rate": 0.02, "grade": 0.1},
                                                resamples=200, seed=seed).exit_code == 1
        alarms["any drop"] += gate_observations(a, b, {"accept_rate": 0.0}, seed=seed).exit_code == 1
    assert alarms["2 points"] <= 10 and alarms["any drop"] <= 10, alarms
    # the observed rates (stated in the notes): 2 points 0/200; any drop about 2.5 % by design
    assert alarms["2 points"] == 0


def test_comparison_tests_equal_statsmodels_and_scipy(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    base = baseline_scores(N, seed=5)
    branch = perturb(base, seed=6, lose=0.1, gain=0.12)
    put_grade_run(store, "a", base.tolist())
    put_grade_run(store, "b", branch.tolist())
    c = compare_runs(store, "a", "b")
    acc, grade = c.metric("accept_rate"), c.metric("grade")
    table = [[int(((base >= 4) & (branch >= 4)).sum()), int(((base >= 4) & (branch < 4)).sum())],
             [int(((base < 4) & (branch >= 4)).sum()), int(((base < 4) & (branch < 4)).sum())]]
    exact = table[0][1] + table[1][0] < 25
    ref = sm_mcnemar(table, exact=exact, correction=True)
    assert acc.test == "mcnemar-chi2" and acc.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert acc.statistic == pytest.approx(ref.statistic)
    assert (acc.lost, acc.gained) == (table[0][1], table[1][0])
    w = sps.wilcoxon(branch - base, zero_method="wilcox", correction=False, method="approx")
    assert grade.test == "wilcoxon-normal" and grade.p_value == pytest.approx(float(w.pvalue), rel=1e-9)
    assert grade.statistic == pytest.approx(float(w.statistic))
    holm = multipletests([acc.p_value, grade.p_value], method="holm")[1]
    assert [acc.p_adjusted, grade.p_adjusted] == pytest.approx(list(holm))
    assert c.correction == "holm"
    assert grade.diff == pytest.approx(float(np.mean(branch - base)))
    assert grade.low < grade.diff < grade.high


def test_small_discordant_counts_use_the_exact_test():
    base = [5] * 30
    branch = [5] * 24 + [2] * 6
    c = compare_observations({"vrag": grade_observations(base)}, {"vrag": grade_observations(branch)})
    m = c.metric("accept_rate")
    assert m.test == "mcnemar-exact"
    assert m.p_value == pytest.approx(sm_mcnemar([[24, 6], [0, 0]], exact=True).pvalue)
