"""Any langrag evaluator as a LlamaIndex ``BaseEvaluator`` (:class:`LangragEvaluator`), and the
named ones: vRAG-Eval (:class:`VragEvaluator`), THELMA (:class:`ThelmaEvaluator`) and RAGElo's
pairwise judge (:class:`RAGEloPairwiseEvaluator`).

``aevaluate(query, response, contexts, reference=...)`` reads the evaluator's typed scores into an
``EvaluationResult``: ``score`` the chosen score (default: the mean of those scored, each on its
own scale), ``passing`` when every score that has a pass call passes, the reasons as ``feedback``;
with nothing scored, ``invalid_result=True`` and ``invalid_reason`` ("cause: reason"), never a
silent 0. ``get_prompts`` / ``update_prompts`` are the evaluator's :meth:`~langrag_eval.evaluator.Evaluator.prompts`
and :meth:`~langrag_eval.evaluator.Evaluator.with_prompts`, by the same names: the langrag template
text (Jinja2 with its header) or a LlamaIndex ``PromptTemplate`` with ``{query}``-style fields over
the prompt's variables. Nothing here reads ``Settings.llm``.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel, ThelmaScript
>>> ev = VragEvaluator(Judge(ScriptedModel(["Score: [[5]], Reason: [[Complete.]]"])))
>>> r = ev.evaluate(query="Capital of France?", response="Paris.", reference="Paris")
>>> r.score, r.grade, r.normalised, r.passing, r.feedback
(5.0, 5, 1.0, True, 'Complete.')
>>> ev = ThelmaEvaluator(Judge(ThelmaScript(default=1).model()), metric="gr")
>>> r = ev.evaluate(query="When was Ada born?", response="Ada was born in 1815.", contexts=["Ada was born in 1815."])
>>> r.score, r.passing, r.feedback
(1.0, True, 'groundedness: 1 of 1 components matched')
>>> ev = RAGEloPairwiseEvaluator(Judge(ScriptedModel(["Tied.\\n[[C]]"])))
>>> r = ev.evaluate(query="Capital?", response="Paris", second_response="Paris, France")
>>> r.score, r.passing, r.pairwise_source
(0.5, None, 'original')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.evaluation.pairwise import EvaluationSource
from llama_index.core.prompts import BasePromptTemplate

from langrag_eval.adapting import context_texts, sample_of
from langrag_eval.contexts import as_documents, as_text
from langrag_eval.evaluator import Evaluator
from langrag_eval.grading import Scale, VragGrade, VragGrader, check_scale
from langrag_eval.results import Unscored
from langrag_eval.thelma import Thelma, ThelmaResult, Thresholds, select_metrics
from langrag_eval.tournament import GameSample, PairwiseEvaluator

from ._common import JudgeLike, as_judge, template_prompt, traced_evaluation
from .models import as_embedder

__all__ = ["LangragEvaluator", "RAGEloPairwiseEvaluator", "ThelmaEvaluator", "VragEvaluator", "VragResult"]


class LangragEvaluator(BaseEvaluator):
    """Any langrag :class:`~langrag_eval.evaluator.Evaluator` of question, answer, contexts and
    reference. ``score`` names the score reported as ``score`` (default: the mean of those scored)."""

    def __init__(self, evaluator: Evaluator, *, score: str | None = None) -> None:
        self.evaluator, self.score_name = evaluator, score

    def _get_prompts(self) -> dict[str, BasePromptTemplate]:
        return {name: template_prompt(t) for name, t in self.evaluator.prompts().items()}

    def _update_prompts(self, prompts_dict: dict[str, Any]) -> None:
        self.evaluator = self.evaluator.with_prompts(**prompts_dict)  # checked: a refused one changes nothing

    def as_result(self, result: Any, **fields: Any) -> EvaluationResult:
        """The evaluator's result as an ``EvaluationResult`` (a subclass adds its own fields)."""
        scores = self.evaluator.scores(result)
        chosen = [s for s in scores if s.name == self.score_name] if self.score_name else scores
        scored = [s for s in chosen if s.scored]
        if not scored:
            missing = result if isinstance(result, Unscored) else next((s for s in chosen if s.cause), None)
            why = f"{missing.cause}: {missing.reason}" if missing is not None else "undefined: no score"
            return EvaluationResult(**fields, invalid_result=True, invalid_reason=why)
        passed = [s.passed for s in chosen if s.passed is not None]
        return EvaluationResult(**fields, score=sum(s.value for s in scored) / len(scored),  # type: ignore[misc]
                                passing=all(passed) if passed else None,
                                feedback="\n".join(dict.fromkeys(s.reason for s in chosen if s.reason)) or None)

    @traced_evaluation
    async def aevaluate(self, query: str | None = None, response: Any = None, contexts: Sequence[Any] | None = None,
                        reference: str | None = None, sleep_time_in_seconds: int = 0, **kwargs: Any) -> EvaluationResult:
        response = as_text(response, field="response")
        result = await self.evaluator.aevaluate(sample_of(query, response, contexts, reference))
        return self.as_result(result, query=query, response=response, contexts=context_texts(contexts))


class VragResult(EvaluationResult):
    """An ``EvaluationResult`` that also holds the grade on both scales and the judge's stated
    confidence (None when ungraded or not asked for), as the LangChain adapter's results do."""

    grade: int | None = None
    normalised: float | None = None
    confidence: int | None = None


