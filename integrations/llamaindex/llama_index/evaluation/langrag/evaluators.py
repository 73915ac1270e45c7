"""Any langrag evaluator as one LlamaIndex ``BaseEvaluator``, its result read by the core
(:func:`~langrag_eval.adapters.outcomes.aevaluate_call`; a game's ``second_response`` / ``second_contexts``
too). ``get_prompts`` / ``update_prompts`` are the evaluator's ``prompts()`` / ``with_prompts()``;
judge calls are instrumentation events in the evaluation's span; nothing reads ``Settings.llm``.

>>> from langrag_eval.grading import VragGrader
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> judge = Judge(ScriptedModel(["Score: [[5]], Reason: [[Complete.]]"]))
>>> ev = LangragEvaluator(VragGrader(judge), score="grade")
>>> r = ev.evaluate(query="Capital of France?", response="Paris.", reference="Paris")
>>> r.score, r.passing, r.feedback, r.result.normalised
(5.0, True, 'Complete.', 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.llm import LLMCompletionEndEvent, LLMCompletionStartEvent
from llama_index.core.prompts import BasePromptTemplate, PromptTemplate

from langrag_eval.evaluator import Evaluator
from langrag_eval.adapters.outcomes import aevaluate_call, check_score
from langrag_eval.runtime.tracing import observing
from langrag_eval.tournament import GameRecord

__all__ = ["LangragEvaluator", "LangragResult"]

_dispatcher = get_dispatcher(__name__)


class _JudgeCallEvents:
    """Each judge model call as LlamaIndex completion start / end events (token usage in ``raw``)."""

    def started(self, prompt: str, model_id: str, params: Any) -> Any:
        _dispatcher.event(LLMCompletionStartEvent(prompt=prompt, additional_kwargs={},
                                                  model_dict={"model": model_id, **params.model_dump()}))
        return prompt

    def finished(self, prompt: Any, reply: Any) -> None:
        _dispatcher.event(LLMCompletionEndEvent(prompt=prompt, response=CompletionResponse(
            text=reply.text, raw={"usage": reply.usage.as_dict()})))

    def failed(self, prompt: Any, error: BaseException) -> None:
        return None  # the evaluation reports the failure as an invalid result


class LangragResult(EvaluationResult):
    """An ``EvaluationResult`` with every score by name and the evaluator's own result."""

    scores: dict[str, float | None] = {}
    result: Any = None


class LangragEvaluator(BaseEvaluator):
    """``evaluator`` as a LlamaIndex evaluator. ``score`` names the score reported as ``score`` (else
    the mean of those scored), on its own scale or, with ``normalise``, on 0..1. Nothing scored is an
    ``invalid_result`` with ``invalid_reason`` ("cause: reason"), never a silent 0. A game's
    ``passing`` (True / False / None: win, loss, tie) and ``pairwise_source`` are as LlamaIndex's
    ``PairwiseComparisonEvaluator`` gives them."""

    def __init__(self, evaluator: Evaluator, *, score: str | None = None, normalise: bool = False) -> None:
        self.evaluator, self.score, self.normalise = evaluator, check_score(evaluator, score), normalise

    def _get_prompts(self) -> dict[str, BasePromptTemplate]:
        return {name: PromptTemplate(t.to_text()) for name, t in self.evaluator.prompts().items()}

    def _update_prompts(self, prompts_dict: dict[str, Any]) -> None:
        self.evaluator = self.evaluator.with_prompts(**prompts_dict)  # checked: one refused changes nothing

    @_dispatcher.span
    async def aevaluate(self, query: str | None = None, response: Any = None, contexts: Sequence[Any] | None = None,
                        reference: str | None = None, sleep_time_in_seconds: int = 0,
                        **kwargs: Any) -> LangragResult:
        with observing(_JudgeCallEvents()):
            o = await aevaluate_call(self.evaluator, query, response, contexts, reference, score=self.score,
                                     normalise=self.normalise, second_answer=kwargs.get("second_response"),
                                     second_contexts=kwargs.get("second_contexts"))
        game: dict[str, Any] = {}  # a game as LlamaIndex's PairwiseComparisonEvaluator reports one
        if isinstance(o.result, GameRecord):
            game = {"passing": {"a": True, "b": False}.get(o.result.outcome),
                    "pairwise_source": "original" if o.result.consistent else "neither"}
        return LangragResult(**{"query": query, "response": o.answer, "contexts": o.contexts, "score": o.score,
                                "passing": o.passing, "feedback": o.feedback, "scores": o.scores,
                                "result": o.result, "invalid_result": o.invalid_reason is not None,
                                "invalid_reason": o.invalid_reason, **game})
