"""Result types shared by every evaluator. A capability defines its own scored types beside it;
what they share is :class:`Unscored`, the explicit record of a judgment that could not be made, and
:class:`Score`, the one record every result reads as (an evaluator's ``scores(result)``), so that
``compare``, the gate, the report and the command line read any capability by score name.

>>> u = Unscored(reason="no verdict in reply", cause="unparseable", raw="I think it is fine")
>>> u.scored
False
>>> s = Score(name="grade", value=4, low=1, high=5, passed=True, reason="matches the label")
>>> s.scored, s.normalised()
(True, 0.75)
>>> ScoreScale(1, 5).unscored("grade", u).cause
'unparseable'
"""

from __future__ import annotations

from typing import Literal, NamedTuple, TypeVar, Union

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from .errors import ArgumentError, redact

__all__ = ["Unscored", "UnscoredCause", "Outcome", "Score", "ScoreScale", "is_scored"]

UnscoredCause = Literal[
    "unparseable",   # the judge replied, twice, without a readable verdict
    "ambiguous",     # the judge replied, twice, with verdicts that disagree outside quoted text
    "rate_limit",    # retries on rate limits ran out
    "timeout",       # retries on timeouts ran out
    "transient",     # retries on server or network errors ran out
    "model_error",   # the model call failed in a way retrying cannot fix
    "truncated",     # the reply was cut by a token budget or a length limit before it was complete
    "invalid_input", # the sample itself cannot be judged (empty answer, missing label ...)
    "undefined",     # the metric is undefined for this sample (no claims, no sources ...)
    "evaluator_error",  # the evaluator raised an exception on this sample (a bug, not a verdict)
]


class Unscored(BaseModel):
    """A judgment that was not made, with the reason. Never NaN, never a silent zero."""

    model_config = ConfigDict(frozen=True)

    reason: str
    cause: UnscoredCause
    raw: str | None = None
    scored: Literal[False] = False

    @field_validator("reason", "raw")
    @classmethod
    def _masked(cls, text: str | None) -> str | None:
        # What a reply or an error said is stored, written to results files and printed: secrets
        # in it (a key the judge quoted, a URL's password) are masked before it goes anywhere.
        return None if text is None else redact(text)


class ScoreScale(NamedTuple):
    """The range a score is read on (``low`` to ``high``, e.g. 1..5 or 0..1), its direction, and
    whether it is ``binary`` (a yes/no score: its value is ``low`` or ``high``, nothing between)."""

    low: float = 0.0
    high: float = 1.0
    higher_is_better: bool = True
    binary: bool = False

    def score(self, name: str, value: float, *, passed: bool | None = None,
              reason: str | None = None) -> "Score":
        """The score ``name`` with ``value`` on this scale."""
        return Score(name=name, value=value, low=self.low, high=self.high, binary=self.binary,
                     higher_is_better=self.higher_is_better, passed=passed, reason=reason)

    def unscored(self, name: str, missing: Unscored) -> "Score":
        """The score ``name`` on this scale, not made for the reason ``missing`` gives."""
        return Score(name=name, value=None, low=self.low, high=self.high, binary=self.binary,
                     higher_is_better=self.higher_is_better, reason=missing.reason, cause=missing.cause)


class Score(BaseModel):
    """One named score of one judged sample, on its scale ``low``..``high``: the value, or the
    ``cause`` (and ``reason``) it is missing. Exactly one of ``value`` and ``cause`` is set.
    ``passed`` is the capability's own accept/pass call where it has one (vRAG's accept, a THELMA
    metric above its threshold, GRAMMAR's correct), else None. A ``binary`` score is a yes/no
    call (its value is ``low`` or ``high``): compared as a proportion, its mean is a rate."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: float | None
    low: float
    high: float
    higher_is_better: bool = True
    binary: bool = False
    passed: bool | None = None
    reason: str | None = None
    cause: UnscoredCause | None = None

    @model_validator(mode="after")
    def _check(self) -> "Score":
        # an ArgumentError (a ValueError) here reaches the caller as pydantic's ValidationError
        if (self.value is None) == (self.cause is None):
            raise ArgumentError(f"score {self.name!r}: set exactly one of value and cause")
        if not self.low < self.high:
            raise ArgumentError(f"score {self.name!r}: scale low {self.low} must be below high {self.high}")
        if self.value is not None and not self.low <= self.value <= self.high:
            raise ArgumentError(f"score {self.name!r}: value {self.value} is outside {self.low}..{self.high}")
        if self.binary and self.value is not None and self.value not in (self.low, self.high):
            raise ArgumentError(f"score {self.name!r}: a binary score is {self.low} or {self.high}, "
                                f"not {self.value}")
        if self.value is None and self.passed is not None:
            raise ArgumentError(f"score {self.name!r}: an unscored score cannot pass or fail")
        return self

    @property
    def scored(self) -> bool:
        return self.value is not None

    @property
    def scale(self) -> ScoreScale:
        return ScoreScale(self.low, self.high, self.higher_is_better, self.binary)

    def normalised(self) -> float | None:
        """The value on 0..1, ``(value - low) / (high - low)`` (the same direction as the scale);
        None when unscored."""
        return None if self.value is None else (self.value - self.low) / (self.high - self.low)


T = TypeVar("T")
Outcome = Union[T, Unscored]


def is_scored(value: object) -> bool:
    """True for any result that is not :class:`Unscored`."""
    return not isinstance(value, Unscored)
