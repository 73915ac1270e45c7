"""vRAG-Eval grading as a LlamaIndex ``BaseEvaluator``.

``aevaluate(query, response, contexts, reference=...)`` grades the response against the reference
(the label, definitive) and returns ``EvaluationResult(score, passing, feedback)``: ``score`` is the
1-5 grade (as LlamaIndex's ``CorrectnessEvaluator`` reports it; ``normalise=True`` gives 0..1),
``passing`` is the accept decision (score >= ``threshold``, 4 by default) and ``feedback`` the
judge's reason. An answer that could not be graded is ``invalid_result=True`` with
``invalid_reason`` ("cause: reason"); its score and passing stay None. The contexts are not graded
(vRAG-Eval compares with the label only) but are passed through into the result.

The judge is a langrag ``Judge``; a LlamaIndex ``LLM`` or a langrag ``ChatModel`` is also accepted
and wrapped in a fresh ``Judge``. Nothing here reads ``Settings.llm``.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> ev = VragEvaluator(Judge(ScriptedModel(["Score: [[5]], Reason: [[Complete.]]"])))
>>> r = ev.evaluate(query="Capital of France?", response="Paris.", reference="Paris")
>>> r.score, r.passing, r.feedback
(5.0, True, 'Complete.')
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.llms import LLM
from llama_index.core.prompts import BasePromptTemplate
from llama_index.core.prompts import PromptTemplate as LIPromptTemplate

from langrag_eval.errors import ConfigError
from langrag_eval.grading import GradedExample, VragGrade, VragGrader
from langrag_eval.model import ChatModel
from langrag_eval.prompts import PromptTemplate
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge

from .models import LlamaIndexJudge

__all__ = ["VragEvaluator", "as_judge"]

PROMPT_KEY = "grade_template"
_USER_HEADER = ("{#\ntask: vrag/grade (user template)\nvariables: question, label, answer, rubric, "
                "examples, confidence\noutput: Score: [[n]], Reason: [[...]]\n#}\n")


def as_judge(judge: Judge | ChatModel | LLM) -> Judge:
    """A langrag ``Judge`` from a Judge, a LlamaIndex LLM or a langrag ``ChatModel``."""
    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, LLM):
        return Judge(LlamaIndexJudge(judge))
    if isinstance(judge, ChatModel):
        return Judge(judge)
    raise ConfigError(f"expected a langrag Judge, a LlamaIndex LLM or a langrag ChatModel, "
                      f"got {type(judge).__name__}")


def _template_text(t: PromptTemplate) -> str:
    header = [f"task: {t.task}"] + ([f"paper: {t.paper}"] if t.paper else []) + [
        f"variables: {', '.join(t.variables)}", f"output: {t.output}"]
    return "{#\n" + "\n".join(header) + "\n#}\n" + t.body


class VragEvaluator(BaseEvaluator):
    """vRAG-Eval for LlamaIndex. Options are the grader's: ``threshold``, ``confidence``, ``rubric``
    (text or ``Path``), ``examples``, ``template``; ``normalise`` reports scores on 0..1.

    Its one prompt, ``grade_template``, is the langrag template text (Jinja2 with a header). An
    updated prompt without a header gets one declaring all six variables (question, label, answer,
    rubric, examples, confidence).
    """

    def __init__(self, judge: Judge | ChatModel | LLM, *, threshold: int = 4, confidence: bool = False,
                 rubric: str | Path | None = None, examples: Sequence[GradedExample] = (),
                 template: str | Path | PromptTemplate | None = None, normalise: bool = False) -> None:
        self.grader = VragGrader(as_judge(judge), threshold=threshold, confidence=confidence,
                                 rubric=rubric, examples=examples, template=template)
        self.normalise = normalise

    def _get_prompts(self) -> dict[str, BasePromptTemplate]:
        return {PROMPT_KEY: LIPromptTemplate(_template_text(self.grader.prompt_template))}

    def _update_prompts(self, prompts_dict: dict[str, BasePromptTemplate]) -> None:
        if PROMPT_KEY not in prompts_dict:
            return
        prompt = prompts_dict[PROMPT_KEY]
        text = prompt.get_template() if isinstance(prompt, BasePromptTemplate) else str(prompt)
        if not text.lstrip().startswith("{#"):
            text = _USER_HEADER + text
        self.grader.set_template(PromptTemplate.from_text(text, source=f"LlamaIndex prompt {PROMPT_KEY!r}"))

    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[str] | None = None, reference: str | None = None,
                        sleep_time_in_seconds: int = 0, **kwargs: Any) -> EvaluationResult:
        result = await self.grader.grade(question=query, answer=response, label=reference)
        if isinstance(result, Unscored):
            return EvaluationResult(query=query, response=response, contexts=contexts, invalid_result=True,
                                    invalid_reason=f"{result.cause}: {result.reason}")
        return EvaluationResult(query=query, response=response, contexts=contexts,
                                score=self._score(result), passing=result.accepted,
                                feedback=self._feedback(result))

    def _score(self, grade: VragGrade) -> float:
        return grade.normalised if self.normalise else float(grade.score)

    @staticmethod
    def _feedback(grade: VragGrade) -> str | None:
        if grade.confidence is None:
            return grade.reason
        return f"{grade.reason or ''} (confidence {grade.confidence}/100)".strip()
