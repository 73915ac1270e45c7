"""Any evaluator's result as a framework reports it, read through its typed scores
(:meth:`~langrag_eval.evaluator.Evaluator.scores`), free of any framework: one :class:`AdapterReport`
of one call (LlamaIndex's ``EvaluationResult``, :func:`aevaluate_call`), the LangChain string
result (:func:`string_dict`) and the LangSmith evaluator function (:func:`langsmith_evaluator`,
row by row or, for a pairwise evaluator, comparative); and an agent's run as a framework's response.
An adapter adds only its result type, prompt hooks and tracing. An answer that names its sources
(a LlamaIndex ``Response``) gives its contexts when none are passed; a result that says its own
``feedback()`` (THELMA's metrics and diagnosis, a game's two verdicts) gives the feedback when no
single score is chosen.

>>> import asyncio
>>> from langrag_eval.grading import VragGrader
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> grader = VragGrader(Judge(ScriptedModel(["Score: [[4]], Reason: [[Close.]]"])))
>>> o = asyncio.run(aevaluate_call(grader, "Capital?", "Paris", reference="Paris", score="grade"))
>>> o.score, o.passing, o.feedback, o.scores
(4.0, True, 'Close.', {'accept_rate': 1.0, 'grade': 4.0})
>>> asyncio.run(aevaluate_call(grader, "Capital?", None, score="grade")).invalid_reason
'invalid_input: cannot grade: answer and label empty or missing'
>>> from langrag_eval.results import ScoreScale
>>> string_result([ScoreScale(1, 5).score("grade", 4, passed=True, reason="Right.")])
{'score': 0.75, 'value': 'pass', 'reasoning': 'Right.', 'scores': {'grade': 4.0}}
>>> r = string_dict(grader, o.result)
>>> r["score"], r["grade"], r["normalised"], r["value"], r["reasoning"]
(0.75, 4.0, 0.75, 'accept', 'Close.')
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .adapting import (
    ANSWER_KEYS, CONTEXT_KEYS, LABEL_KEYS, QUESTION_KEYS, pick, read_answer, read_question, sample_of,
)
from ..types import as_documents, as_text
from ..errors import ArgumentError, ConfigError
from ..evaluator import Evaluator
from ..results import Score, Unscored
from ..runtime import synchronous
from ..tournament import GameRecord, GameSample, PairwiseEvaluator
from ..types import Sample

__all__ = ["AdapterReport", "aevaluate_call", "check_score", "comparative_evaluator",
           "failure_result", "game_dict", "langsmith_evaluator", "langsmith_function", "langsmith_results",
           "needs_reference", "outcome", "primary_score", "score_comment", "string_dict", "string_result",
           "unit_value"]


@dataclass(frozen=True)
class AdapterReport:
    """One evaluation as an adapter reports it. ``score``: the chosen score, else the mean of those
    scored (each on its own scale, or on 0..1 with ``normalise``); ``passing``: every chosen score
    with a pass call passes (None when none has one); ``invalid_reason``: ``cause: reason`` when
    nothing chosen was scored (then ``score`` is None, never a silent 0); ``scores``: every score by
    name; ``result``: the evaluator's own result; ``question``, ``answer``, ``contexts``: what was judged."""

    question: str | None
    answer: str | None
    contexts: list[str] | None
    result: Any
    scores: dict[str, float | None]
    score: float | None = None
    passing: bool | None = None
    feedback: str | None = None
    invalid_reason: str | None = None


def check_score(evaluator: Evaluator, score: str | None) -> str | None:
    """``score`` when ``evaluator`` gives a score by that name (or None), else a :class:`ConfigError`."""
    if score is not None and score not in evaluator.score_names():
        raise ConfigError(f"{type(evaluator).__name__} gives no score {score!r}; its scores: "
                          f"{', '.join(evaluator.score_names()) or '(none declared)'}")
    return score


