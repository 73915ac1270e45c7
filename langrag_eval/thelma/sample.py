"""What THELMA writes per sample: its per-metric result (it reads a :class:`~langrag_eval.types.Sample`).

A result reads the same in every adapter: :meth:`ThelmaResult.mean` over the scored metrics,
:meth:`ThelmaResult.comment` per metric, :meth:`ThelmaResult.feedback` for all of them with the
diagnosis, and :meth:`ThelmaResult.passes` against the thresholds.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..results import Unscored
from .aggregate import MetricOutcome, MetricScore
from .diagnosis import Finding, Thresholds, undiagnosed
from .metrics import get_metric, metric_name, metric_ids

__all__ = ["SampleUsage", "ThelmaResult"]


class SampleUsage(BaseModel):
    """Judge calls made for one sample: ``calls`` reached the model, ``cached`` were answered
    from the cache (a shared decomposition, an identical check), ``failed`` failed after retries."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    cached: int = 0
    failed: int = 0
    repairs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ThelmaResult(BaseModel):
    """Every requested metric as a :class:`MetricScore` or :class:`Unscored`, the decompositions
    they were computed from, the Table 2 diagnosis and the judge usage of this sample."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    metrics: dict[str, MetricOutcome] = Field(default_factory=dict)
    claims: list[str] | None = None
    facts: list[list[str]] | None = None
    questions: list[str] | None = None
    sentences: list[str] | None = None
    diagnosis: list[Finding] = Field(default_factory=list)
    usage: SampleUsage = SampleUsage()
    mode: str = "per_component"

    def score(self, metric: str) -> float | None:
        """The metric's score, or None when it was not scored or not requested."""
        value = self.metrics.get(metric)
        return value.score if isinstance(value, MetricScore) else None

    def score_values(self) -> dict[str, float | None]:
        """Each metric's score, None where it is unscored (the typed records, with scales, causes
        and pass/fail, are :meth:`Thelma.scores`)."""
        return {m: self.score(m) for m in self.metrics}

    def unscored(self) -> dict[str, Unscored]:
        return {m: v for m, v in self.metrics.items() if isinstance(v, Unscored)}

    def mean(self) -> float | None:
        """The mean of the scored metrics (None when none was scored)."""
        scored = [s for s in self.score_values().values() if s is not None]
        return sum(scored) / len(scored) if scored else None

    def comment(self, metric: str) -> str:
        """One line on ``metric``: ``cause: reason`` when unscored, else how many of its components
        matched (for self-distinctness: were repeated)."""
        value = self.metrics[metric]
        if isinstance(value, Unscored):
            return f"{value.cause}: {value.reason}"
        what = get_metric(metric).verdict if metric in metric_ids() else "matched"
        return f"{metric_name(metric)}: {sum(value.verdicts)} of {len(value.verdicts)} components {what}"

    def components_to_improve(self) -> list[str]:
        """The pipeline components the diagnosis names, each once, in the order they fired."""
        return list(dict.fromkeys(f.component for f in self.diagnosis))

    def undiagnosed(self) -> Unscored | None:
        """Why there is no diagnosis: every metric unscored (None when one was scored)."""
        return undiagnosed(self.score_values(), {m: f"{u.cause}: {u.reason}" for m, u in self.unscored().items()})

    def diagnosis_text(self) -> str:
        """The Table 2 findings in one line (``rule: interpretation; ...``), or why there are none
        to look for (``unscored: ...``)."""
        if (missing := self.undiagnosed()) is not None:
            return f"unscored: {missing.reason}"
        return "; ".join(f"{f.rule}: {f.interpretation}" for f in self.diagnosis) or "no Table 2 pattern"

    def feedback(self) -> str:
        """Every metric on its own line (score and comment, or why it is unscored), then one line
        per diagnosis finding."""
        lines = [f"{m}={s:.3f} ({self.comment(m)})" if (s := self.score(m)) is not None
                 else f"{m}=unscored ({self.comment(m)})" for m in self.metrics]
        lines += [f"diagnosis: {f.rule} -> improve the {f.component}" for f in self.diagnosis]
        return "\n".join(lines)

    def passes(self, thresholds: Thresholds, metric: str | None = None) -> bool | None:
        """Whether the result passes: ``metric``'s score is not low; without a metric, no scored
        metric is low and no Table 2 pattern fired. None when nothing it looks at was scored."""
        if metric is not None:
            score = self.score(metric)
            return None if score is None else not thresholds.is_low(metric, score)
        scored = {m: s for m, s in self.score_values().items() if s is not None}
        if not scored:
            return None
        return not self.diagnosis and not any(thresholds.is_low(m, s) for m, s in scored.items())
