"""Agents' trajectories: the type (:mod:`.trajectory`), deterministic matches against a reference
(:mod:`.match`) and the evaluators that score them (:mod:`.evaluators`)."""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .events import trajectory_of_events
    from .judged import TrajectoryGrade, TrajectoryJudge
    from .evaluators import TrajectoryMatch, TrajectoryMatchResult, TrajectorySample
    from .match import ArgsMode, MatchMode, Override, argument_matcher, matches
    from .trajectory import Step, ToolCall, Trajectory

_LAZY = {
    "trajectory_of_events": ".events",
    "TrajectoryGrade": ".judged",
    "TrajectoryJudge": ".judged",
    "TrajectoryMatch": ".evaluators",
    "TrajectoryMatchResult": ".evaluators",
    "TrajectorySample": ".evaluators",
    "ArgsMode": ".match",
    "MatchMode": ".match",
    "Override": ".match",
    "argument_matcher": ".match",
    "matches": ".match",
    "Step": ".trajectory",
    "ToolCall": ".trajectory",
    "Trajectory": ".trajectory",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = sorted(_LAZY)