def outcome(evaluator: Evaluator, result: Any, *, score: str | None = None, normalise: bool = False,
            question: str | None = None, answer: str | None = None,
            contexts: list[str] | None = None) -> AdapterReport:
    """``result`` (or ``Unscored``) of ``evaluator`` read as an :class:`AdapterReport`."""
    scores = evaluator.scores(result)
    chosen = [s for s in scores if s.name == score] if score else scores
    scored = [s for s in chosen if s.scored]
    own = getattr(result, "feedback", None) if score is None else None
    feedback = own() if callable(own) else "\n".join(dict.fromkeys(s.reason for s in chosen if s.reason)) or None
    fields = dict(question=question, answer=answer, contexts=contexts, result=result,
                  scores={s.name: s.value for s in scores})
    if not scored:
        missing = result if isinstance(result, Unscored) else next((s for s in chosen if s.cause), None)
        why = f"{missing.cause}: {missing.reason}" if missing is not None else "undefined: no score"
        return AdapterReport(**fields, invalid_reason=feedback if callable(own) else why)  # type: ignore[arg-type]
    passed = [s.passed for s in chosen if s.passed is not None]
    values = [unit_value(s) if normalise else s.value for s in scored]
    return AdapterReport(**fields, score=sum(values) / len(values),  # type: ignore[arg-type]
                   passing=all(passed) if passed else None, feedback=feedback)


async def aevaluate_call(evaluator: Evaluator, question: str | None, answer: Any, contexts: Any = None,
                         reference: str | None = None, *, second_answer: Any = None, second_contexts: Any = None,
                         score: str | None = None, normalise: bool = False) -> AdapterReport:
    """Evaluate one call: a :class:`~langrag_eval.types.Sample` for most evaluators, a game between
    ``answer`` and ``second_answer`` (both sides' contexts pooled) for a pairwise one. Contexts
    arrive as texts, documents, framework documents or nodes (ids and metadata kept)."""
    if contexts is None and hasattr(answer, "source_nodes"):
        contexts = answer
    text, docs = as_text(answer, field="response"), as_documents(contexts)
    sample: Any
    if isinstance(evaluator, PairwiseEvaluator):
        if second_contexts is None and hasattr(second_answer, "source_nodes"):
            second_contexts = second_answer
        second, more = as_text(second_answer, field="second_response"), as_documents(second_contexts,
                                                                                     field="second_contexts")
        sample = GameSample.pooled(question, text, second, docs, more) if None not in (question, text, second) \
            else Unscored(reason="a question and two answers are needed", cause="invalid_input")
        docs = [*docs, *more]
    else:
        sample = Sample(question=question or "", answer=text, reference=reference, contexts=docs)
    result = sample if isinstance(sample, Unscored) else await evaluator.aevaluate(sample)
    texts = None if contexts is None and second_contexts is None else [d.text for d in docs]
    return outcome(evaluator, result, score=score, normalise=normalise, question=question, answer=text,
                   contexts=texts)


def unit_value(score: Score) -> float:
    """A scored value on 0..1, 1 the best whichever way its scale runs."""
    share = (score.value - score.low) / (score.high - score.low)  # type: ignore[operator]
    return share if score.higher_is_better else 1.0 - share


def score_comment(score: Score) -> str | None:
    """What a score's reason says, with its cause first when it is missing (``cause: reason``)."""
    return score.reason if score.cause is None else f"{score.cause}: {score.reason}"


def string_result(scores: Sequence[Score], primary: str | None = None) -> dict[str, Any]:
    """Scores as a LangChain evaluator result: ``score`` the ``primary`` score (else the mean of
    every scored one) on 0..1, LangChain's and LangSmith's convention; ``value`` pass / fail when
    the scores say; ``reasoning`` their reasons; ``scores`` every value on its own scale; with
    nothing scored, ``score`` None and the cause as ``unscored``."""
    chosen = [s for s in scores if s.name == primary] if primary else list(scores)
    scored = [s for s in chosen if s.scored]
    passed = [s.passed for s in chosen if s.passed is not None]
    reasons = list(dict.fromkeys(score_comment(s) for s in chosen if s.reason))
    out: dict[str, Any] = {"score": sum(map(unit_value, scored)) / len(scored) if scored else None,
                           "value": ("pass" if all(passed) else "fail") if passed else None,
                           "reasoning": "\n".join(reasons) or None, "scores": {s.name: s.value for s in scores}}
    if not scored:
        out["unscored"] = next((s.cause for s in chosen if s.cause), "undefined")
    return out


def langsmith_results(scores: Sequence[Score], prefix: str = "") -> list[dict[str, Any]]:
    """One LangSmith result per score, keyed ``prefix + name``: the value on its own scale, the
    reason as comment (:func:`score_comment`), the cause in ``metadata["unscored"]`` when it is missing."""
    return [{"key": f"{prefix}{s.name}", "score": s.value, "comment": score_comment(s),
             **({"metadata": {"unscored": s.cause}} if s.cause else {})} for s in scores]


