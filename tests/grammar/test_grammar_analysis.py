"""Modular evaluation maths against hand computation (GRAMMAR section 3.3, equations 1-2, 4.2)."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from langrag_eval.grammar import (
    ItemResult, attribute_failures, binary_reliability, compare_clusters, group_results, metrics,
    wilson_interval, without_lm_failures,
)


def item(iid: str, logic: str, correct: bool | None, cluster: str = "short", docs: tuple[str, ...] = ()) -> ItemResult:
    return ItemResult(id=iid, logic_id=logic, cluster=cluster, correct=correct, doc_ids=docs)


def scripted_run() -> list[ItemResult]:
    # Logic A: gap (0/3). B: robust (2/2). C: non-robust (2/3). D: non-robust (1/2). E: unscored form.
    return [item("a1", "A", False), item("a2", "A", False), item("a3", "A", False, "long"),
            item("b1", "B", True), item("b2", "B", True, "long"),
            item("c1", "C", True, docs=("d1",)), item("c2", "C", True, "long", ("d1", "d2")),
            item("c3", "C", False, "long", ("d9",)),
            item("d1", "D", True, docs=("d5",)), item("d2", "D", False, "long", ("d5",)),
            item("e1", "B", None, "long")]


def test_groups_and_metrics_by_hand() -> None:
    items = scripted_run()
    kinds = {g.logic_id: g.kind for g in group_results(items)}
    assert kinds == {"A": "gap", "B": "robust", "C": "non_robust", "D": "non_robust"}
    m = metrics(items)
    # 10 scored, 5 correct, 3 in the gap group, 1 unscored.
    assert (m.total, m.correct, m.gap_items, m.unscored) == (10, 5, 3, 1)
    assert m.robustness == pytest.approx(5 / 7)                     # eq. 1
    assert m.accuracy == pytest.approx((5 / 7) * (10 - 3) / 10)      # eq. 2
    assert m.accuracy == pytest.approx(5 / 10)                       # = plain accuracy
    assert m.gap_share == pytest.approx(0.3)
    assert m.groups == {"gap": 1, "robust": 1, "non_robust": 2}


def test_cluster_metrics_use_groups_over_all_forms() -> None:
    items = scripted_run()
    kinds = {g.logic_id: g.kind for g in group_results(items)}
    short = metrics(items, kinds=kinds, cluster="short")
    long = metrics(items, kinds=kinds, cluster="long")
    # short: a1 a2 (gap), b1, c1, d1 -> 5 scored, 3 correct, 2 gap -> R 3/3, Acc 3/5
    assert (short.total, short.correct, short.gap_items, short.robustness, short.accuracy) == (5, 3, 2, 1.0, 0.6)
    # long: a3 (gap), b2, c2, c3, d2 -> 5 scored, 2 correct, 1 gap -> R 2/4, Acc 2/5
    assert (long.total, long.correct, long.gap_items, long.robustness) == (5, 2, 1, 0.5)
    assert long.accuracy == pytest.approx(0.4)


def test_accuracy_ranks_clusters_wrongly_when_gap_rates_differ() -> None:
    """Section 4.2: with unbalanced sampling the robust cluster (short) carries many more gap items;
    accuracy then calls the long cluster the better one, while R, which excludes gap groups, ranks
    them the right way round."""
    items = [item(f"g{i}", "G", False) for i in range(10)] + [item("g-long", "G", False, "long")]
    for logic in ("R1", "R2"):
        items += [item(f"{logic}s", logic, True), item(f"{logic}l", logic, True, "long")]
    for logic in ("N1", "N2"):
        items += [item(f"{logic}s", logic, True), item(f"{logic}l", logic, False, "long")]
    kinds = {g.logic_id: g.kind for g in group_results(items)}
    short = metrics(items, kinds=kinds, cluster="short")
    long = metrics(items, kinds=kinds, cluster="long")
    assert short.accuracy == pytest.approx(4 / 14) and long.accuracy == pytest.approx(2 / 5)
    assert short.accuracy < long.accuracy          # accuracy: short looks less robust (wrong)
    assert short.robustness == 1.0 and long.robustness == pytest.approx(2 / 4)
    assert short.robustness > long.robustness      # R: short is the robust cluster (right)
    assert short.gap_share == pytest.approx(10 / 14) and long.gap_share == pytest.approx(1 / 5)
    # Stratified sampling (one short and one long form per logic) removes the distortion.
    balanced = [i for i in items if not (i.logic_id == "G" and i.id not in ("g0", "g-long"))]
    bk = {g.logic_id: g.kind for g in group_results(balanced)}
    assert metrics(balanced, kinds=bk, cluster="short").accuracy > metrics(balanced, kinds=bk, cluster="long").accuracy


def test_context_comparison_attributes_failures() -> None:
    items = scripted_run()
    attribution = attribute_failures(items)
    # c3 saw only d9, never used by a correct answer of C: retrieval. d2 saw d5, which served d1: LM.
    assert attribution == {"c3": "retrieval", "d2": "lm"}
    retrieval_view = without_lm_failures(items)
    assert {i.id for i in items} - {i.id for i in retrieval_view} == {"d2"}
    m = metrics(retrieval_view)
    assert m.robustness == pytest.approx(5 / 6)


def test_context_comparison_unknown_without_documents() -> None:
    items = [item("x1", "X", True, docs=("d1",)), item("x2", "X", False)]
    assert attribute_failures(items) == {"x2": "unknown"}


def test_all_gap_gives_undefined_robustness_and_zero_accuracy() -> None:
    m = metrics([item("a", "A", False), item("b", "B", False)])
    assert m.robustness is None and m.accuracy == 0.0
    empty = metrics([item("a", "A", None)])
    assert empty.robustness is None and empty.accuracy is None and empty.unscored == 1


def test_cmh_matches_hand_computation_and_ignores_gap_and_robust_strata() -> None:
    items = []
    for logic in ("N1", "N2"):  # short 2/2 correct, long 0/2 correct
        items += [item(f"{logic}s1", logic, True), item(f"{logic}s2", logic, True),
                  item(f"{logic}l1", logic, False, "long"), item(f"{logic}l2", logic, False, "long")]
    # Per stratum: a = 2, E[a] = 2*2/4 = 1, Var = 2*2*2*2 / (4^2 * 3) = 1/3.
    expected = (abs(4 - 2) - 0.5) ** 2 / (2 / 3)
    c = compare_clusters(items, "short", "long")
    assert c.statistic == pytest.approx(expected) == pytest.approx(3.375)
    assert c.p_value == pytest.approx(stats.chi2.sf(3.375, 1))
    assert c.informative_strata == 2
    assert c.fisher_table == [[4, 0], [0, 4]]
    assert c.fisher_p_value == pytest.approx(stats.fisher_exact([[4, 0], [0, 4]])[1])
    extra = items + [item("Rs", "R", True), item("Rl", "R", True, "long"),
                     item("Gs", "G", False), item("Gl", "G", False, "long")]
    c2 = compare_clusters(extra, "short", "long")
    assert c2.statistic == pytest.approx(expected)       # no variance in gap or robust strata
    assert c2.fisher_table == [[5, 0], [1, 4]]           # gap items left out of the pooled table


def test_cmh_undefined_without_informative_strata() -> None:
    c = compare_clusters([item("a", "A", True), item("b", "A", True, "long")], "short", "long")
    assert c.p_value is None and c.note is not None


def test_wilson_interval_by_hand() -> None:
    p = wilson_interval(8, 10)
    z = stats.norm.ppf(0.975)
    centre = (0.8 + z * z / 20) / (1 + z * z / 10)
    half = z * math.sqrt(0.8 * 0.2 / 10 + z * z / 400) / (1 + z * z / 10)
    assert (p.low, p.high) == (pytest.approx(centre - half), pytest.approx(centre + half))
    zero = wilson_interval(0, 5)
    assert zero.low == 0.0 and zero.high == pytest.approx(z * z / (5 + z * z))
    assert wilson_interval(0, 0).value is None


def test_binary_reliability_optimism_and_cynicism() -> None:
    truth = [True, True, True, False, False, False, False, None]
    predicted = [True, False, True, True, True, True, False, True]
    r = binary_reliability(truth, predicted)
    assert (r.tp, r.fp, r.fn, r.tn, r.skipped) == (2, 3, 1, 1, 1)
    assert r.precision.value == pytest.approx(2 / 5)   # optimistic: passes 3 of 4 wrong answers
    assert r.recall.value == pytest.approx(2 / 3)
    assert r.precision.low < 0.4 < r.precision.high
