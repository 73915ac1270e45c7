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

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .errors import ArgumentError, redact

__all__ = ["Unscored", "UnscoredCause", "Outcome", "Score", "ScoreScale", "Declaration", "Section", "ScoreSummary", "Summary",
           "is_scored", "summarize_scores"]

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


class Section(NamedTuple):
    """A section of the HTML report that an evaluator declares: its ``title`` (the heading and the
    link in the page's navigation) and the ``kind`` of renderer that draws it. ``"scores"`` (the
    default) is the generic section: the evaluator's description and each declared score's mean
    with its 95 % interval, pass rate and unscored count, read from the judgments stored with the
    run. Another kind names a renderer registered under it: the package's own (``vrag``,
    ``thelma``, ``windows``, ``tournament``, ``grammar``) or an installed package's, found by
    its ``langrag_eval.report_sections`` entry point (``mypkg/citations``); where that package is
    not installed, the generic section is drawn instead. ``artifact``: the run artifact the
    renderer reads, which a run session fills with the evaluator's summary ``details`` (vRAG-Eval's
    and THELMA's sections), so ``langrag-eval run`` draws the section its own command draws.

    >>> Section("Citations")
    Section(title='Citations', kind='scores', artifact=None)
    """

    title: str
    kind: str = "scores"
    artifact: str | None = None


class Declaration(NamedTuple):
    """What an evaluator gives every sample, declared once: its scores by name, in order, each on
    its :class:`ScoreScale` (low, high, higher is better, binary), and whether it ``indexes_items``
    (writes what each item asks to the run, so two runs of app variants pair item by item in
    ``compare``). Readers (compare, gate, the report, the command line) take what they show from
    here and from the scores, never from an evaluator's name.

    ``judged_whole``: the evaluator's items are judged as a whole, scored or not (a vRAG grade, a
    GRAMMAR verdict), so a comparison also reads the share of items judged at all, under the name
    given (``scored_rate``). ``raw_reason``: an item's reason is the end of the judge's raw reply
    (for a verdict that carries no reason of its own). ``primary``: the one score a framework
    adapter reports by default, with its pass call as accept / reject (vRAG-Eval's ``grade``; None:
    every score counts alike). ``needs_reference``: the evaluator grades against a reference
    answer, so an adapter must be given one. ``sections``: the report sections it draws
    (:class:`Section`), in order; none: its scores show in the report's item browser (and in its
    table of scores by evaluator where ``langrag-eval run`` stored its summary) only.

    >>> d = Declaration({"grade": ScoreScale(1, 5), "accept": ScoreScale(0, 1, binary=True)})
    >>> d.names(), d.scale("accept").binary
    (('grade', 'accept'), True)
    """

    scores: Mapping[str, ScoreScale] = {}
    indexes_items: bool = True
    judged_whole: str | None = None
    raw_reason: bool = False
    primary: str | None = None
    needs_reference: bool = False
    sections: tuple[Section, ...] = ()

    def names(self) -> tuple[str, ...]:
        return tuple(self.scores)

    def scale(self, name: str) -> ScoreScale:
        """The scale of the score ``name`` (0..1, higher is better, for a name not declared)."""
        return self.scores.get(name, ScoreScale())


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


# ---------------------------------------------------------------- the typed dataset summary
# The typed dataset summary every evaluator gives (:meth:`~langrag_eval.evaluator.Evaluator.summarize`):
# how many items, how many were scored, the unscored ones by cause, and per score name its mean with
# a 95 % interval (Wilson for a yes/no score, Student's t otherwise), spread and pass rate, computed
# from the typed scores alone, the same way for every capability. ``details`` holds what a
# capability adds (vRAG-Eval's grade distribution and subjects, THELMA's diagnosis and usage).

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
    ``items`` may be a generator: it is read once, item by item.

    >>> grade = ScoreScale(1, 5)
    >>> items = [[grade.score("grade", 5, passed=True)], [grade.score("grade", 2, passed=False)],
    ...          [grade.unscored("grade", Unscored(reason="no reply", cause="timeout"))]]
    >>> s = summarize_scores(items, [None, None, "timeout"])
    >>> s.n, s.scored, s.unscored, s.scores["grade"].mean, s.scores["grade"].pass_rate
    (3, 2, {'timeout': 1}, 3.5, 0.5)
    """
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
