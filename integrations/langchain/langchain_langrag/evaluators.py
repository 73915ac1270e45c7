"""Any langrag evaluator for LangChain: a ``langchain_classic`` string evaluator
(:class:`LangragStringEvaluator`), a pairwise one for RAGElo games (:class:`RAGEloPairwiseEvaluator`)
and LangSmith evaluator functions (:func:`~langrag_eval.adapting.langsmith_evaluator`, any
evaluator; :func:`ragelo_langsmith_evaluator` for comparative experiments).

A result is the evaluator's typed scores as LangChain reads them (:func:`~langrag_eval.adapting.string_result`):
``score`` on 0..1, ``value`` pass / fail, ``reasoning``, ``scores`` by name, and ``score`` None with
the cause when nothing could be scored, never a silent 0. The named evaluators are the generic
one with a capability's settings and the result keys it has always had: vRAG-Eval's ``grade``,
``normalised`` and accept / reject, THELMA's metrics and diagnosis.

>>> from langchain_core.language_models import FakeListChatModel
>>> ev = VragStringEvaluator(FakeListChatModel(responses=["Score: [[4]], Reason: [[Right.]]"]))
>>> r = ev.evaluate_strings(prediction="Paris", reference="Paris", input="Capital of France?")
>>> r["score"], r["grade"], r["normalised"], r["value"], r["reasoning"]
(0.75, 4, 0.75, 'accept', 'Right.')
>>> ev = RAGEloPairwiseEvaluator(FakeListChatModel(responses=["The first is better.\\n[[A]]"]))
>>> r = ev.evaluate_string_pairs(prediction="Paris", prediction_b="Lyon", input="Capital of France?")
>>> r["score"], r["value"], r["verdicts"]     # [[A]] in both orders: position bias, a tie
(0.5, None, ['A', 'A'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_classic.evaluation import PairwiseStringEvaluator, StringEvaluator

from langrag_eval.adapting import (ANSWER_KEYS, CONTEXT_KEYS, QUESTION_KEYS, langsmith_evaluator, pick, sample_of,
                                   string_result)
from langrag_eval.contexts import as_documents, as_text
from langrag_eval.errors import ArgumentError
from langrag_eval.evaluator import Evaluator
from langrag_eval.grading import Scale, VragGrade, VragGrader, check_scale
from langrag_eval.results import Unscored
from langrag_eval.runtime import synchronous
from langrag_eval.thelma import METRICS, Thelma, ThelmaResult, select_metrics
from langrag_eval.tournament import GameRecord, GameSample, PairwiseEvaluator

from ._common import JudgeLike, as_judge, traced
from .models import as_embedder

__all__ = ["LangragStringEvaluator", "RAGEloPairwiseEvaluator", "ThelmaStringEvaluator", "VragStringEvaluator",
           "langsmith_evaluator", "ragelo_langsmith_evaluator", "thelma_langsmith_evaluator",
           "vrag_langsmith_evaluator"]


class LangragStringEvaluator(StringEvaluator):
    """Any langrag :class:`~langrag_eval.evaluator.Evaluator` as a string evaluator: ``prediction``
    is the answer, ``input`` the question, ``reference`` the label and ``contexts=`` the retrieved
    documents (texts, LangChain documents, dicts). ``score`` names the score reported as
    ``score`` (default: the mean of all, each on 0..1)."""

    def __init__(self, evaluator: Evaluator, *, name: str | None = None, score: str | None = None,
                 requires_reference: bool = False) -> None:
        self.evaluator, self.score_name, self.name = evaluator, score, name or evaluator.task.replace("/", "_")
        self._requires_reference = requires_reference

    @property
    def requires_input(self) -> bool:
        return True

    @property
    def requires_reference(self) -> bool:
        return self._requires_reference

    @property
    def evaluation_name(self) -> str:
        return self.name

    def as_dict(self, result: Any) -> dict[str, Any]:
        """The evaluator's result as this string evaluator's (a subclass adds its own keys)."""
        return string_result(self.evaluator.scores(result), self.score_name)

    async def _aevaluate_strings(self, *, prediction: str, reference: str | None = None, input: str | None = None,
                                 callbacks: Any = None, **kwargs: Any) -> dict:
        """``callbacks`` (LangChain's): the evaluation becomes a run with the judge's calls as children."""
        sample = sample_of(input, prediction, kwargs.get("contexts"), reference)
        with traced(self.evaluation_name, {"input": input, "prediction": prediction, "reference": reference},
                    callbacks) as run:
            run.outputs = self.as_dict(await self.evaluator.aevaluate(sample))
        return run.outputs

    _evaluate_strings = synchronous(_aevaluate_strings)


def _vrag_dict(result: VragGrade | Unscored, scale: Scale) -> dict[str, Any]:
    if isinstance(result, Unscored):
        return {"score": None, "grade": None, "normalised": None, "raw_score": None, "value": None,
                "reasoning": result.reason, "unscored": result.cause}
    return {"score": result.on_scale(scale), "grade": result.score, "normalised": result.normalised,
            "raw_score": result.score,  # the grade, under the name LangChain's scored evaluators use
            "value": "accept" if result.accepted else "reject", "reasoning": result.reason,
            **({"confidence": result.confidence} if result.confidence is not None else {})}


class VragStringEvaluator(LangragStringEvaluator):
    """vRAG-Eval (needs input and reference). Options are :class:`~langrag_eval.grading.VragGrader`'s
    (``threshold``, ``confidence``, ``rubric``, ``examples``, ``prompt``). ``score`` is on ``scale``,
    ``"0-1"`` (default, ``(grade - 1) / 4``) or ``"1-5"``; ``grade`` and ``normalised`` are in every result."""

    def __init__(self, judge: JudgeLike, *, scale: Scale = "0-1", **options: Any) -> None:
        super().__init__(VragGrader(as_judge(judge), **options), name="vrag", requires_reference=True)
        self.scale = check_scale(scale)

    @property
    def grader(self) -> VragGrader:
        return self.evaluator  # type: ignore[return-value]

    def as_dict(self, result: Any) -> dict[str, Any]:
        return _vrag_dict(result, self.scale)


def _thelma(judge: JudgeLike, metrics: Sequence[str], embedder: Any, options: dict[str, Any]) -> Thelma:
    return Thelma(as_judge(judge), metrics=tuple(metrics), embedder=as_embedder(embedder), **options)


class ThelmaStringEvaluator(LangragStringEvaluator):
    """THELMA: ``metric`` (sp1, sp2, sqc, rp, rqc, sd, gr) for that metric's score and comment;
    without, ``metrics`` (default all) scored together: ``score`` their mean, ``metrics`` each
    score, ``diagnosis`` the Table 2 findings, ``value`` the components to improve and
    ``reasoning`` one line per metric. Other options are :class:`~langrag_eval.thelma.Thelma`'s
    (``embedder`` may be LangChain ``Embeddings``)."""

    def __init__(self, judge: JudgeLike, *, metric: str | None = None, metrics: Sequence[str] | None = None,
                 embedder: Any = None, **options: Any) -> None:
        self.metric = metric
        super().__init__(_thelma(judge, select_metrics(metric, metrics), embedder, options),
                         name=f"thelma_{metric}" if metric else "thelma", score=metric)

    @property
    def thelma(self) -> Thelma:
        return self.evaluator  # type: ignore[return-value]

    def as_dict(self, result: ThelmaResult) -> dict[str, Any]:  # type: ignore[override]
        if self.metric:
            return {"score": result.score(self.metric), "value": None, "reasoning": result.comment(self.metric)}
        return {"score": result.mean(), "value": ", ".join(result.components_to_improve()) or None,
                "reasoning": result.feedback(), "metrics": result.score_values(),
                "diagnosis": [f.model_dump() for f in result.diagnosis]}


def vrag_langsmith_evaluator(judge: JudgeLike, *, question_key: str | None = None, answer_key: str | None = None,
                             label_key: str | None = None, key: str = "vrag", asynchronous: bool = False,
                             **grader_options: Any) -> Callable[..., Any]:
    """vRAG-Eval for ``langsmith.evaluate`` / ``aevaluate`` (see :func:`langsmith_evaluator` for
    how inputs, outputs and reference outputs are read): ``key`` with the score on 0..1, ``value``
    accept / reject and the reason as comment, and ``{key}_raw_score`` with the 1-5 grade."""
    def results(grade: VragGrade | Unscored) -> list[dict]:
        r = _vrag_dict(grade, "0-1")
        main = {"key": key, "score": r["score"], "value": r["value"], "comment": r["reasoning"]}
        if r.get("confidence") is not None or r.get("unscored"):
            main["metadata"] = {k: r[k] for k in ("confidence", "unscored") if r.get(k) is not None}
        return [main, {"key": f"{key}_raw_score", "score": r["grade"], "comment": r["reasoning"]}]

    grader = VragGrader(as_judge(judge), **grader_options)
    vrag = langsmith_evaluator(grader, name=key, question_key=question_key, answer_key=answer_key,
                               label_key=label_key, asynchronous=asynchronous, results=results,
                               keys=(key, f"{key}_raw_score"))
    vrag.grader = grader  # type: ignore[attr-defined]
    return vrag


def thelma_langsmith_evaluator(judge: JudgeLike, *, metrics: Sequence[str] = METRICS,
                               question_key: str | None = None, answer_key: str | None = None,
                               contexts_key: str | None = None, key_prefix: str = "thelma_", embedder: Any = None,
                               asynchronous: bool = False, **options: Any) -> Callable[..., Any]:
    """THELMA for ``langsmith.evaluate`` / ``aevaluate``: one result per metric (key
    ``thelma_<metric>``; score None and the reason as comment when unscored) and ``thelma_diagnosis``
    naming the components to improve ("none" when no Table 2 pattern fired; value None, the cause
    in ``metadata["unscored"]`` and the reasons as comment when no metric was scored)."""
    thelma = _thelma(judge, metrics, embedder, options)

    def results(result: ThelmaResult) -> list[dict]:
        out = [{"key": f"{key_prefix}{m}", "score": result.score(m), "comment": result.comment(m)}
               for m in result.metrics]
        missing = result.undiagnosed()
        out.append({"key": f"{key_prefix}diagnosis", "comment": result.diagnosis_text(),
                    **({"value": None, "metadata": {"unscored": missing.cause}} if missing else
                       {"value": ", ".join(result.components_to_improve()) or "none"})})
        return out

    function = langsmith_evaluator(thelma, name="thelma_eval", key_prefix=key_prefix, question_key=question_key,
                                   answer_key=answer_key, contexts_key=contexts_key, asynchronous=asynchronous,
                                   results=results)
    function.thelma = thelma  # type: ignore[attr-defined]
    return function


def _game_dict(game: GameRecord | Unscored) -> dict[str, Any]:
    if isinstance(game, Unscored):
        return {"score": None, "value": None, "reasoning": game.reason, "unscored": game.cause}
    return {"score": game.score_a, "value": {"a": "A", "b": "B", "tie": None}[game.outcome],
            "reasoning": f"A shown first:\n{game.raw_forward}\n\nB shown first:\n{game.raw_backward}",
            "verdicts": [game.forward, game.backward], "consistent": game.consistent,
            "documents": game.documents, "dropped_documents": game.dropped}


def _pairwise(judge: JudgeLike | PairwiseEvaluator, options: dict[str, Any]) -> PairwiseEvaluator:
    return judge if isinstance(judge, PairwiseEvaluator) else PairwiseEvaluator(as_judge(judge), **options)


class RAGEloPairwiseEvaluator(PairwiseStringEvaluator):
    """RAGElo's pairwise judge (needs input), from a judge and :class:`~langrag_eval.tournament.PairwiseEvaluator`
    options (``threshold``, ``factors`` ...) or such an evaluator. ``contexts=`` are ``prediction``'s
    documents and ``contexts_b=`` ``prediction_b``'s; without any the judge compares the answers alone.
    ``score`` is 1 when A (``prediction``) wins, 0 when B wins, 0.5 for a tie (a verdict that
    flips with the order is a tie), None when the game could not be judged."""

    def __init__(self, judge: JudgeLike | PairwiseEvaluator, **options: Any) -> None:
        self.pairwise = _pairwise(judge, options)

    @property
    def requires_input(self) -> bool:
        return True

    @property
    def evaluation_name(self) -> str:
        return "ragelo_pairwise"

    async def _aevaluate_string_pairs(self, *, prediction: str, prediction_b: str, reference: str | None = None,
                                      input: str | None = None, contexts: Any = None, contexts_b: Any = None,
                                      **kwargs: Any) -> dict:
        game = GameSample.pooled(input or "", prediction, prediction_b, as_documents(contexts, field="contexts"),
                                 as_documents(contexts_b, field="contexts_b"))
        with traced(self.evaluation_name, {"input": input, "prediction": prediction, "prediction_b": prediction_b},
                    kwargs.get("callbacks")) as run:
            run.outputs = _game_dict(await self.pairwise.aevaluate(game))
        return run.outputs

    _evaluate_string_pairs = synchronous(_aevaluate_string_pairs)


def ragelo_langsmith_evaluator(judge: JudgeLike | PairwiseEvaluator, *, key: str = "ragelo_preference",
                               question_key: str | None = None, answer_key: str | None = None,
                               context_key: str | None = None, **options: Any) -> Callable[..., dict]:
    """A comparative evaluator for ``langsmith.evaluation.evaluate_comparative``: ``(runs, example)``
    with two runs -> ``{"key", "scores": {run id: 1 / 0 / 0.5}, "comment"}``. The question is read
    from ``example.inputs`` (``question_key``, else question / query / input / the only value); each
    run's answer and contexts from its outputs (``answer_key`` / ``context_key``, else the usual names)."""
    pairwise = _pairwise(judge, options)

    def ragelo_preference(runs: Sequence[Any], example: Any) -> dict[str, Any]:
        if len(runs) != 2:
            raise ArgumentError(f"a RAGElo game compares exactly two runs, got {len(runs)}")
        inputs = getattr(example, "inputs", None) or getattr(runs[0], "inputs", None) or {}
        question = pick(inputs, question_key, QUESTION_KEYS, sole=False)
        if question is None and isinstance(inputs, Mapping) and len(inputs) == 1:
            question = next(iter(inputs.values()))  # a one-key inputs dict, whatever question_key names
        outs = [r.outputs or {} for r in runs]
        answers = [as_text(pick(o, answer_key, ANSWER_KEYS, sole=False), strict=False) for o in outs]
        if any(a is None for a in answers):
            return {"key": key, "scores": {r.id: None for r in runs},
                    "comment": f"a run has no answer in its outputs (looked for {answer_key or ', '.join(ANSWER_KEYS)})"}
        docs = [pick(o, context_key, CONTEXT_KEYS, sole=False) for o in outs]
        out = _game_dict(pairwise.evaluate(GameSample.pooled(str(question or ""), answers[0], answers[1], *docs)))
        scores = {runs[0].id: out["score"], runs[1].id: 1.0 - out["score"]} if out["score"] is not None else \
            {r.id: None for r in runs}
        return {"key": key, "scores": scores, "comment": out["reasoning"]}

    ragelo_preference.__name__ = key
    return ragelo_preference
