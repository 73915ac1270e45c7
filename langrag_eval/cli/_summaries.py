"""How a command that runs evaluators prints each one's typed summary and names the artifact it is
stored under (``summary/<evaluator id>``), which ``report``, ``compare`` and ``gate`` read."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # --help of the commands that print summaries loads no pydantic
    from ..results import Summary

__all__ = ["SUMMARY_PREFIX", "format_summary"]

SUMMARY_PREFIX = "summary/"


def format_summary(name: str, summary: Summary) -> str:
    """One evaluator's summary in a few lines: items scored, unscored by cause, each score's mean
    with its 95 % interval and pass rate."""
    causes = ", ".join(f"{c} {n}" for c, n in sorted(summary.unscored.items()))
    lines = [f"  {name}: {summary.scored} of {summary.n} item(s) scored"
             + (f" (unscored: {causes})" if causes else "")]
    for score in summary.scores.values():
        mean = "-" if score.mean is None else f"{score.mean:.3f}"
        passed = "" if score.pass_rate is None else f", pass rate {score.pass_rate:.2f}"
        lines.append(f"    {score.name:<20} mean {mean} {score.interval} on {score.scale_low:g}..{score.scale_high:g}"
                     f" (n={score.n}{passed})")
    return "\n".join(lines)
