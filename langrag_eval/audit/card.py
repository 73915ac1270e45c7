"""The judge card: every measure of an audit with its 95 % interval, its n, the threshold it is held
to (and the paper's figure where one exists), and one verdict line per use: fit, fit with caveats,
or unfit for grading, pairwise comparison and groundedness.

The verdict rule, the same for each use: the use's headline measure (binary agreement for grading,
accuracy against the human majority for pairwise, agreement for groundedness) decides between unfit
(its value misses the threshold) and the rest; *fit* needs every measure of the use to meet its
threshold and the headline's whole interval to lie on the passing side; anything between is *fit
with caveats*, and the caveats are named. A measure with no items counts neither way and says so.

>>> from langrag_eval.stats.intervals import wilson
>>> m = Measure(key="grading.binary_agreement", name="binary agreement", use="grading",
...             estimate=wilson(90, 100), threshold=0.8, direction="min")
>>> m.passed, decide("grading", [m]).verdict
(True, 'fit')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ArgumentError
from ..stats.intervals import Estimate

__all__ = ["Measure", "UseVerdict", "JudgeCard", "decide", "show", "bar", "rows", "HEADLINE", "USES",
           "format_card", "ARTIFACT"]

ARTIFACT = "judge_card"
Use = Literal["grading", "pairwise", "groundedness"]
USES: tuple[Use, ...] = ("grading", "pairwise", "groundedness")
HEADLINE = {"grading": "grading.binary_agreement", "pairwise": "pairwise.accuracy",
            "groundedness": "groundedness.agreement"}


class Measure(BaseModel):
    """One figure of the card. ``direction``: "min" when the value must reach ``threshold``, "max"
    when it must not exceed it, None for a figure shown for information only."""

    model_config = ConfigDict(frozen=True)

    key: str
    name: str
    use: str                          # grading, pairwise, groundedness, reliability or a bias probe's use
    estimate: Estimate
    threshold: float | None = None
    direction: Literal["min", "max"] | None = None
    unit: Literal["share", "number", "seconds", "tokens", "cost"] = "share"
    paper: str | None = None
    note: str | None = None

    @property
    def passed(self) -> bool | None:
        """Whether the value meets the threshold; None without a threshold or a value."""
        v = self.estimate.value
        if self.threshold is None or self.direction is None or v is None:
            return None
        return v >= self.threshold if self.direction == "min" else v <= self.threshold

    @property
    def clear(self) -> bool | None:
        """Whether the whole interval lies on the passing side of the threshold."""
        e = self.estimate
        if self.threshold is None or self.direction is None or e.low is None or e.high is None:
            return None
        return e.low >= self.threshold if self.direction == "min" else e.high <= self.threshold


class UseVerdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    use: str
    verdict: Literal["fit", "fit with caveats", "unfit", "not measured"]
    caveats: list[str] = Field(default_factory=list)
    line: str = ""


class JudgeCard(BaseModel):
    """What ``langrag-eval judge audit`` stores as the ``judge_card`` artifact."""

    judge: str
    run_id: str | None = None
    data: dict[str, str] = Field(default_factory=dict)       # battery -> where its items came from
    items: dict[str, int] = Field(default_factory=dict)      # battery -> items judged
    measures: list[Measure] = Field(default_factory=list)
    verdicts: list[UseVerdict] = Field(default_factory=list)
    attacks: dict[str, dict[str, int]] = Field(default_factory=dict)  # attack -> {"n", "succeeded"}
    unscored: dict[str, int] = Field(default_factory=dict)            # cause -> judgments
    usage: dict[str, Any] = Field(default_factory=dict)
    seconds: float | None = None
    settings: dict[str, Any] = Field(default_factory=dict)

    def measure(self, key: str) -> Measure:
        for m in self.measures:
            if m.key == key:
                return m
        known = ", ".join(m.key for m in self.measures)
        raise ArgumentError(f"no measure {key!r} on this card; measures: {known}")

    def verdict(self, use: str) -> UseVerdict:
        return next(v for v in self.verdicts if v.use == use)


def show(m: Measure) -> str:
    """``0.81 [0.75, 0.86] n=200`` in the measure's unit."""
    e = m.estimate
    if e.value is None:
        return f"— (n={e.n})"

    def f(x: float | None) -> str:
        if x is None:
            return "—"
        if m.unit == "share":
            return f"{x:.1%}"
        if m.unit == "seconds":
            return f"{x:.3g} s"
        if m.unit == "tokens":
            return f"{x:,.0f}"
        return f"{x:.4g}"

    return f"{f(e.value)} [{f(e.low)}, {f(e.high)}] n={e.n}"


