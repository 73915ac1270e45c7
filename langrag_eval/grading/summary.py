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

__all__ = ["summarize", "ARTIFACT", "NO_SUBJECT"]

ARTIFACT = "vrag"
NO_SUBJECT = "(none)"


def _block(results: Sequence[VragGrade | Unscored]) -> dict[str, Any]:
    scored = [r for r in results if not isinstance(r, Unscored)]
    unscored = [r for r in results if isinstance(r, Unscored)]
    dist = Counter(r.score for r in scored)
    accepted = sum(r.accepted for r in scored)
    confidences = [r.confidence for r in scored if r.confidence is not None]
    return {
        "items": len(results), "scored": len(scored),
        "distribution": {str(level): dist.get(level, 0) for level in range(1, 6)},
        "accepted": accepted, "rejected": len(scored) - accepted,
        "accept_rate": accepted / len(scored) if scored else None,
        "mean_score": sum(r.score for r in scored) / len(scored) if scored else None,
        "mean_confidence": sum(confidences) / len(confidences) if confidences else None,
        "unscored": {"count": len(unscored), "by_cause": dict(Counter(u.cause for u in unscored))},
    }


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
    out: dict[str, Any] = {"version": 1, "threshold": threshold, **_block(results)}
    out["unscored"]["items"] = [{"id": i, "cause": r.cause, "reason": r.reason}
                                for i, r in zip(ids, results) if isinstance(r, Unscored)]
    groups: dict[str, list[VragGrade | Unscored]] = {}
    for subject, result in zip(subjects or [], results):
        key = subject.strip() if subject and subject.strip() else NO_SUBJECT
        groups.setdefault(key, []).append(result)
    out["subjects"] = {name: _block(group) for name, group in sorted(groups.items())}
    out["agreement"] = agreement
    return out
