"""vRAG-Eval grading as a LlamaIndex ``BaseEvaluator``.

``aevaluate(query, response, contexts, reference=...)`` grades the response against the reference
(the label, definitive) and returns a :class:`VragResult`, an ``EvaluationResult(score, passing,
feedback)``. A grade reads on two scales (see :meth:`langrag_eval.grading.VragGrade.on_scale`):
``score`` is on ``scale``, by default ``"1-5"``, the grade itself, as LlamaIndex's own
``CorrectnessEvaluator`` reports correctness (its passing threshold is 4 too); ``scale="0-1"`` gives
``(grade - 1) / 4``. Every result also holds both numbers, ``grade`` (1-5) and ``normalised``
(0-1), the same names the LangChain adapter uses. ``passing`` is the accept decision (grade >=
``threshold``, 4 by default) and ``feedback`` the judge's reason. An answer that could not be graded
is ``invalid_result=True`` with ``invalid_reason`` ("cause: reason"); its score and passing stay
None. The contexts are not graded (vRAG-Eval compares with the label only) but are passed through
into the result.

The judge is a langrag ``Judge``; a LlamaIndex ``LLM`` or a langrag ``ChatModel`` is also accepted
and wrapped in a fresh ``Judge``. Nothing here reads ``Settings.llm``.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> ev = VragEvaluator(Judge(ScriptedModel(["Score: [[5]], Reason: [[Complete.]]"])))
>>> r = ev.evaluate(query="Capital of France?", response="Paris.", reference="Paris")
>>> r.score, r.grade, r.normalised, r.passing, r.feedback
(5.0, 5, 1.0, True, 'Complete.')
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts import BasePromptTemplate

from langrag_eval.deprecation import warn_renamed
from langrag_eval.grading import GradedExample, Scale, VragGrade, VragGrader, check_scale
from langrag_eval.prompts import PromptTemplate
from langrag_eval.results import Unscored
from langrag_eval.types import Sample

from ._common import traced_evaluation, context_texts, JudgeLike, as_judge, template_prompt

__all__ = ["VragEvaluator", "VragResult", "as_judge"]

PROMPT_KEY = "grade_template"


class VragResult(EvaluationResult):
    """An ``EvaluationResult`` that also holds the grade on both scales and the judge's stated
    confidence (None when ungraded or not asked for), as the LangChain adapter's results do."""

    grade: int | None = None
    normalised: float | None = None
    confidence: int | None = None


class VragEvaluator(BaseEvaluator):
    """vRAG-Eval for LlamaIndex. Options are the grader's: ``threshold``, ``confidence``, ``rubric``
    (text or ``Path``), ``examples``, ``template``; ``scale`` is what ``score`` reports, ``"1-5"``
    (default) or ``"0-1"`` (``normalise=True`` is its deprecated spelling).

    Its one prompt, ``grade_template``, is the langrag template text (Jinja2 with a header). An
    update may also be a LlamaIndex ``PromptTemplate`` with ``{question}``-style fields, translated
    to the grader's variables (question, label, answer, rubric, examples, confidence); any other
    field is refused, naming these.
    """

    def __init__(self, judge: JudgeLike, *, threshold: int = 4, confidence: bool = False,
                 rubric: str | Path | None = None, examples: Sequence[GradedExample] = (),
                 template: str | Path | PromptTemplate | None = None, scale: Scale = "1-5",
                 normalise: bool | None = None) -> None:
        if normalise is not None:
            warn_renamed("VragEvaluator(normalise=...)", 'scale="0-1" (or "1-5")')
            scale = "0-1" if normalise else "1-5"
        self.grader = VragGrader(as_judge(judge), threshold=threshold, confidence=confidence,
                                 rubric=rubric, examples=examples, template=template)
        self.scale = check_scale(scale)

    def _get_prompts(self) -> dict[str, BasePromptTemplate]:
        return {PROMPT_KEY: template_prompt(self.grader.prompt_template)}

    def _update_prompts(self, prompts_dict: dict[str, BasePromptTemplate]) -> None:
        if PROMPT_KEY in prompts_dict:
            self.grader.set_template(prompts_dict[PROMPT_KEY])  # the grader reads framework prompt objects

    @traced_evaluation
    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[str] | None = None, reference: str | None = None,
                        sleep_time_in_seconds: int = 0, **kwargs: Any) -> VragResult:
        result = await self.grader.aevaluate(Sample(question=query or "", answer=response, reference=reference))
        if isinstance(result, Unscored):
            return VragResult(query=query, response=response, contexts=context_texts(contexts),
                              invalid_result=True, invalid_reason=f"{result.cause}: {result.reason}")
        return VragResult(query=query, response=response, contexts=context_texts(contexts),
                          score=result.on_scale(self.scale), grade=result.score, normalised=result.normalised,
                          confidence=result.confidence, passing=result.accepted,
                          feedback=self._feedback(result))

    @staticmethod
    def _feedback(grade: VragGrade) -> str | None:
        if grade.confidence is None:
            return grade.reason
        return f"{grade.reason or ''} (confidence {grade.confidence}/100)".strip()
