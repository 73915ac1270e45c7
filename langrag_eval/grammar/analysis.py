"""Modular evaluation maths (GRAMMAR section 3.3 and 4): pure functions over graded items.

* **Groups.** All text forms of one SQL logic form a group: *gap* when every form was answered
  wrongly (a knowledge gap: the retrieval database or the model lacks it), *robust* when every form
  was answered correctly, *non-robust* otherwise. Groups are formed over all forms of a logic,
  across clusters, so a logic answered only in its short phrasings counts as non-robust, not as a
  gap of the long cluster. Unscored items take no part.
* **Robustness** (eq. 1): correct / (total - items in gap groups). **Accuracy** (eq. 2):
  R x (total - gap items) / total, which equals correct / total.
* **Context comparison**: a wrong answer in a non-robust group whose retrieved documents include one
  that also served a correct answer in the same group had sufficient context, so the LM failed;
  otherwise retrieval failed. Valid when one document suffices for a logic, as the paper assumes.
* **Cluster comparison**: Cochran-Mantel-Haenszel test of correctness between two clusters (say
  short vs long phrasings), stratified by SQL logic. Forms of one logic are not independent draws,
  and stratifying compares phrasings of the same question; gap and robust groups have no variance
  and drop out of the statistic, just as the paper drops gap groups from R. Fisher's exact test on
  the pooled non-gap counts is reported beside it as a check that ignores the pairing.
* **Reliability of a reference-free evaluator**: its verdicts as a binary classifier of correctness;
  precision (low = optimistic) and recall (low = cynical) with 95 % Wilson score intervals, which
  keep their coverage near 0 and 1 and at small n, where the normal (Z) interval does not.

>>> items = [ItemResult(id="a1", logic_id="a", correct=True), ItemResult(id="a2", logic_id="a", correct=False),
...          ItemResult(id="b1", logic_id="b", correct=False), ItemResult(id="b2", logic_id="b", correct=False)]
>>> m = metrics(items)
>>> (m.robustness, m.accuracy, m.gap_items)
(0.5, 0.25, 2)
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import ArgumentError

__all__ = [
    "ClusterComparison",
    "Group",
    "ItemResult",
    "Metrics",
    "Proportion",
    "Reliability",
    "attribute_failures",
    "binary_reliability",
    "compare_clusters",
    "group_results",
    "metrics",
    "wilson_interval",
    "without_lm_failures",
]

GroupKind = Literal["gap", "robust", "non_robust"]
Attribution = Literal["retrieval", "lm", "unknown"]


class ItemResult(BaseModel):
    """One graded text query. ``correct`` is None when the grade could not be made."""

    model_config = ConfigDict(frozen=True)

    id: str
    logic_id: str
    cluster: str | None = None
    correct: bool | None
    doc_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Group:
    logic_id: str
    kind: GroupKind
    correct: int
    total: int
    items: tuple[ItemResult, ...]


def group_results(items: Iterable[ItemResult]) -> list[Group]:
    """Tag every SQL logic as gap, robust or non-robust from its scored forms."""
    by_logic: dict[str, list[ItemResult]] = defaultdict(list)
    for item in items:
        if item.correct is not None:
            by_logic[item.logic_id].append(item)
    groups = []
    for logic, forms in by_logic.items():
        correct = sum(1 for f in forms if f.correct)
        kind: GroupKind = "gap" if correct == 0 else "robust" if correct == len(forms) else "non_robust"
        groups.append(Group(logic, kind, correct, len(forms), tuple(forms)))
    return groups


class Metrics(BaseModel):
    """Counts and the two metrics for a set of items (a whole run or one cluster)."""

    total: int
    correct: int
    unscored: int
    gap_items: int
    groups: dict[str, int]
    gap_share: float | None          # lambda: share of scored items that sit in gap groups
    robustness: float | None         # eq. 1; None when every item is in a gap group
    accuracy: float | None           # eq. 2; None when nothing was scored


def metrics(items: Sequence[ItemResult], *, kinds: dict[str, GroupKind] | None = None,
            cluster: str | None = None) -> Metrics:
    """R and Acc over ``items`` (restricted to ``cluster`` when given). ``kinds`` maps logic ids to
    group kinds computed on a larger set (all clusters); by default they come from ``items``."""
    kinds = kinds if kinds is not None else {g.logic_id: g.kind for g in group_results(items)}
    chosen = [i for i in items if cluster is None or i.cluster == cluster]
    scored = [i for i in chosen if i.correct is not None]
    total = len(scored)
    correct = sum(1 for i in scored if i.correct)
    gap = sum(1 for i in scored if kinds.get(i.logic_id) == "gap")
    logics = {i.logic_id for i in scored}
    counts = {k: sum(1 for lid in logics if kinds.get(lid) == k) for k in ("gap", "robust", "non_robust")}
    robustness = correct / (total - gap) if total - gap > 0 else None
    if total == 0:
        accuracy = None
    elif robustness is None:
        accuracy = 0.0  # every scored item sits in a gap group, so none is correct
    else:
        accuracy = robustness * (total - gap) / total
    return Metrics(total=total, correct=correct, unscored=len(chosen) - total, gap_items=gap,
                   groups=counts, gap_share=gap / total if total else None,
                   robustness=robustness, accuracy=accuracy)


def attribute_failures(items: Sequence[ItemResult]) -> dict[str, Attribution]:
    """Context comparison: for each wrong answer in a non-robust group, ``lm`` when one of its
    documents also served a correct answer of the same logic, ``retrieval`` when none did, and
    ``unknown`` when the item recorded no documents."""
    out: dict[str, Attribution] = {}
    for group in group_results(items):
        if group.kind != "non_robust":
            continue
        sufficient = {d for f in group.items if f.correct for d in f.doc_ids}
        for f in group.items:
            if f.correct:
                continue
            if not f.doc_ids:
                out[f.id] = "unknown"
            else:
                out[f.id] = "lm" if sufficient.intersection(f.doc_ids) else "retrieval"
    return out


def without_lm_failures(items: Sequence[ItemResult]) -> list[ItemResult]:
    """The retrieval-only view (Table 2, "+Modular Evaluation (Retrieval)"): drop the wrong answers
    that context comparison blames on the LM, so what remains measures the retrieval module."""
    blamed = {k for k, v in attribute_failures(items).items() if v == "lm"}
    return [i for i in items if i.id not in blamed]


class ClusterComparison(BaseModel):
    a: str
    b: str
    test: str = "cochran-mantel-haenszel (stratified by SQL logic, continuity-corrected)"
    informative_strata: int
    statistic: float | None
    p_value: float | None
    common_odds_ratio: float | None   # odds of a correct answer in a relative to b
    fisher_p_value: float | None      # pooled non-gap 2x2 table, items treated as independent
    fisher_table: list[list[int]]
    note: str | None = None


def compare_clusters(items: Sequence[ItemResult], a: str, b: str) -> ClusterComparison:
    """Is correctness different between clusters ``a`` and ``b``? See the module docstring."""
    kinds = {g.logic_id: g.kind for g in group_results(items)}
    strata: dict[str, list[list[int]]] = defaultdict(lambda: [[0, 0], [0, 0]])
    pooled = [[0, 0], [0, 0]]
    for i in items:
        if i.correct is None or i.cluster not in (a, b):
            continue
        row, col = (0 if i.cluster == a else 1), (0 if i.correct else 1)
        strata[i.logic_id][row][col] += 1
        if kinds.get(i.logic_id) != "gap":
            pooled[row][col] += 1
    sum_a = sum_e = sum_v = num = den = 0.0
    informative = 0
    for (x, y), (z, w) in strata.values():
        n = x + y + z + w
        if x + y == 0 or z + w == 0 or n < 2:
            continue  # the logic was asked in one cluster only: nothing to compare within it
        var = (x + y) * (z + w) * (x + z) * (y + w) / (n * n * (n - 1))
        if var > 0:
            informative += 1
        sum_a += x
        sum_e += (x + y) * (x + z) / n
        sum_v += var
        num += x * w / n
        den += y * z / n
    statistic = p_value = None
    note = None
    from scipy import stats  # imported on use: the CLI imports this module for every command

    if sum_v > 0:
        statistic = max(abs(sum_a - sum_e) - 0.5, 0.0) ** 2 / sum_v
        p_value = float(stats.chi2.sf(statistic, 1))
    else:
        note = ("no SQL logic has both correct and wrong answers across the two clusters: "
                "the stratified test is undefined")
    odds = num / den if den > 0 else (math.inf if num > 0 else None)
    fisher = None
    if sum(map(sum, pooled)) > 0 and all(sum(r) > 0 for r in pooled):
        fisher = float(stats.fisher_exact(pooled)[1])
    return ClusterComparison(a=a, b=b, informative_strata=informative, statistic=statistic,
                             p_value=p_value, common_odds_ratio=None if odds is None or math.isinf(odds) else odds,
                             fisher_p_value=fisher, fisher_table=pooled, note=note)


class Proportion(BaseModel):
    """A proportion with its 95 % Wilson score interval; ``value`` is None when n is 0."""

    successes: int
    n: int
    value: float | None
    low: float | None
    high: float | None


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> Proportion:
    """Wilson score interval for a binomial proportion.

    >>> p = wilson_interval(8, 10)
    >>> round(p.low, 4), round(p.high, 4)
    (0.4902, 0.9433)
    """
    if n == 0:
        return Proportion(successes=0, n=0, value=None, low=None, high=None)
    from scipy import stats

    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    phat = successes / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return Proportion(successes=successes, n=n, value=phat, low=max(0.0, centre - half),
                      high=min(1.0, centre + half))


class Reliability(BaseModel):
    """A reference-free evaluator scored against reference-based truth (positive = correct)."""

    tp: int
    fp: int
    fn: int
    tn: int
    skipped: int
    precision: Proportion   # low precision: optimistic, passes wrong answers
    recall: Proportion      # low recall: cynical, fails right answers


def binary_reliability(truth: Sequence[bool | None], predicted: Sequence[bool | None]) -> Reliability:
    """Precision and recall of ``predicted`` against ``truth``; pairs with either side None are
    skipped and counted."""
    if len(truth) != len(predicted):
        raise ArgumentError("truth and predicted must have the same length")
    tp = fp = fn = tn = skipped = 0
    for t, p in zip(truth, predicted):
        if t is None or p is None:
            skipped += 1
        elif p and t:
            tp += 1
        elif p:
            fp += 1
        elif t:
            fn += 1
        else:
            tn += 1
    return Reliability(tp=tp, fp=fp, fn=fn, tn=tn, skipped=skipped,
                       precision=wilson_interval(tp, tp + fp), recall=wilson_interval(tp, tp + fn))
