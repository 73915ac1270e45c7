"""A judge's 1-5 grade of a whole thing at once (an agent's trajectory, a conversation) on the levels
of a prompt file, passed at a threshold: the judgment the trajectory judge and the conversation
judges share. A subclass renders the prompt of a sample and names its two scores, the pass rate
(``..._pass_rate``, binary) and the grade (1-5); asking, reading the verdict and scoring are here.

The judge is asked at temperature 0 with vRAG-Eval's output format (``Score: [[n]], Reason:
[[...]]``); a reply that cannot be read is the sample's :class:`~langrag_eval.results.Unscored`,
as the judge runtime says it (an echoed verdict included).

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> class Brevity(GradedJudge):
...     task, result_type = "brevity", Grade
...     def score_names(self): return ("brevity_pass_rate", "brevity_grade")
...     async def aevaluate(self, sample):
...         return await self.graded(None, f"Grade the brevity of: {sample}")
>>> r = Brevity(Judge(ScriptedModel(["Score: [[5]], Reason: [[Short.]]"]))).evaluate("Two years.")
>>> r.score, r.passed, [s.name for s in Brevity(None).scores(r)]
(5, True, ['brevity_pass_rate', 'brevity_grade'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from ..evaluator import Evaluator
from ..model import GenerationParams
from ..prompting.templates import PromptTemplate, load_prompt, override_template
from ..results import Score, ScoreScale, Unscored
from ..runtime import Judge
from ..verdicts.formats import ScoreFormat

__all__ = ["GRADE", "PASS", "Grade", "GradedJudge", "grade_template"]

GRADE = ScoreScale(1, 5)
PASS = ScoreScale(0, 1, binary=True)
_FORMAT = ScoreFormat(1, 5)


class Grade(BaseModel):
    """One 1-5 grade: the score, whether it passed, the judge's reason and its whole reply."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    score: int
    passed: bool
    reason: str | None = None
    raw: str | None = None


G = TypeVar("G", bound=Grade)
S = TypeVar("S")


def grade_template(value: Any, shipped: str, variables: list[str]) -> PromptTemplate:
    """The shipped template ``shipped``, or ``value`` (a file path or a template) in its place, with
    no variable beyond ``variables``."""
    return load_prompt(shipped) if value is None else override_template(value, shipped, allowed=variables)


@dataclass
class GradedJudge(Evaluator[S, G]):
    """``judge`` grades each sample 1-5; a subclass declares ``threshold`` (the lowest passing
    grade, default 4), renders the prompt and calls :meth:`graded`."""

    judge: Judge

    async def graded(self, ident: str | None, prompt: str, **fields: Any) -> G | Unscored:
        """The judge's grade of ``prompt`` as a ``result_type`` with ``fields`` added."""
        params = GenerationParams(temperature=0.0, max_tokens=self.judge.params.max_tokens,
                                  seed=self.judge.params.seed)
        answer = await self.judge.ask(prompt, _FORMAT, params=params)
        if isinstance(answer.value, Unscored):
            return answer.value
        score = answer.value.score
        return self.result_type(id=ident, score=score, passed=score >= getattr(self, "threshold", 4),
                                reason=answer.value.reason, raw=answer.raw, **fields)

    def score_scale(self, name: str) -> ScoreScale:
        return PASS if name.endswith("_pass_rate") else GRADE

    def result_scores(self, result: G) -> list[Score]:
        rate, grade = self.score_names()
        return [PASS.score(rate, float(result.passed), passed=result.passed, reason=result.reason),
                GRADE.score(grade, result.score, passed=result.passed, reason=result.reason)]
