"""The per-dataset summary of a vRAG-Eval run, a pure function of the graded results.

It is stored in the run store as the artifact ``vrag`` (``store.put_artifact(run_id, "vrag", s)``)
and read back by the HTML report. Its JSON shape (every rate is a float in 0..1 or ``null`` when
there is nothing to divide by; never NaN)::

    {
      "version": 1,
      "threshold": 4,                       # lowest accepted score
      "items": 200,                         # results summarized (scored + unscored)
      "scored": 196,
      "distribution": {"1": 10, "2": 30, "3": 40, "4": 70, "5": 46},   # all five keys, always
      "accepted": 116, "rejected": 80,
      "accept_rate": 0.5918,                # accepted / scored
      "mean_score": 3.56,
      "mean_confidence": 81.5,              # null unless confidence was asked for
      "unscored": {
        "count": 4,
        "by_cause": {"invalid_input": 3, "unparseable": 1},
        "items": [{"id": "q17", "cause": "invalid_input", "reason": "cannot grade: answer empty"}]
      },
      "subjects": {                         # {} when no subject was given; "(none)" for blanks
        "Fraud": {"items": 20, "scored": 19, "distribution": {...}, "accepted": 12,
                  "rejected": 7, "accept_rate": 0.6316, "mean_score": 3.7,
                  "mean_confidence": null, "unscored": {"count": 1, "by_cause": {...}}}
      },
      "agreement": null                     # or, with human grades, AgreementReport.as_dict()
    }                                       # (langrag_eval.stats) of judge against humans

``langrag-eval grade`` adds to ``agreement`` the keys ``humans`` (how the human columns were
combined, rule and seed, e.g. ``"median of a, b (an even count: one of the two middle scores at
random, seed 0, as vRAG-Eval)"``) and ``annotators`` (``{column: AgreementReport dict}`` against
each human column alone, when there are several), and to the summary ``input``:
``{"file": path, "rows_skipped": n, "problems": n}``.

>>> from langrag_eval.grading import VragGrade
>>> s = summarize([VragGrade(score=4, accepted=True), VragGrade(score=2, accepted=False)],
...               subjects=["Fraud", "Token"])
>>> s["distribution"], s["accept_rate"], s["subjects"]["Token"]["rejected"]
({'1': 0, '2': 1, '3': 0, '4': 1, '5': 0}, 0.5, 1)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError
from ..results import Unscored

if TYPE_CHECKING:
    from .grader import VragGrade

__all__ = ["summarize", "VragTally", "ARTIFACT", "NO_SUBJECT"]

ARTIFACT = "vrag"
NO_SUBJECT = "(none)"


class _Block:
    """One group's figures, tallied a result at a time."""

    def __init__(self) -> None:
        self.items = self.scored = self.accepted = self.score_sum = 0
        self.dist: Counter[int] = Counter()
        self.confidence_sum: float = 0
        self.confidences = 0
        self.causes: Counter[str] = Counter()

    def add(self, r: VragGrade | Unscored) -> None:
        self.items += 1
        if isinstance(r, Unscored):
            self.causes[r.cause] += 1
            return
        self.scored += 1
        self.dist[r.score] += 1
        self.accepted += r.accepted
        self.score_sum += r.score
        if r.confidence is not None:
            self.confidence_sum += r.confidence
            self.confidences += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "items": self.items, "scored": self.scored,
            "distribution": {str(level): self.dist.get(level, 0) for level in range(1, 6)},
            "accepted": self.accepted, "rejected": self.scored - self.accepted,
            "accept_rate": self.accepted / self.scored if self.scored else None,
            "mean_score": self.score_sum / self.scored if self.scored else None,
            "mean_confidence": self.confidence_sum / self.confidences if self.confidences else None,
            "unscored": {"count": sum(self.causes.values()), "by_cause": dict(self.causes)},
        }


class VragTally:
    """:func:`summarize` a result at a time: ``add`` each item's result as it is graded, then
    ``summary()``; only the figures and the unscored items are held, not the results.
    ``by_subject``: keep the per-subject breakdown (``subject`` given to each ``add``).

    >>> from langrag_eval.grading import VragGrade
    >>> tally = VragTally(by_subject=True)
    >>> tally.add("q1", VragGrade(score=4, accepted=True), "Fraud")
    >>> tally.summary()["subjects"]["Fraud"]["accepted"]
    1
    """

    def __init__(self, *, threshold: int = 4, by_subject: bool = False) -> None:
        self.threshold, self.by_subject = threshold, by_subject
        self.all = _Block()
        self.subjects: dict[str, _Block] = {}
        self.unscored: list[dict[str, Any]] = []

    def add(self, item_id: str, result: VragGrade | Unscored, subject: str | None = None) -> None:
        self.all.add(result)
        if isinstance(result, Unscored):
            self.unscored.append({"id": str(item_id), "cause": result.cause, "reason": result.reason})
        if self.by_subject:
            key = subject.strip() if subject and subject.strip() else NO_SUBJECT
            self.subjects.setdefault(key, _Block()).add(result)

    def summary(self, agreement: dict[str, Any] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 1, "threshold": self.threshold, **self.all.as_dict()}
        out["unscored"]["items"] = list(self.unscored)
        out["subjects"] = {name: b.as_dict() for name, b in sorted(self.subjects.items())}
        out["agreement"] = agreement
        return out


def summarize(results: Sequence[VragGrade | Unscored], *, ids: Sequence[str] | None = None,
              subjects: Sequence[str | None] | None = None, threshold: int = 4,
              agreement: dict[str, Any] | None = None) -> dict[str, Any]:
    """Score distribution, accept rate, unscored count with causes, and a per-subject breakdown.

    ``ids`` and ``subjects`` run parallel to ``results``; ids default to positions.
    ``agreement`` (already computed against human grades) is passed through into the summary.
    """
    ids = [str(i) for i in ids] if ids is not None else [str(i) for i in range(len(results))]
    if len(ids) != len(results) or (subjects is not None and len(subjects) != len(results)):
        raise ArgumentError("ids and subjects must run parallel to results")
    tally = VragTally(threshold=threshold, by_subject=subjects is not None)
    for i, (item, result) in enumerate(zip(ids, results)):
        tally.add(item, result, subjects[i] if subjects is not None else None)
    return tally.summary(agreement)
