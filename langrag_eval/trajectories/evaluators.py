"""Trajectories scored on the one evaluator contract, so their scores flow through the run layer,
the store, the report, ``compare`` and ``gate`` like any evaluator's.

:class:`TrajectoryMatch` checks a run's trajectory against its reference in one of the modes of
:mod:`.match`; its score ``trajectory_<mode>`` is binary (1 matched, 0 not). A sample without a
reference is unscored (``invalid_input``), never a silent 0.

>>> from langrag_eval.trajectories.trajectory import Trajectory
>>> run = Trajectory.of([{"role": "assistant", "tool_calls": [{"name": "search", "args": {"q": "pump"}}]},
...                      {"role": "assistant", "content": "Two years."}])
>>> sample = TrajectorySample(id="t1", trajectory=run, reference=run)
>>> r = TrajectoryMatch(mode="unordered").evaluate(sample)
>>> r.matched, [(s.name, s.value) for s in TrajectoryMatch(mode="unordered").scores(r)]
(True, [('trajectory_unordered', 1.0)])
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from ..evaluator import Evaluator
from ..results import Score, ScoreScale, Unscored
from .match import ArgsMode, MatchMode, Override, argument_matcher, matches
from .trajectory import Trajectory

__all__ = ["TrajectoryMatch", "TrajectoryMatchResult", "TrajectorySample", "trajectory_item"]

_BINARY = ScoreScale(0, 1, binary=True)


class TrajectorySample(BaseModel):
    """One agent run to score: its trajectory and, for matches, the reference trajectory."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    question: str = ""
    trajectory: Trajectory
    reference: Trajectory | None = None

    @field_validator("trajectory", "reference", mode="before")
    @classmethod
    def _read(cls, value: Any, info: Any) -> Any:
        return None if value is None else Trajectory.of(value, field=info.field_name)


def trajectory_item(sample: TrajectorySample) -> tuple[tuple[str | None, str | None, str | None], dict[str, Any]]:
    """The item index row and the report's content of one agent run: its steps as stored."""
    content: dict[str, Any] = {"question": sample.question or None, "answer": sample.trajectory.answer,
                               "trajectory": [s.model_dump(mode="json", exclude_none=True) for s in sample.trajectory.steps]}
    if sample.reference is not None:
        content["reference_trajectory"] = [s.model_dump(mode="json", exclude_none=True) for s in sample.reference.steps]
    return (sample.question or None, None, None), content


class TrajectoryMatchResult(BaseModel):
    id: str | None = None
    mode: str
    args: str
    matched: bool


def _name_of(override: Override) -> str:
    if callable(override):
        return f"{getattr(override, '__module__', '')}.{getattr(override, '__qualname__', repr(override))}"
    return override if isinstance(override, str) else ",".join(override)


@dataclass
class TrajectoryMatch(Evaluator[TrajectorySample, TrajectoryMatchResult]):
    """A trajectory against its reference: ``mode`` strict / unordered / subset / superset, ``args``
    the argument mode, ``overrides`` per tool (a mode, a list of argument paths, a function)."""

    mode: MatchMode = "strict"
    args: ArgsMode = "exact"
    overrides: Mapping[str, Override] = field(default_factory=dict)

    task = "trajectory_match"
    result_type = TrajectoryMatchResult
    description = "trajectory match against a reference"

    def __post_init__(self) -> None:
        matches(Trajectory(), Trajectory(), self.mode, args=self.args)  # a bad mode fails here, once
        for override in self.overrides.values():
            argument_matcher(override)

    def task_name(self) -> str:
        # other settings give other verdicts: they never share stored results
        settings = "|".join(f"{k}={_name_of(v)}" for k, v in sorted(self.overrides.items()))
        digest = hashlib.sha256(settings.encode()).hexdigest()[:8]
        return f"{self.task}/{self.mode}/{self.args}/{digest}"

    def index_item(self, sample: TrajectorySample) -> tuple[str | None, str | None, str | None]:
        return trajectory_item(sample)[0]

    def item_content(self, sample: TrajectorySample) -> dict[str, Any]:
        return trajectory_item(sample)[1]  # the report's item browser shows the run step by step

    async def aevaluate(self, sample: TrajectorySample) -> TrajectoryMatchResult | Unscored:
        if sample.reference is None:
            return Unscored(reason="the sample has no reference trajectory to match", cause="invalid_input")
        matched = matches(sample.trajectory, sample.reference, self.mode, args=self.args, overrides=self.overrides)
        return TrajectoryMatchResult(id=sample.id, mode=self.mode, args=self.args, matched=matched)

    def score_names(self) -> tuple[str, ...]:
        return (f"trajectory_{self.mode}",)

    def score_scale(self, name: str) -> ScoreScale:
        return _BINARY

    def result_scores(self, result: TrajectoryMatchResult) -> list[Score]:
        return [_BINARY.score(self.score_names()[0], 1.0 if result.matched else 0.0, passed=result.matched)]
