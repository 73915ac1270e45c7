"""95 % intervals for the figures a judge card prints: Wilson score intervals for proportions and
percentile bootstrap intervals for anything else (kappa, means, latency percentiles).

Every estimate carries its ``n``; an estimate over no items has ``value`` None (never NaN), and a
statistic the data leave undefined in a bootstrap resample (kappa of a constant) is left out of
the resamples, with the resamples kept counted.

>>> e = wilson(8, 10)
>>> round(e.low, 4), round(e.high, 4), e.n
(0.4902, 0.9433, 10)
>>> b = bootstrap([1.0, 2.0, 3.0, 4.0], lambda xs: sum(xs) / len(xs), seed=0)
>>> b.value, b.low <= 2.5 <= b.high
(2.5, True)
>>> bootstrap_values([0.1, 0.2, 0.4], 50, seed=0).value
0.2
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from ..errors import ArgumentError

__all__ = ["Estimate", "wilson", "bootstrap", "bootstrap_values", "mean_interval", "percentile"]

X = TypeVar("X")


class Estimate(BaseModel):
    """A figure with its 95 % interval and the number of items it rests on."""

    model_config = ConfigDict(frozen=True)

    value: float | None
    low: float | None
    high: float | None
    n: int
    method: str                 # "wilson", "bootstrap" or "t"
    successes: int | None = None

    def contains(self, x: float) -> bool:
        """True when ``x`` lies inside the interval (False when there is none)."""
        return self.low is not None and self.high is not None and self.low <= x <= self.high


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def wilson(successes: int, n: int, *, confidence: float = 0.95) -> Estimate:
    """The Wilson score interval of ``successes / n`` (Wilson 1927); no value when n is 0.

    >>> wilson(0, 0).value is None
    True
    """
    if not 0 <= successes <= n:
        raise ArgumentError(f"successes must lie between 0 and n, got {successes} of {n}")
    if n == 0:
        return Estimate(value=None, low=None, high=None, n=0, method="wilson", successes=0)
    z = _z(confidence)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at 0 and n the bounds are exactly 0 and 1; rounding would put them a hair inside, and the
    # estimate outside its own interval
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Estimate(value=p, low=low, high=high, n=n, method="wilson", successes=successes)


def mean_interval(values: Sequence[float], *, confidence: float = 0.95) -> Estimate:
    """The mean with Student's t interval, ``mean ± t(n-1) · s / √n``; no interval for one value,
    no value for none.

    >>> e = mean_interval([1.0, 2.0, 3.0, 4.0])
    >>> e.value, round(e.low, 4), round(e.high, 4)
    (2.5, 0.4457, 4.5543)
    """
    n = len(values)
    if n == 0:
        return Estimate(value=None, low=None, high=None, n=0, method="t")
    mean = math.fsum(values) / n
    if n == 1:
        return Estimate(value=mean, low=None, high=None, n=1, method="t")
    from scipy.stats import t  # only a summary needs it

    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(t.ppf(1 - (1 - confidence) / 2, n - 1)) * sd / math.sqrt(n)
    return Estimate(value=mean, low=mean - half, high=mean + half, n=n, method="t")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between order statistics (numpy's
    default). ``values`` must not be empty.

    >>> percentile([1, 2, 3, 4], 50)
    2.5
    """
    if not values:
        raise ArgumentError("percentile of no values")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))


def bootstrap(items: Sequence[X], statistic: Callable[[Sequence[X]], float | None], *,
              resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> Estimate:
    """Percentile bootstrap interval of ``statistic`` over ``items`` resampled with replacement.
    ``statistic`` may return None where it is undefined; such resamples are skipped."""
    n = len(items)
    value = statistic(items) if n else None
    if value is None:
        return Estimate(value=None, low=None, high=None, n=n, method="bootstrap")
    rng = random.Random(seed)
    stats: list[float] = []
    for _ in range(resamples):
        sample = [items[rng.randrange(n)] for _ in range(n)]
        s = statistic(sample)
        if s is not None and math.isfinite(s):
            stats.append(float(s))
    if not stats:
        return Estimate(value=float(value), low=None, high=None, n=n, method="bootstrap")
    alpha = (1 - confidence) / 2 * 100
    return Estimate(value=float(value), low=percentile(stats, alpha), high=percentile(stats, 100 - alpha),
                    n=n, method="bootstrap")



def bootstrap_values(values: Sequence[float], q: float | None = None, *, resamples: int = 1000,
                     seed: int = 0, confidence: float = 0.95) -> Estimate:
    """The percentile bootstrap of the mean (``q`` None) or of the ``q``-th percentile of plain
    numbers, vectorised: a judge card has thousands of latencies, too many to resample in Python."""
    import numpy as np

    n = len(values)
    if n == 0:
        return Estimate(value=None, low=None, high=None, n=0, method="bootstrap")
    arr = np.asarray(values, dtype=float)
    draws = arr[np.random.default_rng(seed).integers(0, n, size=(resamples, n))]
    stats = draws.mean(axis=1) if q is None else np.percentile(draws, q, axis=1)
    value = float(arr.mean()) if q is None else percentile(list(values), q)
    alpha = (1 - confidence) / 2 * 100
    return Estimate(value=value, low=float(np.percentile(stats, alpha)),
                    high=float(np.percentile(stats, 100 - alpha)), n=n, method="bootstrap")
