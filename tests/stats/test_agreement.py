"""Agreement statistics against hand computation, scipy, sklearn (when importable) and the case
structure vRAG-Eval reports in sections 4.3-4.4."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats as sps

from langrag_eval.stats import (
    agreement, binary_agreement, binary_confusion, cohen_kappa, confusion_matrix, exact_agreement,
    kendall_tau, pair_scores, reject_rate, spearman,
)


def paper_gpt4_case() -> tuple[list[int], list[int]]:
    """155 items with the counts the paper reports for GPT-4 against humans: 46 exact matches
    (29.7%), 128 binary matches (82.6%), reject rates 119/155 (77%) and 112/155 (72%).
    2x2 (rows GPT-4, columns human; reject, accept): [[102, 17], [10, 26]]."""
    judge: list[int] = []
    human: list[int] = []

    def add(pairs: list[tuple[int, int]], n: int) -> None:
        for i in range(n):
            j, h = pairs[i % len(pairs)]
            judge.append(j)
            human.append(h)

    add([(1, 1), (2, 2), (3, 3)], 36)            # both reject, same level
    add([(1, 2), (2, 3), (3, 1), (1, 3)], 66)    # both reject, different level
    add([(4, 4), (5, 5)], 10)                    # both accept, same level
    add([(4, 5), (5, 4)], 16)                    # both accept, different level
    add([(1, 4), (3, 5), (2, 4)], 17)            # judge rejects, human accepts
    add([(4, 3), (5, 2)], 10)                    # judge accepts, human rejects
    return judge, human


def test_paper_case_exact_versus_binary_on_the_same_items() -> None:
    judge, human = paper_gpt4_case()
    report = agreement(judge, human, names=("gpt4", "human"))
    assert report.compared == 155
    assert report.exact == pytest.approx(46 / 155)
    assert round(100 * report.exact, 1) == 29.7
    assert round(100 * report.binary, 1) == 82.6
    assert round(100 * report.reject_rate["gpt4"]) == 77
    assert round(100 * report.reject_rate["human"]) == 72
    assert report.binary_confusion == [[102, 17], [10, 26]]
    # the 5x5 diagonal holds the exact matches, its total the items
    assert sum(report.confusion[i][i] for i in range(5)) == 46
    assert sum(map(sum, report.confusion)) == 155
    # binary agreement is the 2x2 diagonal; the same items, a far higher rate than exact agreement
    assert report.binary > report.exact


def test_paper_llama_case_structure() -> None:
    """Llama 3 8B: 23.9% exact, 36.8% binary, a score of 4 for 80% of answers, a 3 for just one."""
    human = [1] * 40 + [2] * 40 + [3] * 32 + [4] * 30 + [5] * 13          # 112 reject, 43 accept
    llama = ([3] + [4] * 39 + [1] * 5 + [4] * 35 + [2] * 8 + [4] * 24     # the 112 human rejects
             + [4] * 25 + [5] * 5 + [4] * 1 + [5] * 12)                   # the 43 human accepts
    assert len(human) == len(llama) == 155
    assert sum(s == 4 for s in llama) == 124 and round(100 * 124 / 155) == 80
    assert llama.count(3) == 1
    report = agreement(llama, human)
    assert report.exact == pytest.approx(37 / 155) and round(100 * report.exact, 1) == 23.9
    assert report.binary == pytest.approx(57 / 155) and round(100 * report.binary, 1) == 36.8


def test_hand_computed_small_case() -> None:
    a = [1, 2, 3, 4, 5, 5]
    b = [1, 2, 3, 5, 5, 4]
    # p_o = 4/6; both marginals (1,1,1,1,2)/6, so p_e = (1+1+1+1+4)/36 = 8/36
    assert cohen_kappa(a, b) == pytest.approx((4 / 6 - 8 / 36) / (1 - 8 / 36))
    # quadratic weights (i-j)^2: observed disagreement 2*(1/6)*1 = 1/3;
    # expected = sum_ij p_i q_j (i-j)^2 with p = q = (1,1,1,1,2)/6 over positions 0..4
    p = [1 / 6, 1 / 6, 1 / 6, 1 / 6, 2 / 6]
    expected = sum(p[i] * p[j] * (i - j) ** 2 for i in range(5) for j in range(5))
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(1 - (1 / 3) / expected)
    assert exact_agreement(a, b) == pytest.approx(4 / 6)
    assert binary_agreement(a, b) == 1.0
    assert reject_rate(a) == 0.5
    assert confusion_matrix(a, b)[3] == [0, 0, 0, 0, 1]
    assert binary_confusion(a, b) == [[3, 0], [0, 3]]


def test_kappa_perfect_and_systematic_disagreement() -> None:
    assert cohen_kappa([1, 2, 4, 5], [1, 2, 4, 5]) == pytest.approx(1.0)
    # always off by one: unweighted kappa is below zero, quadratic still credits closeness
    a, b = [1, 2, 3, 4, 5] * 4, [2, 3, 4, 5, 4] * 4
    assert cohen_kappa(a, b) < 0
    assert cohen_kappa(a, b, weights="quadratic") > 0.5


def test_undefined_statistics_are_none_not_nan() -> None:
    report = agreement([4, 4, 4], [4, 4, 4])
    assert report.exact == 1.0
    assert report.kappa is None and report.weighted_kappa is None
    assert report.kendall_tau is None and report.spearman is None
    assert any("undefined" in n for n in report.notes)
    empty = agreement([None, None], [3, 4])
    assert empty.compared == 0 and empty.exact is None and empty.binary is None
    assert empty.unscored == {"a": 2, "b": 0}
    for value in (empty.kappa, empty.weighted_kappa):
        assert value is None


def test_unscored_and_missing_are_counted_never_dropped_silently() -> None:
    judge = {"q1": 4, "q2": None, "q3": 2, "q4": 5}
    human = {"q1": 4, "q2": 3, "q3": None, "q5": 1}
    p = pair_scores(judge, human)
    assert p.ids == ["q1"] and p.unscored_a == ["q2"] and p.unscored_b == ["q3"]
    assert p.missing_b == ["q4"] and p.missing_a == ["q5"]
    report = agreement(judge, human, names=("judge", "human"))
    assert report.items == 5 and report.compared == 1
    assert report.unscored == {"judge": 1, "human": 1}
    assert report.missing == {"judge": 1, "human": 1}
    assert report.excluded_ids["unscored_judge"] == ["q2"]
    assert len(report.notes) >= 4


def test_rank_correlations_equal_scipy() -> None:
    rng = random.Random(7)
    a = [rng.randint(1, 5) for _ in range(60)]
    b = [min(5, max(1, x + rng.choice((-1, 0, 0, 1)))) for x in a]
    tau = kendall_tau(a, b)
    ref = sps.kendalltau(a, b)
    assert tau.statistic == pytest.approx(ref.statistic) and tau.pvalue == pytest.approx(ref.pvalue)
    rho = spearman(a, b)
    ref2 = sps.spearmanr(a, b)
    assert rho.statistic == pytest.approx(ref2.statistic) and rho.pvalue == pytest.approx(ref2.pvalue)
    assert 0 < tau.statistic < rho.statistic <= 1  # tau-b is the smaller of the two here
    assert tau.pvalue < 1e-6


def test_kappa_matches_sklearn_when_available() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(3)
    for trial in range(20):
        a = [rng.randint(1, 5) for _ in range(rng.randint(5, 80))]
        b = [rng.choice((x, rng.randint(1, 5))) for x in a]
        for weights in (None, "linear", "quadratic"):
            ours = cohen_kappa(a, b, weights=weights)
            theirs = metrics.cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights=weights)
            if math.isnan(theirs):
                assert ours is None
            else:
                assert ours == pytest.approx(theirs), (trial, weights)
    judge, human = paper_gpt4_case()
    assert cohen_kappa(judge, human, weights="quadratic") == pytest.approx(
        metrics.cohen_kappa_score(judge, human, labels=[1, 2, 3, 4, 5], weights="quadratic"))


def test_confusion_matrix_rejects_scores_off_the_scale() -> None:
    with pytest.raises(ValueError, match=r"\[7\]"):
        confusion_matrix([1, 7], [1, 2])
    with pytest.raises(ValueError):
        pair_scores([1, 2], [1])
    with pytest.raises(ValueError):
        agreement([1], [2], names=("x", "x"))


def test_threshold_moves_the_binary_line() -> None:
    a, b = [3, 3, 5], [4, 2, 5]
    assert binary_agreement(a, b, threshold=4) == pytest.approx(2 / 3)
    assert binary_agreement(a, b, threshold=3) == pytest.approx(2 / 3)
    assert binary_agreement(a, b, threshold=5) == 1.0
    assert agreement(a, b, threshold=5).reject_rate == {"a": pytest.approx(2 / 3), "b": pytest.approx(2 / 3)}