def rows(card: JudgeCard) -> list[dict[str, str]]:
    """The card's measures as display strings (for the HTML report): use, name, value with its
    interval and n, threshold, status (ok, MISS or empty), paper figure and note."""
    return [{"use": m.use, "name": m.name, "value": show(m), "threshold": bar(m),
             "status": {True: "ok", False: "MISS", None: ""}[m.passed], "paper": m.paper or "",
             "note": m.note or ""} for m in card.measures]


def bar(m: Measure) -> str:
    if m.threshold is None or m.direction is None:
        return ""
    sign = "≥" if m.direction == "min" else "≤"
    value = f"{m.threshold:.0%}" if m.unit == "share" else f"{m.threshold:g}"
    return f"{sign} {value}"


def decide(use: str, measures: Sequence[Measure]) -> UseVerdict:
    """The verdict for ``use`` from its measures (see the module docstring for the rule)."""
    # reliability (the unscored rate) bears on every use: a judge that often fails to answer is a
    # caveat wherever it is used
    mine = [m for m in measures if m.use in (use, "reliability") or m.use.startswith(f"{use}/")]
    head = next((m for m in mine if m.key == HEADLINE.get(use)), None)
    if head is None or head.passed is None:
        return UseVerdict(use=use, verdict="not measured",
                          line=f"{use}: not measured (no item was judged for its headline measure)")
    caveats = [f"{m.name} {show(m)} misses {bar(m)}" for m in mine if m.passed is False and m is not head]
    unmeasured = [m.name for m in mine if m.direction is not None and m.estimate.value is None]
    if head.passed is False:
        verdict = "unfit"
    elif caveats or head.clear is False:
        verdict = "fit with caveats"
        if head.clear is False:
            caveats.insert(0, f"the 95 % interval of {head.name} reaches below {bar(head)[2:]}"
                           if head.direction == "min" else
                           f"the 95 % interval of {head.name} reaches above {bar(head)[2:]}")
    else:
        verdict = "fit"
    caveats += [f"{name}: not measured" for name in unmeasured]
    line = f"{use}: {verdict.upper()}: {head.name} {show(head)} (threshold {bar(head)})"
    if verdict == "unfit":
        line += "; misses the threshold"
    if caveats and verdict != "unfit":
        line += "; " + "; ".join(caveats)
    return UseVerdict(use=use, verdict=verdict, caveats=caveats, line=line)


def format_card(card: JudgeCard) -> str:
    """The card as plain text for the terminal."""
    out = [f"Judge card: {card.judge}" + (f"  (run {card.run_id})" if card.run_id else "")]
    for v in card.verdicts:
        out.append(f"  {v.line}")
    out.append("")
    width = max((len(m.name) for m in card.measures), default=10)
    group = None
    for m in card.measures:
        if m.use != group:
            group = m.use
            out.append(f"[{group}]")
        limit = bar(m)
        verdict = {True: "ok", False: "MISS", None: ""}[m.passed]
        extra = "  ".join(x for x in (f"threshold {limit}" if limit else "", verdict,
                                      f"paper: {m.paper}" if m.paper else "") if x)
        out.append(f"  {m.name:<{width}}  {show(m)}  {extra}".rstrip())
    if card.attacks:
        out.append("[injection, per attack: succeeded / tried]")
        out.extend(f"  {name}: {a['succeeded']}/{a['n']}" for name, a in card.attacks.items())
    if card.unscored:
        out.append("unscored judgments by cause: " + ", ".join(f"{k} {v}" for k, v in card.unscored.items()))
    u = card.usage
    if u:
        out.append(f"calls {u.get('calls', 0)} (cached {u.get('cached', 0)}, failed {u.get('failed', 0)}, "
                   f"attempts {u.get('attempts', 0)}, repairs {u.get('repairs', 0)}); tokens "
                   f"{u.get('prompt_tokens', 0)} in / {u.get('completion_tokens', 0)} out"
                   + (f"; cost {u['cost']:.4g}" if u.get("cost") is not None else ""))
    if card.seconds is not None:
        out.append(f"audit time {card.seconds:.1f} s; items per battery: "
                   + ", ".join(f"{k} {v}" for k, v in card.items.items()))
    return "\n".join(out)
