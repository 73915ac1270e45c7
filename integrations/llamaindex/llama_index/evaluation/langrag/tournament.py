"""RAGElo tournaments over LlamaIndex query engines, chat engines, agents and workflows: each
answers every query (its answer and contexts read by :func:`~llama_index.evaluation.langrag.capture.capturing`),
then the tournament is played. The pairwise evaluator is in :mod:`llama_index.evaluation.langrag.evaluators`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, BaseWorkflowAgent

from langrag_eval.errors import ConfigError
from langrag_eval.contexts import as_documents
from langrag_eval.runtime import RunStore, synchronous
from langrag_eval.tournament import TournamentConfig, TournamentResult, atournament_over_apps
from langrag_eval.tournament.apps import afirst_query_checked
from langrag_eval.types import Document

from .capture import capturing, result_documents, result_text
from ._common import JudgeLike, as_judge

__all__ = ["atournament_from_query_engines", "tournament_from_query_engines"]

Start = str | Callable[[str], Mapping[str, Any]]


def _run_kwargs(engine: Any, query: str, start: Start | None) -> dict[str, Any]:
    """The keywords a workflow's ``run`` gets: ``start`` names the keyword (``"query"``) or builds
    them; by default an agent gets ``user_msg`` and any other workflow ``query``, as LlamaIndex's
    docs write their start steps (``ev.get("query")``)."""
    if callable(start):
        return dict(start(query))
    if start is not None:
        return {start: query}
    return {"user_msg": query} if isinstance(engine, (BaseWorkflowAgent, AgentWorkflow)) else {"query": query}


def _fix(name: str, exc: BaseException) -> str:
    return ("a workflow's start step reads its own keyword: pass start='query' (or start=lambda q: "
            "{...} for several) to say how run() takes the question; a query engine, chat engine or "
            "agent needs no option")


def _app(engine: Any, start: Start | None):
    """An app call for the tournament: a query engine's ``aquery``, a chat engine's ``achat`` (a
    fresh conversation per query, one query at a time per engine) or a workflow's or agent's
    ``run``; answer and contexts read by a capture of the call, like any captured sample."""
    one_at_a_time = asyncio.Lock()

    async def ask(query: str) -> Any:
        if hasattr(engine, "aquery"):
            return await engine.aquery(query)
        if hasattr(engine, "achat"):
            async with one_at_a_time:  # the engine keeps one conversation: reset it for each query
                engine.reset()
                return await engine.achat(query)
        if hasattr(engine, "run"):
            return await engine.run(**_run_kwargs(engine, query, start))
        raise ConfigError(f"{type(engine).__name__} is not a query engine, chat engine, agent or workflow")

    async def call(query: str) -> tuple[str | None, list[Document]]:
        with capturing() as cap:
            result = await ask(query)
            if hasattr(result, "async_response_gen") and hasattr(result, "get_response"):  # read the stream
                result = await result.get_response()
        samples = cap.samples
        if len(samples) == 1:
            return samples[0].answer, as_documents(samples[0].contexts)
        return result_text(result), result_documents(result) or []
    return call


async def atournament_from_query_engines(engines: Mapping[str, Any],
                                         queries: Sequence[str] | Mapping[str, str],
                                         judge: JudgeLike, config: TournamentConfig | None = None,
                                         *, start: Start | None = None, timeout: float | None = None,
                                         store: RunStore | None = None, run_id: str | None = None,
                                         limit: int = 8) -> TournamentResult:
    """Ask every engine every query (query engines, chat engines, agents and workflows alike), then
    run the tournament. Answer and contexts are what :func:`capturing` records of each call (the
    nodes that reached the answering model call's prompt, node ids as document ids). A workflow is
    run with ``start`` (a keyword name, or ``question -> keywords``; default ``user_msg`` for
    agents, ``query`` for other workflows). Every engine answers the first query before the others
    are asked: one that raises on it stops the run with one :class:`ConfigError` naming it, the
    error and a fix; ``timeout`` bounds each call, in seconds. ``queries`` is a list (ids q1, q2
    ...) or ``{qid: query}``."""
    apps = {name: _app(e, start) for name, e in engines.items()}
    apps = await afirst_query_checked(apps, queries, timeout=timeout, fix=_fix)
    return await atournament_over_apps(apps, queries, as_judge(judge), config, store=store, run_id=run_id,
                                      concurrency=limit)


tournament_from_query_engines = synchronous(atournament_from_query_engines)
