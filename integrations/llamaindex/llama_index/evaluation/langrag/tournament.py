"""RAGElo tournaments over LlamaIndex query engines, chat engines, agents and workflows: each answers
every query, its answer and contexts read by :func:`~.capture.capturing`, then the games are played."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, BaseWorkflowAgent

from langrag_eval.errors import ConfigError
from langrag_eval.adapters.recorder import app_reply
from langrag_eval.runtime import RunStore, synchronous
from langrag_eval.tournament import TournamentConfig, TournamentResult, atournament_over_apps
from langrag_eval.tournament.apps import afirst_query_checked

from .capture import capturing
from .models import JudgeLike, as_judge

__all__ = ["atournament_from_query_engines", "tournament_from_query_engines"]

Start = str | Callable[[str], Mapping[str, Any]]
_FIX = ("a workflow's start step reads its own keyword: pass start='query' (or start=lambda q: {...} for "
        "several) to say how run() takes the question; a query engine, chat engine or agent needs no option")


def _app(engine: Any, start: Start | None):
    """A query engine's ``aquery``, a chat engine's ``achat`` (a fresh conversation per query, one at
    a time) or a workflow's or agent's ``run``, its answer and contexts read by a capture of the call."""
    one_at_a_time = asyncio.Lock()

    async def ask(query: str) -> Any:
        if hasattr(engine, "aquery"):
            return await engine.aquery(query)
        if hasattr(engine, "achat"):
            async with one_at_a_time:  # the engine keeps one conversation: reset it for each query
                engine.reset()
                return await engine.achat(query)
        if not hasattr(engine, "run"):
            raise ConfigError(f"{type(engine).__name__} is not a query engine, chat engine, agent or workflow")
        if callable(start):
            return await engine.run(**dict(start(query)))
        agent = isinstance(engine, (BaseWorkflowAgent, AgentWorkflow))  # as LlamaIndex's docs write start steps
        return await engine.run(**{start or ("user_msg" if agent else "query"): query})

    async def call(query: str) -> Any:
        with capturing() as cap:
            result = await ask(query)
            if hasattr(result, "async_response_gen") and hasattr(result, "get_response"):  # read the stream
                result = await result.get_response()
        return app_reply(result, cap.samples)
    return call


async def atournament_from_query_engines(engines: Mapping[str, Any], queries: Sequence[str] | Mapping[str, str],
                                         judge: JudgeLike, config: TournamentConfig | None = None, *,
                                         start: Start | None = None, timeout: float | None = None,
                                         store: RunStore | None = None, run_id: str | None = None,
                                         concurrency: int = 8) -> TournamentResult:
    """Ask every engine every query (at most ``concurrency`` at once), then run the tournament. A
    workflow runs with ``start`` (a keyword, or ``question -> keywords``; default ``user_msg`` for
    agents, ``query`` for other workflows). An engine that fails on the first query stops the run
    with a :class:`ConfigError` naming it and a fix; ``timeout`` bounds each call, in seconds."""
    apps = await afirst_query_checked({n: _app(e, start) for n, e in engines.items()}, queries, timeout=timeout,
                                      fix=lambda name, exc: _FIX)
    return await atournament_over_apps(apps, queries, as_judge(judge), config, store=store, run_id=run_id,
                                      concurrency=concurrency)


tournament_from_query_engines = synchronous(atournament_from_query_engines)
