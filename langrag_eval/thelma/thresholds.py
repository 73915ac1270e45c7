"""The diagnosis's thresholds (:class:`Thresholds`), in a module of their own: ``langrag-eval thelma
--help`` makes its options from them without loading pydantic. :mod:`.diagnosis` re-exports them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import ArgumentError

__all__ = ["Thresholds"]


@dataclass(frozen=True)
class Thresholds:
    """Where a score counts as low (``score < low``) or high (``score >= high``), with optional
    per-metric overrides, e.g. ``Thresholds(low={"gr": 0.9})`` for a use case that tolerates no
    ungrounded claim."""

    default_low: float = field(default=0.5, metadata={"description": "a score below this is low"})
    default_high: float = field(default=0.7, metadata={"description": "a score from this up is high"})
    low: Mapping[str, float] = field(default_factory=dict)
    high: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for metric in set(self.low) | set(self.high) | {"_"}:
            lo, hi = self.low_of(metric), self.high_of(metric)
            if not 0.0 <= lo <= hi <= 1.0:
                raise ArgumentError(f"thresholds for {metric}: need 0 <= low ({lo}) <= high ({hi}) <= 1")

    def low_of(self, metric: str) -> float:
        return self.low.get(metric, self.default_low)

    def high_of(self, metric: str) -> float:
        return self.high.get(metric, self.default_high)

    def is_low(self, metric: str, score: float) -> bool:
        return score < self.low_of(metric)

    def is_high(self, metric: str, score: float) -> bool:
        return score >= self.high_of(metric)
