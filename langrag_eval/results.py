"""Result types shared by every evaluator. A capability defines its own scored types beside it;
what they share is :class:`Unscored`, the explicit record of a judgment that could not be made.

>>> u = Unscored(reason="no verdict in reply", cause="unparseable", raw="I think it is fine")
>>> u.scored
False
"""

from __future__ import annotations

from typing import Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, field_validator

from .errors import redact

__all__ = ["Unscored", "UnscoredCause", "Outcome", "is_scored"]

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


T = TypeVar("T")
Outcome = Union[T, Unscored]


def is_scored(value: object) -> bool:
    """True for any result that is not :class:`Unscored`."""
    return not isinstance(value, Unscored)
