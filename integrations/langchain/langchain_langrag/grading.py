"""vRAG-Eval grading for LangChain: a classic ``StringEvaluator`` and a LangSmith evaluator function.

Both grade the prediction against the reference (the label, definitive) for the input question.
A grade reads on two scales (see :meth:`langrag_eval.grading.VragGrade.on_scale`): the paper's
``"1-5"`` and ``"0-1"``, ``(grade - 1) / 4``. ``score`` is on ``scale``, by default ``"0-1"``,
LangChain's and LangSmith's convention for a score; every result also holds both numbers, ``grade``
(1-5) and ``normalised`` (0-1), the same names the LlamaIndex adapter uses (``raw_score`` is the
grade too, under its earlier name). ``value`` is ``"accept"`` or ``"reject"`` and ``reasoning`` the
judge's reason. An answer that could not be graded has ``score`` None and the reason; it is never a
silent 0.

The judge is a langrag ``Judge`` (for the cache, retries, limiter and usage); a LangChain chat model
or a langrag ``ChatModel`` is also accepted and wrapped in a fresh ``Judge``.

>>> from langchain_core.language_models import FakeListChatModel
>>> ev = VragStringEvaluator(FakeListChatModel(responses=["Score: [[4]], Reason: [[Right.]]"]))
>>> r = ev.evaluate_strings(prediction="Paris", reference="Paris", input="Capital of France?")
>>> r["score"], r["grade"], r["normalised"], r["value"], r["reasoning"]
(0.75, 4, 0.75, 'accept', 'Right.')
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_classic.evaluation import StringEvaluator

from langrag_eval.contexts import as_text
from langrag_eval.grading import GradedExample, Scale, VragGrade, VragGrader, check_scale
from langrag_eval.prompts import PromptTemplate
from langrag_eval.results import Unscored
from langrag_eval.runtime import synchronous
from langrag_eval.types import Sample

from ._common import JudgeLike, as_judge, langsmith_function, pick, read_answer, read_question, traced

__all__ = ["VragStringEvaluator", "vrag_langsmith_evaluator", "as_judge"]


def _grader(judge: JudgeLike, options: dict[str, Any]) -> VragGrader:
    return VragGrader(as_judge(judge), **options)


def _as_dict(result: VragGrade | Unscored, scale: Scale) -> dict[str, Any]:
    if isinstance(result, Unscored):
        return {"score": None, "grade": None, "normalised": None, "raw_score": None, "value": None,
                "reasoning": result.reason, "unscored": result.cause}
    out: dict[str, Any] = {"score": result.on_scale(scale), "grade": result.score,
                           "normalised": result.normalised, "raw_score": result.score,
                           "value": "accept" if result.accepted else "reject", "reasoning": result.reason}
    if result.confidence is not None:
        out["confidence"] = result.confidence
    return out


class VragStringEvaluator(StringEvaluator):
    """vRAG-Eval as a ``langchain_classic`` string evaluator (needs input and reference).

    Options are the grader's: ``threshold`` (lowest accepted score, 4), ``confidence``, ``rubric``
    (text or ``Path``), ``examples`` (graded few-shot examples), ``template`` (prompt file).
    ``scale``: what ``score`` reports, ``"0-1"`` (default) or ``"1-5"``; ``grade`` and
    ``normalised`` are in every result whichever it is.
    """

    def __init__(self, judge: JudgeLike, *, threshold: int = 4, confidence: bool = False,
                 rubric: str | Path | None = None, examples: Sequence[GradedExample] = (),
                 template: str | Path | PromptTemplate | None = None, scale: Scale = "0-1") -> None:
        self.grader = _grader(judge, dict(threshold=threshold, confidence=confidence, rubric=rubric,
                                          examples=examples, template=template))
        self.scale = check_scale(scale)

    @property
    def requires_reference(self) -> bool:
        return True

    @property
    def requires_input(self) -> bool:
        return True

    @property
    def evaluation_name(self) -> str:
        return "vrag"

    async def _aevaluate_strings(self, *, prediction: str, reference: str | None = None,
                                 input: str | None = None, callbacks: Any = None, **kwargs: Any) -> dict:
        """``callbacks`` (LangChain's): the grading becomes a run with the judge's calls as children."""
        with traced(self.evaluation_name, {"input": input, "prediction": prediction, "reference": reference},
                    callbacks) as run:
            run.outputs = _as_dict(await self.grader.aevaluate(
                Sample(question=input or "", answer=prediction, reference=reference)), self.scale)
        return run.outputs

    _evaluate_strings = synchronous(_aevaluate_strings)


def vrag_langsmith_evaluator(judge: JudgeLike, *, question_key: str | None = None,
                             answer_key: str | None = None, label_key: str | None = None,
                             key: str = "vrag", asynchronous: bool = False,
                             **grader_options: Any) -> Callable[..., dict | Awaitable[dict]]:
    """An evaluator for ``langsmith.evaluate`` / ``aevaluate``: ``(inputs, outputs, reference_outputs)``.

    The question is read from ``inputs[question_key]`` (default: ``question``, ``query``, ``input``
    or the only value), the answer from ``outputs[answer_key]`` (default: ``answer``, ``output``,
    ``result`` or the only value), the label from ``reference_outputs[label_key]`` (default:
    ``label``, ``answer``, ``reference``, ``output`` or the only value). It returns two results:
    ``key`` with the score on 0-1 (LangSmith feedback's convention), ``value`` accept/reject and the
    reason as ``comment``, and ``{key}_raw_score`` with the 1-5 grade. With ``asynchronous=True``
    the function is async.
    """
    grader = _grader(judge, grader_options)

    async def grade(inputs: dict, outputs: dict, reference_outputs: dict) -> dict:
        question = read_question(inputs, question_key)
        answer = read_answer(outputs, answer_key)
        label = as_text(pick(reference_outputs, label_key, ("label", "answer", "reference", "output")),
                        strict=False)
        sample = Sample(question=question or "", answer=answer, reference=label)
        r = _as_dict(await grader.aevaluate(sample), "0-1")
        main = {"key": key, "score": r["score"], "value": r["value"], "comment": r["reasoning"]}
        if r.get("confidence") is not None or r.get("unscored"):
            main["metadata"] = {k: r[k] for k in ("confidence", "unscored") if r.get(k) is not None}
        return {"results": [main, {"key": f"{key}_raw_score", "score": r["grade"],
                                   "comment": r["reasoning"]}]}

    vrag = langsmith_function(grade, asynchronous=asynchronous, name=key, keys=(key, f"{key}_raw_score"))
    vrag.grader = grader  # type: ignore[attr-defined]
    return vrag
