"""Run a tournament straight over RAG apps: ask every app every query, then judge.

Framework-free: each app is an async callable ``query -> (answer, documents)``. The LangChain and
LlamaIndex adapters wrap runnables and query engines into such callables. An app that raises or
returns no answer for a query loses its games on that query; the summary lists it.

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> async def short(q): return "Paris.", []
>>> async def broken(q): raise RuntimeError("index offline")
>>> result = tournament_over_apps({"short": short, "broken": broken}, ["Capital?"],
...                                           Judge(ScriptedModel(["[[C]]"])))
>>> result.summary["left_out"]["counts"]
{'app_error': 1, 'single_agent': 1}
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..runtime import Judge, RunStore, gather_bounded, synchronous
from ..types import Document
from .data import Problem, TournamentData
from .run import TournamentConfig, TournamentResult, arun_tournament

__all__ = ["App", "acollect_answers", "as_queries", "atournament_over_apps", "collect_answers", "tournament_over_apps"]

App = Callable[[str], Awaitable[tuple[str | None, Sequence[Document]]]]


def as_queries(queries: Sequence[str] | Mapping[str, str]) -> dict[str, str]:
    """``{qid: query}``; a plain list gets ids ``q1``, ``q2`` ... in order."""
    if isinstance(queries, Mapping):
        return {str(k): v for k, v in queries.items()}
    return {f"q{i}": q for i, q in enumerate(queries, start=1)}


async def acollect_answers(apps: Mapping[str, App], queries: Sequence[str] | Mapping[str, str], *,
                          limit: int = 8) -> TournamentData:
    """Ask every app every query (at most ``limit`` at once) and validate the answers."""
    qs = as_queries(queries)
    jobs = [(qid, name) for qid in qs for name in apps]
    problems: list[Problem] = []

    async def ask(job: tuple[str, str]) -> dict[str, Any] | None:
        qid, name = job
        try:
            answer, docs = await apps[name](qs[qid])
        except Exception as exc:  # noqa: BLE001 - an app failing on one query must not stop the others
            problems.append(Problem(kind="app_error", message=f"app {name!r} failed on query {qid!r}: "
                                    f"{type(exc).__name__}: {exc}"))
            return None
        if answer is None:
            problems.append(Problem(kind="app_error", message=f"app {name!r} returned no answer for "
                                    f"query {qid!r}"))
            return None
        return {"qid": qid, "query": qs[qid], "agent": name, "answer": answer,
                "documents": [{"id": d.id, "text": d.text, "score": d.score} for d in docs]}

    records = [r for r in await gather_bounded(jobs, ask, limit=limit) if r is not None]
    data = TournamentData.from_records(records, source="apps")
    for qid, query in qs.items():
        data.queries.setdefault(qid, query)
    data.problems[:0] = problems
    return data


async def atournament_over_apps(apps: Mapping[str, App], queries: Sequence[str] | Mapping[str, str],
                               judge: Judge, config: TournamentConfig | None = None, *,
                               store: RunStore | None = None, run_id: str | None = None,
                               limit: int = 8) -> TournamentResult:
    """Collect every app's answers, then run the tournament on them."""
    data = await acollect_answers(apps, queries, limit=limit)
    return await arun_tournament(data, judge, config, store=store, run_id=run_id, limit=limit)


collect_answers = synchronous(acollect_answers)
tournament_over_apps = synchronous(atournament_over_apps)
