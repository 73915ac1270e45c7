"""Two independent groups of scores (two time windows of production traffic, whose items differ):
did the second fall below the first?

:func:`mann_whitney` is the two-sided Mann-Whitney U test (scipy's, exact for small groups without
ties, the normal approximation with the tie correction otherwise); :func:`bootstrap_mean_shift` a
seeded percentile bootstrap interval of the difference of means, each group resampled on its own.

>>> r = mann_whitney([0.9, 0.8, 1.0, 0.95, 0.85], [0.2, 0.3, 0.1, 0.25, 0.4])
>>> round(r.p_value, 4), r.n_a, r.n_b
(0.0079, 5, 5)
>>> bootstrap_mean_shift([1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0], seed=0)  # four items a side: wide
(-1.0, 0.25)
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import NamedTuple

from ..errors import ArgumentError

__all__ = ["MannWhitney", "bootstrap_mean_shift", "mann_whitney"]


class MannWhitney(NamedTuple):
    u: float
    p_value: float
    n_a: int
    n_b: int


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> MannWhitney | None:
    """The two-sided test of ``a`` against ``b``; None when a group is empty or every value is equal
    (no ordering to test)."""
    if not a or not b or len(set(a) | set(b)) < 2:
        return None
    from scipy.stats import mannwhitneyu  # only a comparison needs it

    result = mannwhitneyu(list(a), list(b), alternative="two-sided", method="auto")
    return MannWhitney(u=float(result.statistic), p_value=float(result.pvalue), n_a=len(a), n_b=len(b))


def bootstrap_mean_shift(a: Sequence[float], b: Sequence[float], *, level: float = 0.95, resamples: int = 2000,
                         seed: int = 0) -> tuple[float, float] | None:
    """The percentile interval of mean(b) - mean(a), each group resampled with replacement."""
    if not 0 < level < 1:
        raise ArgumentError(f"level {level}: must lie between 0 and 1")
    if not a or not b:
        return None
    rng = random.Random(seed)
    shifts = sorted(math.fsum(rng.choices(b, k=len(b))) / len(b) - math.fsum(rng.choices(a, k=len(a))) / len(a)
                    for _ in range(resamples))
    tail = (1 - level) / 2
    return shifts[int(tail * (resamples - 1))], shifts[int(math.ceil((1 - tail) * (resamples - 1)))]
