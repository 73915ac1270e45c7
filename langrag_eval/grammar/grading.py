"""Reference-based grading (GRAMMAR section 3.3, Table 6): a judge reads the question, the true
answer from the database and the system's response, and says Correct or Incorrect.

>>> from langrag_eval import Sample
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> grader = ReferenceGrader(Judge(ScriptedModel(["Same city.\\nJudgement: [[Correct]]"])))
>>> grader.evaluate(Sample(question="Where is the Zürich office?", reference="Switzerland",
...                           answer="In Switzerland.")).correct
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..errors import JudgeOutputError
from ..prompting.templates import PromptTemplate, override_template
from ..results import Declaration, Score, ScoreScale, Section, Unscored
from ..evaluator import Evaluator, check_judge
from ..runtime import Judge
from ..types import Sample
from ..verdicts.formats import mask_quoted, single_verdict

__all__ = ["Correctness", "CorrectnessFormat", "ReferenceGrader"]

_VERDICT = re.compile(r"\[\[\s*(correct|incorrect)\s*\]\]", re.IGNORECASE)
_LINE = re.compile(r"^[\s*_#>-]*(?:final\s+)?(?:judge?ment|verdict)?[\s*_]*:?[\s*_]*"
                   r"(?:\[\[\s*)?(correct|incorrect)(?:\s*\]\])?[\s*_.]*$", re.IGNORECASE | re.MULTILINE)

_CORRECT = ScoreScale(0, 1, binary=True)


class Correctness(BaseModel):
    """The reference-based verdict for one response, with the judge's reply for audit."""

    model_config = ConfigDict(frozen=True)

    correct: bool
    raw: str | None = None


@dataclass(frozen=True)
class CorrectnessFormat:
    """``Judgement: [[Correct]]`` / ``[[Incorrect]]``. Verdicts the judge quotes from the response are
    masked first; every verdict left must agree (a line holding only ``Correct`` counts too), or the
    reply is ambiguous.

    >>> CorrectnessFormat().parse('It says "[[Correct]]" but names Lyon.\\nJudgement: [[Incorrect]]')
    False
    """

    instructions: str = "Judgement: [[Correct]] or Judgement: [[Incorrect]] on the last line"

    def parse(self, text: str) -> bool:
        def verdicts(view: str) -> list[str]:
            return [m.group(1).lower() for pattern in (_VERDICT, _LINE) for m in pattern.finditer(view)]

        return single_verdict(verdicts(mask_quoted(text)), self.instructions) == "correct"

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {
            "reason": {"type": "string", "maxLength": 400},
            "judgement": {"type": "string", "enum": ["Correct", "Incorrect"]}},
            "required": ["reason", "judgement"]}

    def from_json(self, obj: Any) -> bool:
        value = obj.get("judgement") if isinstance(obj, dict) else None
        if not isinstance(value, str) or value.lower() not in ("correct", "incorrect"):
            raise JudgeOutputError(f"JSON judgement {value!r} is not Correct or Incorrect")
        return value.lower() == "correct"


@dataclass
class ReferenceGrader(Evaluator[Sample, Correctness]):
    """Grades a response against the database's answer: an :class:`~langrag_eval.evaluator.Evaluator`
    of :class:`Sample` whose ``answer`` is the system's response and ``reference`` the true answer.
    ``prompt`` may name a user's template with the variables ``question``, ``true_answer`` and
    ``response``."""

    judge: Judge
    prompt: str | Path | PromptTemplate = "grammar/correctness"

    task: ClassVar[str] = "grammar/correct"
    result_type: ClassVar[type[Correctness]] = Correctness
    description: ClassVar[str] = "GRAMMAR grading"
    prompt_fields: ClassVar[dict[str, str]] = {"correctness": "prompt"}
    # judged as a whole; the verdict carries no reason of its own, so the judge's reply ends it
    # (the report's section is the analysis a run stores as ``grammar``)
    declaration: ClassVar[Declaration] = Declaration({"correct": _CORRECT}, judged_whole="grammar_scored_rate",
                                                     raw_reason=True, sections=(Section("GRAMMAR", "grammar"),))

    def __post_init__(self) -> None:
        check_judge(self)
        self._template: PromptTemplate = override_template(self.prompt, "grammar/correctness")

    def prompts(self) -> dict[str, PromptTemplate]:
        return {"correctness": self._template}

    def index_item(self, sample: Sample) -> tuple[str | None, str | None, str | None]:
        return sample.question, sample.reference, None

    def result_scores(self, result: Correctness) -> list[Score]:
        """1 for Correct, 0 for Incorrect, passed when correct."""
        return [_CORRECT.score("correct", float(result.correct), passed=result.correct)]

    async def aevaluate(self, sample: Sample) -> Correctness | Unscored:
        response, true_answer = sample.answer, sample.reference
        if not response or not response.strip():
            return Unscored(reason="the response is empty", cause="invalid_input")
        if not true_answer:
            return Unscored(reason="the query has no true answer", cause="invalid_input")
        prompt = self._template.render(question=sample.question, true_answer=true_answer, response=response)
        answer = await self.judge.ask(prompt, CorrectnessFormat())
        if isinstance(answer.value, Unscored):
            return answer.value
        return Correctness(correct=bool(answer.value), raw=answer.raw)
