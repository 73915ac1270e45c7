"""Paired t-test, Bland-Altman and judge-human agreement against scipy and by hand."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sps

from langrag_eval.stats.significance import bland_altman, judge_human_agreement, paired_t_test


def test_paired_t_test_matches_scipy_and_handles_degenerate_input() -> None:
    a, b = [2, 1, 2, 2, 0, 1], [1, 1, 0, 2, 0, 0]
    t = paired_t_test(a, b)
    ref = sps.ttest_rel(a, b)
    assert t.t == pytest.approx(ref.statistic) and t.p == pytest.approx(ref.pvalue)
    assert t.mean_difference == pytest.approx(4 / 6) and t.significant(0.5)
    assert paired_t_test([1], [0]).t is None
    assert paired_t_test([2, 2], [1, 1]).note.startswith("the differences are constant")
    with pytest.raises(ValueError):
        paired_t_test([1, 2], [1])


def test_bland_altman_by_hand() -> None:
    llm, human = [2, 2, 1, 0], [1, 2, 2, 0]          # differences 1, 0, -1, 0
    ba = bland_altman(llm, human)
    sd = math.sqrt((1 + 0 + 1 + 0) / 3)
    assert (ba.bias, ba.sd) == (0.0, pytest.approx(sd))
    assert (ba.lower, ba.upper) == (pytest.approx(-1.96 * sd), pytest.approx(1.96 * sd))


def test_judge_human_agreement_uses_tau_b_and_spearman() -> None:
    llm, human = [2, 1, 2, 0, 1, 2, 0], [2, 1, 1, 0, 1, 2, 0]   # differences: one +1
    ag = judge_human_agreement(llm, human)
    assert ag.kendall_tau_b.statistic == pytest.approx(sps.kendalltau(llm, human, variant="b").statistic)
    assert ag.spearman.statistic == pytest.approx(sps.spearmanr(llm, human).statistic)
    assert ag.bland_altman.bias == pytest.approx(1 / 7)
