"""THELMA's aggregate modules and result types, as pure functions over plain data.

Every metric is a macro average of 0/1 match verdicts (section 4), except source query coverage,
which first takes the max over source components for each sub-question (equation 4), and
self-distinctness, which counts sentences that repeat another one (section 4.5, Appendix A.5).
A verdict that could not be made makes the metric Unscored, never a silent 0.

>>> macro_average([1, 1, 0, 0, 0, 0, 1]).score
0.42857142857142855
>>> coverage([[1, 0], [0, 0]])
[1, 0]
>>> round(self_distinctness([[1.0, 0.39, 0.79], [0.39, 1.0, 0.11], [0.79, 0.11, 1.0]], 0.75)[0], 4)
0.3333
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ArgumentError
from ..results import Unscored

__all__ = [
    "METRICS",
    "METRIC_NAMES",
    "MetricOutcome",
    "MetricScore",
    "Verdict",
    "coverage",
    "first_failure",
    "macro_average",
    "self_distinctness",
]

METRICS: tuple[str, ...] = ("sp1", "sp2", "sqc", "rp", "rqc", "sd", "gr")
METRIC_NAMES = {
    "sp1": "source precision (per source)",
    "sp2": "source precision (per fact)",
    "sqc": "source query coverage",
    "rp": "response precision",
    "rqc": "response query coverage",
    "sd": "response self-distinctness",
    "gr": "groundedness",
}

Verdict = Union[int, Unscored]


class MetricScore(BaseModel):
    """One metric on one sample: the score in [0, 1] and the per-component evidence behind it.

    ``components`` are the decomposed units (sources, facts, claims, sub-questions, sentences) and
    ``verdicts`` their 0/1 match results in the same order; for self-distinctness a verdict of 1
    marks a sentence that repeats another one."""

    model_config = ConfigDict(frozen=True)

    metric: str
    score: float = Field(ge=0.0, le=1.0)
    components: list[str] = Field(default_factory=list)
    verdicts: list[int] = Field(default_factory=list)
    scored: Literal[True] = True


MetricOutcome = Union[MetricScore, Unscored]


def first_failure(verdicts: Sequence[Verdict]) -> Unscored | None:
    """The first verdict that could not be made, summarised with how many failed."""
    failed = [v for v in verdicts if isinstance(v, Unscored)]
    if not failed:
        return None
    return Unscored(reason=f"{len(failed)} of {len(verdicts)} match verdicts failed; first: "
                           f"{failed[0].reason}", cause=failed[0].cause, raw=failed[0].raw)


def macro_average(verdicts: Sequence[Verdict], *, metric: str = "",
                  components: Sequence[str] = (), empty: str = "no components") -> MetricScore | Unscored:
    """Mean of the 0/1 verdicts; Unscored when there are none (``empty`` names why) or one failed."""
    if not verdicts:
        return Unscored(reason=empty, cause="undefined")
    failure = first_failure(verdicts)
    if failure is not None:
        return failure
    ints = [int(v) for v in verdicts]  # type: ignore[arg-type]
    return MetricScore(metric=metric, score=sum(ints) / len(ints), components=list(components),
                       verdicts=ints)


def coverage(matrix: Sequence[Sequence[Verdict]]) -> list[Verdict]:
    """Max over source components, per sub-question (rows). A 1 anywhere settles the row even when
    other checks failed; a row with no 1 and a failure is Unscored; an empty row is 0."""
    out: list[Verdict] = []
    for row in matrix:
        if any(v == 1 and not isinstance(v, Unscored) for v in row):
            out.append(1)
        else:
            failure = first_failure(row)
            out.append(failure if failure is not None else 0)
    return out


def self_distinctness(similarity: Sequence[Sequence[float]] | np.ndarray,
                      threshold: float) -> tuple[float, list[int]]:
    """SD = 1 - repeated / total over an n x n cosine-similarity matrix of the response's sentences.
    A sentence is repeated when its similarity to some other sentence reaches ``threshold``; both
    sentences of a repeated pair count (Appendix A.5: two of three sentences, SD = 1 - 2/3)."""
    sim = np.array(similarity, dtype=np.float64)
    n = sim.shape[0]
    if n == 0:
        raise ArgumentError("self-distinctness needs at least one sentence")
    np.fill_diagonal(sim, -np.inf)
    repeated = [int(n > 1 and bool(np.max(sim[i]) >= threshold)) for i in range(n)]
    return 1.0 - sum(repeated) / n, repeated
