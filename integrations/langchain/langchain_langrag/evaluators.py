"""Any langrag evaluator for LangChain: a ``langchain_classic`` string evaluator
(:class:`LangragStringEvaluator`), a pairwise one (:class:`LangragPairwiseEvaluator`, RAGElo games)
and LangSmith evaluator functions (:func:`langsmith_evaluator`, row by row or comparative).

A result is :func:`~langrag_eval.adapters.outcomes.string_dict` (``score`` on 0..1 or None with the cause,
never a silent 0). With LangChain callbacks (passed, or the calling run's) an evaluation is a chain
run whose children are the judge's model calls.

>>> from langchain_core.language_models import FakeListChatModel
>>> from langrag_eval.grading import VragGrader
>>> ev = LangragStringEvaluator(VragGrader(as_judge(FakeListChatModel(responses=["Score: [[4]], Reason: [[Right.]]"]))))
>>> r = ev.evaluate_strings(prediction="Paris", reference="Paris", input="Capital of France?")
>>> r["score"], r["grade"], r["value"], r["reasoning"]
(0.75, 4.0, 'accept', 'Right.')
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_classic.evaluation import PairwiseStringEvaluator, StringEvaluator
from langchain_core.callbacks import CallbackManager
from langchain_core.outputs import Generation, LLMResult
from langchain_core.runnables.config import var_child_runnable_config

from langrag_eval.adapters.adapting import sample_of
from langrag_eval.types import as_documents
from langrag_eval.evaluator import Evaluator
from langrag_eval.adapters.outcomes import check_score, langsmith_evaluator, needs_reference, string_dict
from langrag_eval.adapters.recorder import EVALUATION_TAG
from langrag_eval.runtime import synchronous
from langrag_eval.runtime.tracing import observing
from langrag_eval.tournament import GameSample

from .models import as_judge

__all__ = ["LangragPairwiseEvaluator", "LangragStringEvaluator", "as_judge", "langsmith_evaluator"]


@dataclass
class _JudgeCallTracer:
    """Reports each judge model call as a LangChain LLM run (prompt, reply, token usage)."""

    manager: CallbackManager

    def started(self, prompt: str, model_id: str, params: Any) -> Any:
        (run,) = self.manager.on_llm_start({"name": model_id}, [prompt], name=f"judge {model_id}",
                                           invocation_params={"model": model_id, **params.model_dump()})
        return run, model_id

    def finished(self, token: Any, reply: Any) -> None:
        token[0].on_llm_end(LLMResult(generations=[[Generation(text=reply.text)]],
                                      llm_output={"token_usage": reply.usage.as_dict(), "model_name": token[1]}))

    def failed(self, token: Any, error: BaseException) -> None:
        token[0].on_llm_error(error)


async def _traced(name: str, inputs: dict[str, Any], callbacks: Any, work: Callable[[], Awaitable[dict]]) -> dict:
    callbacks = callbacks or (var_child_runnable_config.get() or {}).get("callbacks")
    if not callbacks:
        return await work()
    manager = CallbackManager.configure(inheritable_callbacks=callbacks, local_tags=[EVALUATION_TAG])
    run = manager.on_chain_start({"name": name}, inputs, name=name)
    try:
        with observing(_JudgeCallTracer(run.get_child())):
            outputs = await work()
    except BaseException as exc:
        run.on_chain_error(exc)
        raise
    run.on_chain_end(outputs)
    return outputs


class LangragStringEvaluator(StringEvaluator):
    """Any langrag :class:`~langrag_eval.evaluator.Evaluator` of a sample as a string evaluator:
    ``prediction`` is the answer, ``input`` the question, ``reference`` the label and ``contexts=``
    the retrieved documents (texts, LangChain documents, dicts). ``score`` names the score reported
    as ``score`` (default: the mean of all, each on 0..1; vRAG-Eval's grade). ``requires_reference``
    defaults to whether the evaluator grades against a label."""

    def __init__(self, evaluator: Evaluator, *, name: str | None = None, score: str | None = None,
                 requires_reference: bool | None = None) -> None:
        self.evaluator, self.score_name = evaluator, check_score(evaluator, score)
        self._requires_reference = needs_reference(evaluator) if requires_reference is None else requires_reference
        task = getattr(evaluator, "task", type(evaluator).__name__.lower())  # THELMA names no task
        self.name = name or task.replace("/", "_") + (f"_{score}" if score else "")

    requires_input = property(lambda self: True)
    requires_reference = property(lambda self: self._requires_reference)
    evaluation_name = property(lambda self: self.name)

    async def _aevaluate_strings(self, *, prediction: str, reference: str | None = None, input: str | None = None,
                                 callbacks: Any = None, **kwargs: Any) -> dict:
        async def work() -> dict:
            sample = sample_of(input, prediction, kwargs.get("contexts"), reference)
            return string_dict(self.evaluator, await self.evaluator.aevaluate(sample), self.score_name)
        return await _traced(self.name, {"input": input, "prediction": prediction, "reference": reference},
                             callbacks, work)

    _evaluate_strings = synchronous(_aevaluate_strings)


class LangragPairwiseEvaluator(PairwiseStringEvaluator):
    """Any langrag evaluator of a :class:`~langrag_eval.tournament.GameSample` (RAGElo's
    :class:`~langrag_eval.tournament.PairwiseEvaluator`) as a pairwise string evaluator; ``contexts=``
    are ``prediction``'s documents, ``contexts_b=`` ``prediction_b``'s. ``score``: 1 when A wins, 0
    when B wins, 0.5 for a tie (as when the verdict flips with the order), None when unjudged.

    >>> from langchain_core.language_models import FakeListChatModel
    >>> from langrag_eval.tournament import PairwiseEvaluator
    >>> ev = LangragPairwiseEvaluator(PairwiseEvaluator(as_judge(FakeListChatModel(responses=["[[A]]"]))))
    >>> r = ev.evaluate_string_pairs(prediction="Paris", prediction_b="Lyon", input="Capital of France?")
    >>> r["score"], r["value"], r["verdicts"]     # [[A]] in both orders: position bias, a tie
    (0.5, None, ['A', 'A'])
    """

    def __init__(self, evaluator: Evaluator, *, name: str = "ragelo_pairwise") -> None:
        self.evaluator, self.name = evaluator, name

    requires_input = property(lambda self: True)
    evaluation_name = property(lambda self: self.name)

    async def _aevaluate_string_pairs(self, *, prediction: str, prediction_b: str, reference: str | None = None,
                                      input: str | None = None, contexts: Any = None, contexts_b: Any = None,
                                      callbacks: Any = None, **kwargs: Any) -> dict:
        async def work() -> dict:
            game = GameSample.pooled(input or "", prediction, prediction_b, as_documents(contexts, field="contexts"),
                                     as_documents(contexts_b, field="contexts_b"))
            return string_dict(self.evaluator, await self.evaluator.aevaluate(game))
        return await _traced(self.name, {"input": input, "prediction": prediction, "prediction_b": prediction_b},
                             callbacks, work)

    _evaluate_string_pairs = synchronous(_aevaluate_string_pairs)
