"""Significance and agreement for RAGElo's pointwise scores (sections 7.1 and 7.2.2).

- :func:`paired_t_test`: two-sided paired t-test between two agents' scores on the same queries
  (the paper compares RAG and RAG-Fusion per criterion at alpha 0.05).
- :func:`bland_altman`: mean difference (bias) between LLM and human scores and the 95% limits of
  agreement, bias +/- 1.96 standard deviations of the differences.
- :func:`judge_human_agreement`: Kendall tau-b, Spearman and Bland-Altman between an LLM judge and
  human scores, flattened over criteria and agents as the paper does.

Undefined statistics (fewer than two pairs, zero variance) are None with a note, never NaN.

>>> round(paired_t_test([2, 2, 1, 2], [1, 1, 1, 0]).t, 3)
2.449
>>> ba = bland_altman([2, 1, 2, 0], [1, 1, 2, 1])
>>> ba.bias, ba.n
(0.0, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


from ..errors import ArgumentError
from .agreement import Correlation, kendall_tau, spearman

__all__ = [
    "BlandAltman",
    "JudgeHumanAgreement",
    "TTest",
    "bland_altman",
    "judge_human_agreement",
    "paired_t_test",
]


def _scipy_stats():  # imported on first use: a command's --help must not pay for scipy.stats
    from scipy import stats

    return stats


@dataclass(frozen=True)
class TTest:
    """``mean_difference`` is mean(a - b); t and p are None when undefined, with ``note`` saying why."""

    n: int
    mean_difference: float | None
    t: float | None
    p: float | None
    note: str | None = None

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p is not None and self.p < alpha


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> TTest:
    """Two-sided paired t-test of ``a`` against ``b`` (equal length, paired by position)."""
    if len(a) != len(b):
        raise ArgumentError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    n = len(a)
    if n < 2:
        return TTest(n, None if n == 0 else float(a[0] - b[0]), None, None, "fewer than two pairs")
    diffs = [x - y for x, y in zip(a, b)]
    mean = sum(diffs) / n
    if all(d == diffs[0] for d in diffs):
        return TTest(n, mean, None, None, "the differences are constant: the t statistic is undefined")
    result = _scipy_stats().ttest_rel(a, b)
    return TTest(n, mean, float(result.statistic), float(result.pvalue))


@dataclass(frozen=True)
class BlandAltman:
    n: int
    bias: float | None
    sd: float | None
    lower: float | None
    upper: float | None


def bland_altman(llm: Sequence[float], human: Sequence[float]) -> BlandAltman:
    """Bias (mean of llm - human) and limits of agreement (bias +/- 1.96 sd, sample sd)."""
    if len(llm) != len(human):
        raise ArgumentError(f"paired samples differ in length: {len(llm)} vs {len(human)}")
    n = len(llm)
    if n == 0:
        return BlandAltman(0, None, None, None, None)
    diffs = [x - y for x, y in zip(llm, human)]
    bias = sum(diffs) / n
    if n < 2:
        return BlandAltman(n, bias, None, None, None)
    sd = math.sqrt(sum((d - bias) ** 2 for d in diffs) / (n - 1))
    return BlandAltman(n, bias, sd, bias - 1.96 * sd, bias + 1.96 * sd)


@dataclass(frozen=True)
class JudgeHumanAgreement:
    n: int
    kendall_tau_b: Correlation | None
    spearman: Correlation | None
    bland_altman: BlandAltman


def judge_human_agreement(llm: Sequence[int], human: Sequence[int]) -> JudgeHumanAgreement:
    """Section 7.1's comparison on paired score lists (already flattened over criteria and agents)."""
    return JudgeHumanAgreement(n=len(llm), kendall_tau_b=kendall_tau(list(llm), list(human)),
                               spearman=spearman(list(llm), list(human)),
                               bland_altman=bland_altman(llm, human))
