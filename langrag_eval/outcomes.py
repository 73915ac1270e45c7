"""Any evaluator called the way a framework calls one: a question, an answer, contexts and a
reference in (a game's second answer and contexts too), one :class:`Outcome` out. Framework-free:
an adapter adds only its result type, prompt hooks and tracing. An answer that names its sources
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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .contexts import as_documents, as_text
from .errors import ConfigError
from .evaluator import Evaluator
from .results import Score, Unscored
from .tournament import GameSample, PairwiseEvaluator
from .types import AgentAnswer, Document, Sample

__all__ = ["Outcome", "agent_response", "aevaluate_call", "check_score", "outcome"]


@dataclass(frozen=True)
class Outcome:
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


def _unit(s: Score) -> float:
    share = (s.value - s.low) / (s.high - s.low)  # type: ignore[operator]
    return share if s.higher_is_better else 1.0 - share


def outcome(evaluator: Evaluator, result: Any, *, score: str | None = None, normalise: bool = False,
            question: str | None = None, answer: str | None = None,
            contexts: list[str] | None = None) -> Outcome:
    """``result`` (or ``Unscored``) of ``evaluator`` read as an :class:`Outcome`."""
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
        return Outcome(**fields, invalid_reason=feedback if callable(own) else why)  # type: ignore[arg-type]
    passed = [s.passed for s in chosen if s.passed is not None]
    values = [_unit(s) if normalise else s.value for s in scored]
    return Outcome(**fields, score=sum(values) / len(values),  # type: ignore[arg-type]
                   passing=all(passed) if passed else None, feedback=feedback)


async def aevaluate_call(evaluator: Evaluator, question: str | None, answer: Any, contexts: Any = None,
                         reference: str | None = None, *, second_answer: Any = None, second_contexts: Any = None,
                         score: str | None = None, normalise: bool = False) -> Outcome:
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


def agent_response(agent: str, query: str, result: AgentAnswer | Unscored
                   ) -> tuple[str | None, Sequence[Document], dict[str, Any]]:
    """What an agent's run gives a framework's response: the answer (None when it could not be
    produced), the passages it was generated from, and metadata (the agent, the query, a Fusion
    agent's variations, or the ``error``)."""
    meta: dict[str, Any] = {"agent": agent, "query": query}
    if isinstance(result, Unscored):
        return None, [], {**meta, "error": f"{result.cause}: {result.reason}"}
    return result.answer, result.contexts, {**meta, "variations": list(result.variations)}
