"""Paired tests and intervals for comparing two runs on the same items: pure functions over plain data.

- :func:`mcnemar`: accept/reject on the same items. Exact binomial test on the discordant pairs when
  there are fewer than 25 of them, else the chi-square statistic with continuity correction
  (the same numbers as statsmodels' ``mcnemar(table, exact=..., correction=True)``).
- :func:`paired_proportion_interval`: Agresti and Min (2005) interval for the difference of two
  matched proportions: a Wald interval after adding 0.5 to each cell of the 2x2 table, which keeps
  close to its nominal coverage even with few discordant pairs, where the plain Wald interval does not.
- :func:`wilcoxon_signed_rank`: 1-5 grades and THELMA scores. Zero differences are dropped
  (Wilcoxon's rule); exact null distribution for up to 50 non-zero differences without ties, else
  the normal approximation with the tie correction and no continuity correction (scipy's
  ``wilcoxon(d, zero_method="wilcox", correction=False)``).
- :func:`bootstrap_mean_difference`: percentile interval of the mean paired difference from
  resampled items, seeded.
- :func:`holm`: Holm's step-down adjustment of p-values for several metrics tested at once.

Undefined results (no pair, no discordant pair) are ``None``, never NaN.

>>> r = mcnemar(b=12, c=3)
>>> r.method, round(r.p_value, 4)
('exact', 0.0352)
>>> low, high = paired_proportion_interval(b=12, c=3, n=100)
>>> round(low, 3), round(high, 3)
(-0.163, -0.013)
>>> w = wilcoxon_signed_rank([1, 2, -3, 4, 5, 6])
>>> w.statistic, w.method, round(w.p_value, 4)
(3.0, 'exact', 0.1562)
>>> holm([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import ArgumentError

__all__ = [
    "EXACT_MCNEMAR_BELOW",
    "EXACT_WILCOXON_UP_TO",
    "McNemar",
    "Wilcoxon",
    "bootstrap_mean_difference",
    "holm",
    "mcnemar",
    "paired_proportion_interval",
    "wilcoxon_signed_rank",
]


def _scipy_stats():  # imported on first use: a command's --help must not pay for scipy.stats
    from scipy import stats

    return stats

EXACT_MCNEMAR_BELOW = 25   # discordant pairs; the usual rule for when chi-square is good enough
EXACT_WILCOXON_UP_TO = 50  # non-zero differences; scipy's own limit for its exact method


@dataclass(frozen=True)
class McNemar:
    """``b``: yes in the first run, no in the second; ``c``: the reverse. ``statistic`` is
    ``min(b, c)`` for the exact test and the corrected chi-square otherwise."""

    b: int
    c: int
    statistic: float
    p_value: float
    method: str  # "exact" or "chi2"


def mcnemar(b: int, c: int, *, exact: bool | None = None) -> McNemar:
    """McNemar's test on the discordant counts. ``exact=None`` chooses: exact below 25 discordant pairs.

    >>> mcnemar(0, 0).p_value
    1.0
    """
    if b < 0 or c < 0:
        raise ArgumentError("discordant counts cannot be negative")
    n = b + c
    if exact is None:
        exact = n < EXACT_MCNEMAR_BELOW
    if exact or n == 0:
        p = min(1.0, 2.0 * float(_scipy_stats().binom.cdf(min(b, c), n, 0.5))) if n else 1.0
        return McNemar(b=b, c=c, statistic=float(min(b, c)), p_value=p, method="exact")
    stat = (abs(b - c) - 1.0) ** 2 / n  # Edwards' continuity correction, as statsmodels writes it
    return McNemar(b=b, c=c, statistic=stat, p_value=float(_scipy_stats().chi2.sf(stat, 1)), method="chi2")


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ArgumentError(f"confidence level {level} is not between 0 and 1")
    return float(_scipy_stats().norm.ppf(0.5 + level / 2))


def paired_proportion_interval(b: int, c: int, n: int, *, level: float = 0.95) -> tuple[float, float] | None:
    """Interval for ``p_second - p_first`` = ``(c - b) / n`` over ``n`` matched pairs (Agresti-Min).
    ``None`` when there is no pair."""
    if n <= 0:
        return None
    if b + c > n:
        raise ArgumentError("more discordant pairs than pairs")
    b2, c2, n2 = b + 0.5, c + 0.5, n + 2.0
    diff = (c2 - b2) / n2
    var = ((b2 + c2) - (c2 - b2) ** 2 / n2) / n2 ** 2
    half = _z(level) * math.sqrt(max(var, 0.0))
    return max(-1.0, diff - half), min(1.0, diff + half)


@dataclass(frozen=True)
class Wilcoxon:
    """``statistic`` is the smaller of the positive and negative rank sums (scipy's two-sided
    statistic); ``n`` the non-zero differences it ranks; ``z`` only for the normal approximation."""

    statistic: float
    p_value: float
    n: int
    method: str  # "exact" or "normal"
    z: float | None = None


@lru_cache(maxsize=64)
def _signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many of the 2**n sign assignments give each positive rank sum 0..n(n+1)/2."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for k in range(1, n + 1):
        for s in range(len(counts) - 1, k - 1, -1):
            counts[s] += counts[s - k]
    return tuple(counts)


def wilcoxon_signed_rank(differences: Sequence[float], *, exact: bool | None = None) -> Wilcoxon | None:
    """Two-sided signed-rank test of paired differences (second minus first). ``None`` when every
    difference is zero. ``exact=None``: exact for up to 50 non-zero differences without ties."""
    d = np.asarray([x for x in differences if x != 0], dtype=float)
    n = int(d.size)
    if n == 0:
        return None
    ranks = _scipy_stats().rankdata(np.abs(d))
    r_plus = float(ranks[d > 0].sum())
    r_minus = float(ranks[d < 0].sum())
    t = min(r_plus, r_minus)
    ties = [k for k in Counter(np.abs(d).tolist()).values() if k > 1]
    if exact is None:
        exact = n <= EXACT_WILCOXON_UP_TO and not ties
    if exact:
        counts = np.asarray(_signed_rank_counts(n), dtype=float)
        cdf = counts[: int(math.floor(t)) + 1].sum() / 2.0 ** n
        return Wilcoxon(statistic=t, p_value=min(1.0, 2.0 * float(cdf)), n=n, method="exact")
    mean = n * (n + 1) / 4.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - sum(k ** 3 - k for k in ties) / 48.0
    if var <= 0:
        return Wilcoxon(statistic=t, p_value=1.0, n=n, method="normal", z=0.0)
    z = (t - mean) / math.sqrt(var)
    return Wilcoxon(statistic=t, p_value=min(1.0, 2.0 * float(_scipy_stats().norm.sf(abs(z)))), n=n,
                    method="normal", z=z)


def bootstrap_mean_difference(differences: Sequence[float], *, level: float = 0.95, resamples: int = 2000,
                              seed: int = 0) -> tuple[float, float] | None:
    """Percentile interval of the mean of ``differences`` from ``resamples`` resamples of the items
    (pairs stay together). ``None`` for fewer than two differences: one pair says nothing about
    spread, and an interval of width zero would read as certainty.

    >>> bootstrap_mean_difference([0.0] * 30)
    (0.0, 0.0)
    """
    d = np.asarray(differences, dtype=float)
    if d.size < 2:
        return None
    if resamples < 100:
        raise ArgumentError("use at least 100 bootstrap resamples")
    _z(level)  # checks the level
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // d.size)  # bounded memory for large runs
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, d.size, size=(stop - start, d.size))
        means[start:stop] = d[idx].mean(axis=1)
    alpha = 1.0 - level
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (statsmodels' ``multipletests(...,
    method="holm")``): the family-wise error rate stays at most alpha over all the tests."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
