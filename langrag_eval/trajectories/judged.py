"""An LLM judge of a trajectory, with or without a reference: a 1-5 grade on the levels of the
prompt files ``trajectory/judge`` and ``trajectory/judge_with_reference``, passed at 4 or more.

The request, the steps and the reference reach the judge inside their own blocks, so nothing an
agent or a tool wrote can speak as the instructions, and a verdict copied from them is never read as
the judge's own (the judge runtime's echo rule). A sample without steps is unscored and costs no call.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.trajectories.evaluators import TrajectorySample
>>> judge = TrajectoryJudge(Judge(ScriptedModel(["Score: [[4]], Reason: [[One redundant search.]]"])))
>>> r = judge.evaluate(TrajectorySample(question="Warranty?", trajectory=[
...     {"role": "user", "content": "Warranty?"}, {"role": "assistant", "content": "Two years."}]))
>>> r.score, r.passed, r.with_reference
(4, True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..grading.graded import Grade, GradedJudge, grade_template
from ..prompting.templates import PromptTemplate
from ..results import Unscored
from ..runtime import Judge
from .evaluators import TrajectorySample, trajectory_item

__all__ = ["TrajectoryGrade", "TrajectoryJudge"]


class TrajectoryGrade(Grade):
    with_reference: bool


@dataclass
class TrajectoryJudge(GradedJudge[TrajectorySample, TrajectoryGrade]):
    """``judge`` grades each trajectory 1-5, against ``sample.reference`` when the sample has one;
    ``threshold`` is the lowest passing grade; ``prompt`` / ``reference_prompt`` replace the shipped
    templates (a file path or a template, with the same variables)."""

    threshold: int = 4
    prompt: Any = None
    reference_prompt: Any = None

    task = "trajectory_judge"
    result_type = TrajectoryGrade
    description = "LLM judge of an agent's trajectory"
    prompt_fields: ClassVar[dict[str, str]] = {"judge": "prompt", "judge_with_reference": "reference_prompt"}

    def __post_init__(self) -> None:
        self._prompts: dict[bool, PromptTemplate] = {
            False: grade_template(self.prompt, "trajectory/judge", ["question", "trajectory"]),
            True: grade_template(self.reference_prompt, "trajectory/judge_with_reference",
                                 ["question", "trajectory", "reference"]),
        }

    def for_judge(self, judge: Judge) -> TrajectoryJudge:
        return TrajectoryJudge(judge, self.threshold, self.prompt, self.reference_prompt)

    def render(self, sample: TrajectorySample) -> str:
        """The exact prompt the judge receives for ``sample``."""
        template = self._prompts[sample.reference is not None]
        values = {"question": sample.question or "(not given)", "trajectory": sample.trajectory.render(),
                  "reference": sample.reference.render() if sample.reference is not None else ""}
        return template.render(**{k: values[k] for k in template.variables})

    def index_item(self, sample: TrajectorySample) -> tuple[str | None, str | None, str | None]:
        return trajectory_item(sample)[0]

    def item_content(self, sample: TrajectorySample) -> dict[str, Any]:
        return trajectory_item(sample)[1]  # the report's item browser shows the run step by step

    async def aevaluate(self, sample: TrajectorySample) -> TrajectoryGrade | Unscored:
        if not sample.trajectory.steps:
            return Unscored(reason="the trajectory has no steps", cause="invalid_input")
        return await self.graded(sample.id, self.render(sample), with_reference=sample.reference is not None)

    def score_names(self) -> tuple[str, ...]:
        return ("trajectory_pass_rate", "trajectory_grade")
