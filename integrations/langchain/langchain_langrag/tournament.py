"""RAGElo tournaments for LangChain: a pairwise string evaluator, a LangSmith comparative evaluator
(:func:`ragelo_langsmith_evaluator`, named like the vRAG-Eval and THELMA ones), and one call that
runs a tournament over several runnables.

Every comparison judges the contexts of both predictions for the input (0-2 with a reason), shows
the judge those at or above ``threshold`` with their assessments, and plays the two answers in both
orders; a verdict that flips with the order is a tie (score 0.5). Scores follow LangChain's pairwise
convention: 1 when A (``prediction``) wins, 0 when B wins, 0.5 for a tie; ``score`` None when the
game could not be judged, with the reason.

>>> from langchain_core.language_models import FakeListChatModel
>>> ev = RAGEloPairwiseEvaluator(FakeListChatModel(responses=["The first is better.\\n[[A]]"]))
>>> r = ev.evaluate_string_pairs(prediction="Paris", prediction_b="Lyon", input="Capital of France?")
>>> r["score"], r["value"], r["verdicts"]     # [[A]] in both orders: position bias, a tie
(0.5, None, ['A', 'A'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_classic.evaluation import PairwiseStringEvaluator
from langchain_core.runnables import Runnable

from langrag_eval.contexts import as_documents, as_text
from langrag_eval.deprecation import renamed
from langrag_eval.results import Unscored
from langrag_eval.runtime import RunStore, synchronous
from langrag_eval.tournament import (
    DEFAULT_FACTORS,
    GameRecord,
    GameSample,
    PairwiseEvaluator,
    TournamentConfig,
    TournamentResult,
    atournament_over_apps,
)
from langrag_eval.tournament.apps import afirst_query_checked, as_queries
from langrag_eval.types import Document

from .capture import RAGCapture
from ._common import ANSWER_KEYS, CONTEXT_KEYS, QUESTION_KEYS, JudgeLike, as_judge, pick, traced

__all__ = [
    "RAGEloPairwiseEvaluator",
    "atournament_from_runnables",
    "ragelo_comparative_evaluator",
    "ragelo_langsmith_evaluator",
    "tournament_from_runnables",
    "app_input",
    "session_config",
]


def _result(game: GameRecord | Unscored) -> dict[str, Any]:
    if isinstance(game, Unscored):
        return {"score": None, "value": None, "reasoning": game.reason, "unscored": game.cause}
    return {"score": game.score_a, "value": {"a": "A", "b": "B", "tie": None}[game.outcome],
            "reasoning": f"A shown first:\n{game.raw_forward}\n\nB shown first:\n{game.raw_backward}",
            "verdicts": [game.forward, game.backward], "consistent": game.consistent,
            "documents": game.documents, "dropped_documents": game.dropped}


class RAGEloPairwiseEvaluator(PairwiseStringEvaluator):
    """RAGElo's pairwise judge as a ``langchain_classic`` pairwise string evaluator (needs input).

    Pass the contexts as ``contexts=`` (for ``prediction``) and ``contexts_b=`` (for
    ``prediction_b``): strings, LangChain documents or dicts. Without contexts the judge compares the
    answers alone.
    """

    def __init__(self, judge: JudgeLike, *, threshold: int = 2, factors: str = DEFAULT_FACTORS) -> None:
        self.pairwise = PairwiseEvaluator(as_judge(judge), threshold=threshold, factors=factors)

    @property
    def requires_input(self) -> bool:
        return True

    @property
    def evaluation_name(self) -> str:
        return "ragelo_pairwise"

    async def _aevaluate_string_pairs(self, *, prediction: str, prediction_b: str,
                                      reference: str | None = None, input: str | None = None,
                                      contexts: Sequence[Any] | None = None,
                                      contexts_b: Sequence[Any] | None = None, **kwargs: Any) -> dict:
        with traced(self.evaluation_name, {"input": input, "prediction": prediction,
                                           "prediction_b": prediction_b}, kwargs.get("callbacks")) as run:
            run.outputs = _result(await self.pairwise.aevaluate(GameSample.pooled(
                input or "", prediction, prediction_b, as_documents(contexts, field="contexts"),
                as_documents(contexts_b, field="contexts_b"))))
        return run.outputs

    _evaluate_string_pairs = synchronous(_aevaluate_string_pairs)


def ragelo_langsmith_evaluator(judge: JudgeLike, *, threshold: int = 2, factors: str = DEFAULT_FACTORS,
                               key: str = "ragelo_preference", question_key: str | None = None,
                               answer_key: str | None = None, context_key: str | None = None):
    """A comparative evaluator for ``langsmith.evaluation.evaluate_comparative``: ``(runs, example)``
    with two runs -> ``{"key", "scores": {run id: 1 / 0 / 0.5}, "comment"}``.

    The question is read from ``example.inputs`` (``question_key``, else question / query / input /
    the only value); each run's answer and contexts from its outputs (``answer_key`` /
    ``context_key``, else the usual names: answer, output ... and context, documents ...).
    """
    pairwise = PairwiseEvaluator(as_judge(judge), threshold=threshold, factors=factors)

    def ragelo_preference(runs: Sequence[Any], example: Any) -> dict[str, Any]:
        if len(runs) != 2:
            raise ValueError(f"a RAGElo game compares exactly two runs, got {len(runs)}")
        inputs = getattr(example, "inputs", None) or getattr(runs[0], "inputs", None) or {}
        question = pick(inputs, question_key, QUESTION_KEYS, sole=False)
        # unlike the other evaluators, a one-key inputs dict gives its value even when question_key
        # names another key
        if question is None and isinstance(inputs, Mapping) and len(inputs) == 1:
            question = next(iter(inputs.values()))
        outs = [r.outputs or {} for r in runs]
        answers = [as_text(pick(o, answer_key, ANSWER_KEYS, sole=False), strict=False) for o in outs]
        docs = [pick(o, context_key, CONTEXT_KEYS, sole=False) for o in outs]
        if any(a is None for a in answers):
            return {"key": key, "scores": {r.id: None for r in runs},
                    "comment": "a run has no answer in its outputs (looked for "
                               f"{answer_key or ', '.join(ANSWER_KEYS)})"}
        game = pairwise.evaluate(GameSample.pooled(str(question or ""), answers[0], answers[1], docs[0], docs[1]))
        out = _result(game)
        if out["score"] is None:
            return {"key": key, "scores": {r.id: None for r in runs}, "comment": out["reasoning"]}
        return {"key": key, "scores": {runs[0].id: out["score"], runs[1].id: 1.0 - out["score"]},
                "comment": out["reasoning"]}

    ragelo_preference.__name__ = key
    return ragelo_preference


ragelo_comparative_evaluator = renamed(ragelo_langsmith_evaluator, "ragelo_comparative_evaluator")


def app_input(runnable: Runnable, query: str) -> Any:
    """What ``runnable`` takes for a question, read from its input schema: a ``{"messages": [...]}``
    state for agents and message graphs, ``{"question": q}`` (or query / input) for a graph or
    chain that declares that key, else the question itself."""
    try:
        props = (runnable.get_input_jsonschema() or {}).get("properties") or {}
    except Exception:  # noqa: BLE001 - pydantic cannot build it (a TypedDict state with string
        # annotations, say): a LangGraph graph still names its state keys
        schema = getattr(getattr(runnable, "builder", None), "input_schema", None)
        props = dict(getattr(schema, "__annotations__", None) or {})
    if "messages" in props:
        return {"messages": [{"role": "user", "content": query}]}
    for key in QUESTION_KEYS:
        if key in props:
            return {key: query}
    return query


def session_config(name: str, qid: str) -> dict[str, Any]:
    """The config a tournament gives each call by default: a conversation of its own per variant
    and query (``thread_id`` for a LangGraph checkpointer, ``session_id`` for
    ``RunnableWithMessageHistory``), so no history leaks between queries or variants."""
    session = f"langrag:{name}:{qid}"
    return {"configurable": {"thread_id": session, "session_id": session}}


def _fix(name: str, exc: BaseException) -> str:
    """What to try when a runnable fails on its first question."""
    text = str(exc)
    if "Missing keys" in text or "configurable" in text or "thread_id" in text or "checkpointer" in text:
        return ("pass config=lambda name, qid: {'configurable': {...}} with the keys the runnable needs "
                "(each call gets thread_id and session_id by default)")
    return ("pass input=lambda question: ... to build the runnable's input from the question (by default it "
            "is read from the input schema), or answer_key= / context_key= to read its output")


def _app(name: str, runnable: Runnable, qids: Mapping[str, str], answer_key: str | None,
         context_key: str | None, to_input: Callable[[str], Any] | None,
         config: Callable[[str, str], Mapping[str, Any]] | None):
    async def call(query: str) -> tuple[str | None, list[Document]]:
        capture = RAGCapture()  # reads agents' messages and retriever tools like any other shape
        qid = qids.get(query, query)
        run_config = dict(session_config(name, qid))
        if config is not None:
            own = dict(config(name, qid))
            configurable = {**run_config["configurable"], **(own.get("configurable") or {})}
            run_config = {**own, "configurable": configurable}
        run_config["callbacks"] = [*(run_config.get("callbacks") or []), capture]
        out = await runnable.ainvoke(to_input(query) if to_input else app_input(runnable, query),
                                     config=run_config)
        sample = capture.samples[-1] if capture.samples else None
        if answer_key or context_key:
            picked = pick(out, answer_key, ANSWER_KEYS, sole=False) if isinstance(out, Mapping) else out
            answer = as_text(picked, strict=False)
            docs = as_documents(pick(out, context_key, CONTEXT_KEYS, sole=False)) \
                if isinstance(out, Mapping) else []
            return answer, docs
        if sample is None:
            return as_text(out, strict=False) if not isinstance(out, Mapping) else None, []
        return sample.answer, as_documents(sample.contexts)
    return call


async def atournament_from_runnables(runnables: Mapping[str, Runnable],
                                     queries: Sequence[str] | Mapping[str, str],
                                     judge: JudgeLike, config: TournamentConfig | None = None, *,
                                     answer_key: str | None = None, context_key: str | None = None,
                                     input: Callable[[str], Any] | None = None,
                                     run_config: Callable[[str, str], Mapping[str, Any]] | None = None,
                                     timeout: float | None = None,
                                     store: RunStore | None = None, run_id: str | None = None,
                                     limit: int = 8) -> TournamentResult:
    """Invoke every runnable on every query, then run the tournament. Any app shape works: an LCEL
    chain returning a string or a dict, a ``create_agent`` agent, a LangGraph graph. The answer and
    contexts are what :class:`RAGCapture` reads from the run (the documents that reached the
    answering model call's prompt); ``answer_key`` / ``context_key`` read them from the output dict
    instead. ``input`` turns a question into the runnable's input (default: from its input schema,
    see :func:`app_input`). Each call gets a conversation of its own (:func:`session_config`: a
    ``thread_id`` and a ``session_id`` per variant and query); ``run_config(name, qid)`` adds to
    that config (its ``configurable`` keys win). Every runnable answers the first query before the
    others are asked: one that raises on it stops the run with one :class:`ConfigError` naming it,
    the error and a fix. ``timeout`` bounds each call, in seconds. ``queries`` is a list (ids q1,
    q2 ...) or ``{qid: query}``."""
    qids = {q: qid for qid, q in reversed(list(as_queries(queries).items()))}
    apps = {name: _app(name, r, qids, answer_key, context_key, input, run_config)
            for name, r in runnables.items()}
    apps = await afirst_query_checked(apps, queries, timeout=timeout, fix=_fix)
    return await atournament_over_apps(apps, queries, as_judge(judge), config, store=store, run_id=run_id,
                                      limit=limit)


tournament_from_runnables = synchronous(atournament_from_runnables)
