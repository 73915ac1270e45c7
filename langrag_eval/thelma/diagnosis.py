"""Diagnosis from the interplay of THELMA metrics (the paper's Table 2): which component of a RAG
pipeline to improve, per sample and per dataset.

A metric is *low* when its score is below its ``low`` threshold and *high* when it reaches its
``high`` threshold; between the two it is neither, so no rule fires on it. ``SP`` in the table stands
for either source precision variant (SP1 or SP2). A rule needs every metric it names to be scored.

>>> [f.rule for f in diagnose({"sqc": 0.2, "rqc": 0.1})]
['SQC-low RQC-low']
>>> diagnose({"sqc": 0.2, "rqc": 0.1})[0].component
'retriever or source corpus'

With nothing scored there is nothing to diagnose, which is not the same as no pattern firing:

>>> undiagnosed({"sp1": None, "gr": None}, {"gr": "invalid_input: the response is empty"}).cause
'undefined'
>>> undiagnosed({"sp1": 0.2}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from ..results import Unscored
# in a module of its own: `langrag-eval thelma --help` makes its options from it without pydantic
from .thresholds import Thresholds

__all__ = ["RULES", "Finding", "Rule", "Thresholds", "diagnose", "diagnose_dataset", "undiagnosed"]


class Finding(BaseModel):
    """One Table 2 row that fired: the metric pattern, what it means, what to improve."""

    model_config = ConfigDict(frozen=True)

    rule: str
    interpretation: str
    component: str
    evidence: dict[str, float]


@dataclass(frozen=True)
class Rule:
    """A Table 2 row: metrics that must be low and metrics that must be high. A tuple entry means
    any one of those metrics (the table's SP, covering SP1 and SP2)."""

    low: tuple[str | tuple[str, ...], ...]
    high: tuple[str | tuple[str, ...], ...]
    interpretation: str
    component: str

    @property
    def name(self) -> str:
        def label(m: str | tuple[str, ...]) -> str:
            return "SP" if isinstance(m, tuple) else m.upper()
        return " ".join([f"{label(m)}-low" for m in self.low] + [f"{label(m)}-high" for m in self.high])

    def match(self, scores: Mapping[str, float], t: Thresholds) -> dict[str, float] | None:
        evidence: dict[str, float] = {}
        for wanted, test in ((self.low, t.is_low), (self.high, t.is_high)):
            for entry in wanted:
                options = entry if isinstance(entry, tuple) else (entry,)
                hits = [m for m in options if m in scores and test(m, scores[m])]
                if not hits:
                    return None
                evidence.update({m: scores[m] for m in hits})
        return evidence


_SP = ("sp1", "sp2")

RULES: tuple[Rule, ...] = (
    Rule(("sd",), ("rp",), "long responses whose information is relevant but repeated; hard to read",
         "prompt or generator"),
    Rule(("sqc", "rqc"), (), "retrieval misses what the query needs, or the source corpus lacks it",
         "retriever or source corpus"),
    Rule((_SP,), ("sqc",), "every part of the query is covered, but some retrieved sources are only "
         "loosely relevant", "retriever"),
    Rule(("rqc",), ("sqc",), "the sources hold what the query needs, but the response does not use it",
         "prompt or generator"),
    Rule(("rp",), ("sp1",), "the response carries extraneous information although most retrieved "
         "sources are essential", "prompt or source chunking"),
    Rule(("sqc", "gr"), ("rqc",), "the generator answers parts of the query the sources do not cover, "
         "so the response is ungrounded", "prompt"),
)


def diagnose(scores: Mapping[str, float | None], thresholds: Thresholds | None = None,
             rules: Sequence[Rule] = RULES) -> list[Finding]:
    """The Table 2 rows that hold for one set of metric scores (None or missing: not scored)."""
    t = thresholds or Thresholds()
    present = {m: float(s) for m, s in scores.items() if s is not None}
    out = []
    for rule in rules:
        evidence = rule.match(present, t)
        if evidence is not None:
            out.append(Finding(rule=rule.name, interpretation=rule.interpretation,
                               component=rule.component, evidence=evidence))
    return out


def undiagnosed(scores: Mapping[str, float | None],
                causes: Mapping[str, str] | None = None) -> Unscored | None:
    """Why no diagnosis could be made, when no metric was scored (None when one was): an empty
    finding list then means "not diagnosed", never "no pattern". ``causes`` gives each unscored
    metric's ``cause: reason`` for the message."""
    if any(s is not None for s in scores.values()):
        return None
    why = "; ".join(f"{m}: {c}" for m, c in (causes or {}).items()) or "no metric was requested"
    return Unscored(cause="undefined", reason=f"no metric was scored, so nothing to diagnose ({why})")


def diagnose_dataset(per_sample: Sequence[Mapping[str, float | None]], thresholds: Thresholds | None = None,
                     rules: Sequence[Rule] = RULES) -> dict[str, object]:
    """Per-dataset diagnosis: the rules that hold on the metric means, and for every rule the share
    of samples where it fired, most frequent first (a rule can fire on a minority of samples
    without moving the mean)."""
    t = thresholds or Thresholds()
    means: dict[str, float | None] = {}
    for metric in {m for s in per_sample for m in s}:
        values = [s[metric] for s in per_sample if s.get(metric) is not None]
        means[metric] = sum(values) / len(values) if values else None  # type: ignore[arg-type]
    counts = {r.name: 0 for r in rules}
    for sample in per_sample:
        for finding in diagnose(sample, t, rules):
            counts[finding.rule] += 1
    n = len(per_sample)
    by_rule = {r.name: r for r in rules}
    frequent = [{"rule": name, "component": by_rule[name].component,
                 "interpretation": by_rule[name].interpretation, "samples": c,
                 "share": c / n if n else 0.0}
                for name, c in sorted(counts.items(), key=lambda kv: -kv[1]) if c]
    return {"on_means": [f.model_dump() for f in diagnose(means, t, rules)], "by_sample": frequent,
            "samples": n}
