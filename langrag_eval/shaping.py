"""Any evaluator's result as the plain dicts a framework adapter reports, with each capability's
own keys: the LangChain string result (:func:`string_dict`), the LangSmith evaluator function
(:func:`evaluator_for_langsmith`, row by row or, for a pairwise evaluator, comparative).

Framework-free: the adapters wrap these dicts in their evaluator classes. A result reads the
generic way (:func:`~langrag_eval.adapting.string_result`, :func:`~langrag_eval.adapting.langsmith_results`)
plus what its capability adds: vRAG-Eval's ``grade``, ``normalised`` and accept / reject, THELMA's
``metrics``, ``diagnosis`` and components to improve, a RAGElo game's verdicts in both orders.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.grading import VragGrader
>>> from langrag_eval.types import Sample
>>> grader = VragGrader(Judge(ScriptedModel(["Score: [[4]], Reason: [[Right.]]"])))
>>> r = string_dict(grader, grader.evaluate(Sample(question="Capital?", answer="Paris", reference="Paris")))
>>> r["score"], r["grade"], r["normalised"], r["value"], r["reasoning"]
(0.75, 4, 0.75, 'accept', 'Right.')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .adapting import ANSWER_KEYS, CONTEXT_KEYS, QUESTION_KEYS, langsmith_evaluator, pick, string_result
from .contexts import as_text
from .errors import ArgumentError
from .evaluator import Evaluator
from .grading import VragGrade, VragGrader
from .results import Unscored
from .thelma import Thelma, ThelmaResult
from .tournament import GameRecord, GameSample, PairwiseEvaluator

__all__ = ["comparative_evaluator", "evaluator_for_langsmith", "game_dict", "needs_reference", "string_dict"]


def game_dict(game: GameRecord | Unscored) -> dict[str, Any]:
    """A RAGElo game: ``score`` 1 when A wins, 0 when B wins, 0.5 for a tie, None when unjudged."""
    if isinstance(game, Unscored):
        return {"score": None, "value": None, "reasoning": game.reason, "unscored": game.cause}
    return {"score": game.score_a, "value": {"a": "A", "b": "B", "tie": None}[game.outcome],
            "reasoning": f"A shown first:\n{game.raw_forward}\n\nB shown first:\n{game.raw_backward}",
            "verdicts": [game.forward, game.backward], "consistent": game.consistent,
            "documents": game.documents, "dropped_documents": game.dropped}


def needs_reference(evaluator: Evaluator) -> bool:
    """Whether ``evaluator`` grades against a reference answer (a label), which a string evaluator
    must then be given."""
    return isinstance(evaluator, VragGrader)


def string_dict(evaluator: Evaluator, result: Any, score: str | None = None) -> dict[str, Any]:
    """``result`` as a LangChain string result: :func:`~langrag_eval.adapting.string_result` of its
    scores (``score`` names the one reported as ``score``; vRAG-Eval's default is its grade) and the
    capability's own keys."""
    if isinstance(result, GameRecord) or (isinstance(evaluator, PairwiseEvaluator) and isinstance(result, Unscored)):
        return game_dict(result)
    primary = score or ("grade" if isinstance(evaluator, VragGrader) else None)
    out = string_result(evaluator.scores(result), primary)
    if isinstance(result, VragGrade):
        out.update(grade=result.score, normalised=result.normalised, raw_score=result.score, reasoning=result.reason,
                   value="accept" if result.accepted else "reject")
        if result.confidence is not None:
            out["confidence"] = result.confidence
    elif isinstance(evaluator, VragGrader):  # unscored: the grade keys are there, empty
        out.update(grade=None, normalised=None, raw_score=None)
    elif isinstance(result, ThelmaResult) and score:
        out.update(value=None, reasoning=result.comment(score))
    elif isinstance(result, ThelmaResult):
        out.update(score=result.mean(), value=", ".join(result.components_to_improve()) or None,
                   reasoning=result.feedback(), metrics=result.score_values(),
                   diagnosis=[f.model_dump() for f in result.diagnosis])
    return out


def _vrag_results(key: str) -> Callable[[Any], list[dict]]:
    def results(grade: VragGrade | Unscored) -> list[dict]:
        if isinstance(grade, Unscored):
            return [{"key": key, "score": None, "value": None, "comment": grade.reason,
                     "metadata": {"unscored": grade.cause}},
                    {"key": f"{key}_raw_score", "score": None, "comment": grade.reason}]
        main = {"key": key, "score": grade.normalised, "value": "accept" if grade.accepted else "reject",
                "comment": grade.reason}
        if grade.confidence is not None:
            main["metadata"] = {"confidence": grade.confidence}
        return [main, {"key": f"{key}_raw_score", "score": grade.score, "comment": grade.reason}]
    return results


def _thelma_results(prefix: str) -> Callable[[ThelmaResult], list[dict]]:
    def results(result: ThelmaResult) -> list[dict]:
        out = [{"key": f"{prefix}{m}", "score": result.score(m), "comment": result.comment(m)} for m in result.metrics]
        missing = result.undiagnosed()
        out.append({"key": f"{prefix}diagnosis", "comment": result.diagnosis_text(),
                    **({"value": None, "metadata": {"unscored": missing.cause}} if missing else
                       {"value": ", ".join(result.components_to_improve()) or "none"})})
        return out
    return results


def comparative_evaluator(pairwise: Evaluator, *, key: str = "ragelo_preference", question_key: str | None = None,
                          answer_key: str | None = None, context_key: str | None = None) -> Callable[..., dict]:
    """A pairwise evaluator for ``langsmith.evaluation.evaluate_comparative``: ``(runs, example)``
    with two runs -> ``{"key", "scores": {run id: 1 / 0 / 0.5}, "comment"}``. The question is read
    from ``example.inputs`` (``question_key``, else question / query / input / the only value); each
    run's answer and contexts from its outputs (``answer_key`` / ``context_key``, else the usual names)."""
    def preference(runs: Sequence[Any], example: Any) -> dict[str, Any]:
        if len(runs) != 2:
            raise ArgumentError(f"a RAGElo game compares exactly two runs, got {len(runs)}")
        inputs = getattr(example, "inputs", None) or getattr(runs[0], "inputs", None) or {}
        question = pick(inputs, question_key, QUESTION_KEYS, sole=False)
        if question is None and isinstance(inputs, Mapping) and len(inputs) == 1:
            question = next(iter(inputs.values()))  # a one-key inputs dict, whatever question_key names
        outs = [r.outputs or {} for r in runs]
        answers = [as_text(pick(o, answer_key, ANSWER_KEYS, sole=False), strict=False) for o in outs]
        if any(a is None for a in answers):
            looked = answer_key or ", ".join(ANSWER_KEYS)
            return {"key": key, "scores": {r.id: None for r in runs},
                    "comment": f"a run has no answer in its outputs (looked for {looked})"}
        docs = [pick(o, context_key, CONTEXT_KEYS, sole=False) for o in outs]
        out = game_dict(pairwise.evaluate(GameSample.pooled(str(question or ""), answers[0], answers[1], *docs)))
        scores = {runs[0].id: out["score"], runs[1].id: 1.0 - out["score"]} if out["score"] is not None else \
            {r.id: None for r in runs}
        return {"key": key, "scores": scores, "comment": out["reasoning"]}

    preference.__name__ = key
    preference.evaluator = pairwise  # type: ignore[attr-defined]
    return preference


def evaluator_for_langsmith(evaluator: Evaluator, *, key: str | None = None, **options: Any) -> Callable[..., Any]:
    """Any evaluator as a LangSmith evaluator function. A pairwise one (of two answers to one
    question) becomes a comparative evaluator (:func:`comparative_evaluator`, ``key`` default
    ``ragelo_preference``); any other an ``evaluate`` / ``aevaluate`` function
    (:func:`~langrag_eval.adapting.langsmith_evaluator`, whose options it takes: ``question_key``,
    ``answer_key``, ``contexts_key``, ``label_key``, ``asynchronous``), one result per score, keyed
    ``key`` + the score's name, except: vRAG-Eval gives ``key`` (default ``vrag``) with the score on
    0..1, accept / reject and the reason, and ``{key}_raw_score`` with the 1-5 grade; THELMA one
    result per metric (``key`` default ``thelma_`` + metric) and ``thelma_diagnosis`` naming the
    components to improve ("none" when no Table 2 pattern fired)."""
    if isinstance(evaluator, PairwiseEvaluator):
        return comparative_evaluator(evaluator, **({"key": key} if key else {}), **options)
    if isinstance(evaluator, VragGrader):
        key = key or "vrag"
        shape: dict[str, Any] = {"name": key, "results": _vrag_results(key), "keys": (key, f"{key}_raw_score")}
    elif isinstance(evaluator, Thelma):
        shape = {"name": "thelma_eval", "key_prefix": key or "thelma_", "results": _thelma_results(key or "thelma_")}
    else:
        shape = {"key_prefix": key or ""}
    return langsmith_evaluator(evaluator, **{**shape, **options})  # the caller's options win