class VragEvaluator(LangragEvaluator):
    """vRAG-Eval: grades the response against the reference (the contexts are passed through, not
    graded). Options are :class:`~langrag_eval.grading.VragGrader`'s (``threshold``, ``confidence``,
    ``rubric``, ``examples``, ``prompt``); ``score`` is on ``scale``, ``"1-5"`` (default, the grade,
    as LlamaIndex's ``CorrectnessEvaluator``) or ``"0-1"``; ``passing`` is the accept decision."""

    def __init__(self, judge: JudgeLike, *, scale: Scale = "1-5", **options: Any) -> None:
        super().__init__(VragGrader(as_judge(judge), **options), score="grade")
        self.scale = check_scale(scale)

    @property
    def grader(self) -> VragGrader:
        return self.evaluator  # type: ignore[return-value]

    def as_result(self, result: VragGrade | Unscored, **fields: Any) -> VragResult:  # type: ignore[override]
        if isinstance(result, Unscored):
            return VragResult(**fields, invalid_result=True, invalid_reason=f"{result.cause}: {result.reason}")
        feedback = result.reason if result.confidence is None else \
            f"{result.reason or ''} (confidence {result.confidence}/100)".strip()
        return VragResult(**fields, score=result.on_scale(self.scale), grade=result.score, normalised=result.normalised,
                          confidence=result.confidence, passing=result.accepted, feedback=feedback)


class ThelmaEvaluator(LangragEvaluator):
    """THELMA. With ``metric`` (sp1, sp2, sqc, rp, rqc, sd, gr): that metric's score, ``passing``
    when it is not low, its comment as ``feedback``. Without: ``metrics`` (default all) at once,
    ``score`` the mean of those scored, ``passing`` True when no scored metric is low and no Table 2
    pattern fired, ``feedback`` every metric and the diagnosis, and ``last_result`` the full
    :class:`~langrag_eval.thelma.ThelmaResult` of the latest call. Other options are
    :class:`~langrag_eval.thelma.Thelma`'s (``embedder`` may be a LlamaIndex ``BaseEmbedding``).
    Its prompts are the THELMA tasks its metrics render, by task name."""

    def __init__(self, judge: JudgeLike, *, metric: str | None = None, metrics: Sequence[str] | None = None,
                 embedder: Any = None, thresholds: Thresholds | None = None, **options: Any) -> None:
        super().__init__(Thelma(as_judge(judge), metrics=select_metrics(metric, metrics), embedder=as_embedder(embedder),
                                thresholds=thresholds or Thresholds(), **options), score=metric)
        self.metric = metric
        self.last_result: ThelmaResult | None = None

    @property
    def thelma(self) -> Thelma:
        return self.evaluator  # type: ignore[return-value]

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self.thelma.metrics)

    def as_result(self, result: ThelmaResult, **fields: Any) -> EvaluationResult:  # type: ignore[override]
        self.last_result = result
        score = result.score(self.metric) if self.metric else result.mean()
        feedback = result.comment(self.metric) if self.metric else result.feedback()
        if score is None:
            return EvaluationResult(**fields, invalid_result=True, invalid_reason=feedback)
        return EvaluationResult(**fields, score=score, passing=result.passes(self.thelma.thresholds, self.metric),
                                feedback=feedback)


class RAGEloPairwiseEvaluator(LangragEvaluator):
    """RAGElo's pairwise judge, from a judge and :class:`~langrag_eval.tournament.PairwiseEvaluator`
    options (``threshold``, ``factors`` ...) or such an evaluator. ``aevaluate(query, response,
    contexts, second_response=..., second_contexts=...)`` judges the pooled contexts, shows the judge
    those at or above ``threshold`` and plays the responses in both orders. Like LlamaIndex's
    ``PairwiseComparisonEvaluator``: ``score`` 1.0 when ``response`` wins, 0.0 when
    ``second_response`` wins, 0.5 for a tie, ``passing`` True / False / None; ``pairwise_source`` is
    ``original`` when both orders agreed and ``neither`` when the verdict flipped (then a tie).
    Responses may be LlamaIndex ``Response`` objects, whose ``source_nodes`` are then the contexts."""

    def __init__(self, judge: JudgeLike | PairwiseEvaluator, **options: Any) -> None:
        super().__init__(judge if isinstance(judge, PairwiseEvaluator) else PairwiseEvaluator(as_judge(judge), **options))

    @property
    def pairwise(self) -> PairwiseEvaluator:
        return self.evaluator  # type: ignore[return-value]

    @traced_evaluation
    async def aevaluate(self, query: str | None = None, response: Any = None, contexts: Any = None,  # type: ignore[override]
                        second_response: Any = None, second_contexts: Any = None, reference: str | None = None,
                        sleep_time_in_seconds: int = 0, **kwargs: Any) -> EvaluationResult:
        contexts = response if contexts is None and hasattr(response, "source_nodes") else contexts
        if second_contexts is None and hasattr(second_response, "source_nodes"):
            second_contexts = second_response
        response, second = as_text(response, field="response"), as_text(second_response, field="second_response")
        docs_a, docs_b = as_documents(contexts), as_documents(second_contexts, field="second_contexts")
        if query is None or response is None or second is None:
            return EvaluationResult(query=query, response=response, invalid_result=True,
                                    invalid_reason="invalid_input: query, response and second_response are needed")
        game = await self.pairwise.aevaluate(GameSample.pooled(query, response, second, docs_a, docs_b))
        fields = dict(query=query, response=response, contexts=[d.text for d in [*docs_a, *docs_b]])
        if isinstance(game, Unscored):
            return EvaluationResult(**fields, invalid_result=True, invalid_reason=f"{game.cause}: {game.reason}")
        return EvaluationResult(
            **fields, score=game.score_a, passing={"a": True, "b": False, "tie": None}[game.outcome],
            pairwise_source=(EvaluationSource.ORIGINAL if game.consistent else EvaluationSource.NEITHER).value,
            feedback=f"first response shown as A:\n{game.raw_forward}\n\nsecond response shown as A:\n{game.raw_backward}")