def failure_result(key: str, exc: BaseException) -> dict:
    """One LangSmith result for an evaluation that failed: no score, the error as comment."""
    return {"key": key, "score": None, "comment": f"{type(exc).__name__}: {exc}",
            "metadata": {"unscored": "error"}}


def langsmith_function(score: Callable[..., Awaitable[dict]], *, asynchronous: bool, name: str,
                       keys: Sequence[str]) -> Callable[..., dict | Awaitable[dict]]:
    """``score`` as a LangSmith evaluator function named ``name``: async with ``asynchronous``, else
    a sync function that runs it to completion. LangSmith reads which arguments to pass (``inputs``,
    ``outputs``, ``reference_outputs`` ...) from the signature, so the wrapper reports ``score``'s.

    It never raises: LangSmith files an evaluator's exception under a key it guesses from the source
    code (here the inner function's name), so a failure comes back as score None under each of
    ``keys``, the result keys ``score`` reports, with the error as comment."""
    def failed(exc: Exception) -> dict:
        return {"results": [failure_result(k, exc) for k in keys]}

    if asynchronous:
        async def evaluator(*args: Any, **kwargs: Any) -> dict:
            try:
                return await score(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - failures are results, under their own key
                return failed(exc)
    else:
        run = synchronous(score)

        def evaluator(*args: Any, **kwargs: Any) -> dict:  # type: ignore[misc]
            try:
                return run(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - failures are results, under their own key
                return failed(exc)
    functools.update_wrapper(evaluator, score)
    evaluator.__name__ = name
    return evaluator


def _row_evaluator(evaluator: Evaluator, *, results: Callable[[Any], list[dict]], keys: Sequence[str],
                   name: str | None = None, question_key: str | None = None, answer_key: str | None = None,
                   contexts_key: str | None = None, label_key: str | None = None,
                   asynchronous: bool = False) -> Callable[..., Any]:
    """``evaluator`` as a function for ``langsmith.evaluate`` / ``aevaluate``:
    ``(inputs, outputs, reference_outputs)`` -> ``{"results": results(its result)}``, a failure
    reported under each of ``keys``. The question is read from ``inputs`` (:func:`read_question`),
    the answer from ``outputs`` (:func:`read_answer`), the contexts from ``outputs[contexts_key]``
    (default context, contexts, documents ...; never the only value) and the label from
    ``reference_outputs[label_key]`` (default label, answer, reference, output or the only value)."""
    async def score(inputs: dict, outputs: dict, reference_outputs: dict | None = None) -> dict:
        contexts = pick(outputs, contexts_key, CONTEXT_KEYS, sole=False) if isinstance(outputs, Mapping) else None
        label = as_text(pick(reference_outputs, label_key, LABEL_KEYS), strict=False) \
            if reference_outputs is not None else None
        result = await evaluator.aevaluate(sample_of(read_question(inputs, question_key),
                                                     read_answer(outputs, answer_key), contexts, label))
        return {"results": results(result)}

    function = langsmith_function(score, asynchronous=asynchronous, name=name or evaluator.task.replace("/", "_"),
                                  keys=keys)
    function.evaluator = evaluator  # type: ignore[attr-defined]
    return function


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
    must then be given: what its declaration says (``needs_reference``)."""
    return bool(getattr(_declared(evaluator), "needs_reference", False))


def primary_score(evaluator: Evaluator) -> str | None:
    """The score a framework reports for ``evaluator`` by default, with its pass call as accept /
    reject (vRAG-Eval's 1-5 grade): its declaration's ``primary``; None when every score counts alike."""
    return getattr(_declared(evaluator), "primary", None)


def _declared(evaluator: Any) -> Any:
    # an evaluator-like object written without the contract declares nothing
    declare = getattr(evaluator, "declare", None)
    return declare() if callable(declare) else None


def _graded(s: Score, confidence: Any) -> dict[str, Any]:
    """The keys a graded primary score adds: its value (``grade`` / ``raw_score``), on 0..1, accept / reject."""
    out = {"grade": s.value, "normalised": None if s.value is None else unit_value(s), "raw_score": s.value}
    if s.scored:
        out.update(reasoning=s.reason, value="accept" if s.passed else "reject")
    return {**out, **({"confidence": confidence} if confidence is not None else {})}


def string_dict(evaluator: Evaluator, result: Any, score: str | None = None) -> dict[str, Any]:
    """``result`` as a LangChain string result: :func:`string_result` of its
    scores (``score`` names the one reported as ``score``, default :func:`primary_score`), with the
    primary score's grade keys, or, when every score counts, what the result says of itself (its
    ``feedback()``, a THELMA diagnosis); a game as :func:`game_dict`."""
    if isinstance(result, GameRecord) or (isinstance(evaluator, PairwiseEvaluator) and isinstance(result, Unscored)):
        return game_dict(result)
    primary = score or primary_score(evaluator)
    scores = evaluator.scores(result)
    out = string_result(scores, primary)
    if (graded := primary_score(evaluator)) is not None:
        out.update(_graded(next(s for s in scores if s.name == graded), getattr(result, "confidence", None)))
    elif primary is None and callable(getattr(result, "feedback", None)):
        out.update(reasoning=result.feedback(), metrics={s.name: s.value for s in scores})
        if hasattr(result, "components_to_improve"):
            out.update(value=", ".join(result.components_to_improve()) or None,
                       diagnosis=[f.model_dump() for f in result.diagnosis])
    return out


def _langsmith_results(evaluator: Evaluator, key: str | None) -> tuple[dict[str, Any], Callable[[Any], list]]:
    """How an evaluator's result reads in LangSmith: its primary score under ``key`` (default the
    evaluator's task) on 0..1 with accept / reject and under ``{key}_raw_score`` on its own scale;
    else one result per score keyed ``key`` (default the task's family and ``_``, "" for none) +
    name, and a result's diagnosis under ``{key}diagnosis``."""
    primary = primary_score(evaluator)
    if primary is not None:
        key = key or evaluator.task
        keys = (key, f"{key}_raw_score")

        def graded(result: Any) -> list[dict]:
            s = next(s for s in evaluator.scores(result) if s.name == primary)
            main = {"key": key, "score": None if s.value is None else unit_value(s), "comment": score_comment(s),
                    "value": None if s.value is None else "accept" if s.passed else "reject"}
            meta = {"unscored": s.cause} if s.cause else {"confidence": getattr(result, "confidence", None)}
            return [{**main, **({"metadata": meta} if any(v is not None for v in meta.values()) else {})},
                    {"key": keys[1], "score": s.value, "comment": score_comment(s)}]
        return {"name": key, "keys": keys}, graded
    task = evaluator.task_name()
    family = task.split(":")[0] if ":" in task else ""  # THELMA's "thelma:<mode>"
    prefix = key or (f"{family}_" if family else "")

    def per_score(result: Any) -> list[dict]:
        out = langsmith_results(evaluator.scores(result), prefix)
        if hasattr(result, "diagnosis_text"):
            missing = result.undiagnosed()
            out.append({"key": f"{prefix}diagnosis", "comment": result.diagnosis_text(),
                        **({"value": None, "metadata": {"unscored": missing.cause}} if missing else
                           {"value": ", ".join(result.components_to_improve()) or "none"})})
        return out
    keys = [f"{prefix}{n}" for n in evaluator.score_names()]
    return {"keys": keys, **({"name": f"{family}_eval"} if family else {})}, per_score


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


def langsmith_evaluator(evaluator: Evaluator, *, key: str | None = None, **options: Any) -> Callable[..., Any]:
    """Any evaluator as a LangSmith evaluator function. A pairwise one (of two answers to one
    question) becomes a comparative evaluator (:func:`comparative_evaluator`, ``key`` default
    ``ragelo_preference``); any other an ``evaluate`` / ``aevaluate`` function ``(inputs, outputs,
    reference_outputs)`` -> ``{"results": [...]}`` reading its scores (options ``question_key``,
    ``answer_key``, ``contexts_key``, ``label_key``, ``name``, ``asynchronous``): one with a
    :func:`primary_score` gives ``key`` (default its task, ``vrag``) with the score on 0..1, accept /
    reject and the reason, and ``{key}_raw_score`` with the score on its own scale; any other one
    result per score (:func:`langsmith_results`), keyed ``key`` (or ``key_prefix``) + the score's
    name (THELMA: default ``thelma_`` + metric), and ``thelma_diagnosis`` naming the components to
    improve ("none" when no Table 2 pattern fired). It never raises: a failed evaluation is score
    None under each key (:func:`langsmith_function`). The evaluator is the function's ``evaluator``
    attribute."""
    if isinstance(evaluator, PairwiseEvaluator):
        return comparative_evaluator(evaluator, **({"key": key} if key else {}), **options)
    shape, results = _langsmith_results(evaluator, key or options.pop("key_prefix", None))
    return _row_evaluator(evaluator, results=results, **{**shape, **options})  # the caller's options win
