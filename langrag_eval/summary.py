"""The typed dataset summary every evaluator gives (:meth:`~langrag_eval.evaluator.Evaluator.summarize`):
how many items, how many were scored, the unscored ones by cause, and per score name its mean with
a 95 % interval (Wilson for a yes/no score, Student's t otherwise), spread and pass rate, computed
from the typed scores alone, the same way for every capability. ``details`` holds what a
capability adds (vRAG-Eval's grade distribution and subjects, THELMA's diagnosis and usage).

>>> from langrag_eval.results import ScoreScale, Unscored
>>> grade = ScoreScale(1, 5)
>>> items = [[grade.score("grade", 5, passed=True)], [grade.score("grade", 2, passed=False)],
...          [grade.unscored("grade", Unscored(reason="no reply", cause="timeout"))]]
>>> s = summarize_scores(items, [None, None, "timeout"])
>>> s.n, s.scored, s.unscored, s.scores["grade"].mean, s.scores["grade"].pass_rate
(3, 2, {'timeout': 1}, 3.5, 0.5)
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .errors import ArgumentError
from .results import Score

__all__ = ["ScoreSummary", "Summary", "summarize_scores"]


class ScoreSummary(BaseModel):
    """One score name over a dataset: ``n`` scored items, their mean with its interval
    (``low``..``high``, None with fewer than two), standard deviation, min and max; ``pass_rate``
    over the scored items whose score says pass or fail (None where none does); unscored by cause."""

    model_config = ConfigDict(frozen=True)

    name: str
    scale_low: float
    scale_high: float
    higher_is_better: bool = True
    binary: bool = False
    n: int
    mean: float | None
    low: float | None
    high: float | None
    interval: str
    std: float | None
    min: float | None
    max: float | None
    passed: int = 0
    pass_rate: float | None = None
    unscored: dict[str, int] = Field(default_factory=dict)


class Summary(BaseModel):
    """A dataset's results: ``n`` items, ``scored`` (judged as a whole), ``unscored`` items by cause,
    and each score name's :class:`ScoreSummary`; ``details``: what the capability adds."""

    model_config = ConfigDict(frozen=True)

    n: int
    scored: int
    unscored: dict[str, int] = Field(default_factory=dict)
    scores: dict[str, ScoreSummary] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


class _Tally:
    """One score name's figures gathered item by item: its first score (the scale), the values,
    the pass/fail calls and the causes, not every ``Score`` (a summary's memory stays small)."""

    __slots__ = ("first", "values", "calls", "causes")

    def __init__(self, first: Score) -> None:
        self.first = first
        self.values: list[float] = []
        self.calls: list[bool] = []
        self.causes: Counter[str] = Counter()

    def add(self, s: Score) -> None:
        if s.value is not None:
            self.values.append(float(s.value))
        if s.passed is not None:
            self.calls.append(s.passed)
        if s.cause is not None:
            self.causes[s.cause] += 1


def _one(name: str, tally: _Tally) -> ScoreSummary:
    from .stats.intervals import mean_interval, wilson  # a summary alone needs the statistics

    first, values = tally.first, tally.values
    if first.binary and values:
        estimate = wilson(sum(v == first.high for v in values), len(values))
        # a yes/no score's mean is the share of "yes", on its own scale
        width = first.high - first.low
        mean, low, high = (first.low + width * x if x is not None else None
                           for x in (estimate.value, estimate.low, estimate.high))
    else:
        estimate = mean_interval(values)
        mean, low, high = estimate.value, estimate.low, estimate.high
    calls = tally.calls
    return ScoreSummary(
        name=name, scale_low=first.low, scale_high=first.high, higher_is_better=first.higher_is_better,
        binary=first.binary, n=len(values), mean=mean, low=low, high=high, interval=estimate.method,
        std=(statistics.stdev(values) if len(values) > 1 else 0.0) if values else None,
        min=min(values) if values else None, max=max(values) if values else None,
        passed=sum(calls), pass_rate=sum(calls) / len(calls) if calls else None,
        unscored=dict(tally.causes))


def summarize_scores(items: Iterable[Sequence[Score]], causes: Sequence[str | None],
                     details: dict[str, Any] | None = None) -> Summary:
    """The summary of a dataset from each item's typed scores and, per item, the cause it was
    unscored as a whole (None when it was judged). Score names keep their first-seen order.
    ``items`` may be a generator: it is read once, item by item."""
    by_name: dict[str, _Tally] = {}
    n = 0
    for scores in items:
        n += 1
        for s in scores:
            tally = by_name.get(s.name)
            if tally is None:
                tally = by_name[s.name] = _Tally(s)
            tally.add(s)
    if n != len(causes):
        raise ArgumentError("items and causes must run parallel")
    whole = Counter(c for c in causes if c is not None)
    return Summary(n=n, scored=n - sum(whole.values()), unscored=dict(whole),
                   scores={name: _one(name, tally) for name, tally in by_name.items()},
                   details=details or {})
