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

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError
from ..evaluator import FunctionEvaluator
from ..results import Unscored
from ..run.evaluation import Executor, aevaluate
from ..runtime import Judge, RunStore, gather_bounded, synchronous
from ..types import Document
from .data import Problem, TournamentData
from .run import TournamentConfig, TournamentResult, arun_tournament

__all__ = ["App", "acollect_answers", "afirst_query_checked", "calling_error", "as_queries", "atournament_over_apps", "collect_answers", "tournament_over_apps"]

App = Callable[[str], Awaitable[tuple[str | None, Sequence[Document]]]]


def as_queries(queries: Sequence[str] | Mapping[str, str]) -> dict[str, str]:
    """``{qid: query}``; a plain list gets ids ``q1``, ``q2`` ... in order."""
    if isinstance(queries, Mapping):
        return {str(k): v for k, v in queries.items()}
    return {f"q{i}": q for i, q in enumerate(queries, start=1)}


class _Reply(BaseModel):
    """One app's answer to one query, as a tournament record."""

    qid: str
    query: str
    agent: str
    answer: Any  # checked with the other records by TournamentData
    documents: list[dict[str, Any]]


async def acollect_answers(apps: Mapping[str, App], queries: Sequence[str] | Mapping[str, str], *,
                           concurrency: int = 8, executor: Executor | None = None) -> TournamentData:
    """Ask every app every query (at most ``concurrency`` at once, on ``executor``: each (query,
    app) pair is a sample of :func:`langrag_eval.run.aevaluate`) and validate the answers. An app
    that raises or returns no answer for a query is that query's problem; the others go on."""
    qs = as_queries(queries)
    jobs = [(qid, name) for qid in qs for name in apps]

    async def ask(job: tuple[str, str]) -> _Reply | Unscored:
        qid, name = job
        try:
            answer, docs = await apps[name](qs[qid])
        except Exception as exc:  # noqa: BLE001 - an app failing on one query must not stop the others
            return Unscored(reason=f"app {name!r} failed on query {qid!r}: {type(exc).__name__}: {exc}",
                            cause="model_error")
        if answer is None:
            return Unscored(reason=f"app {name!r} returned no answer for query {qid!r}", cause="invalid_input")
        return _Reply(qid=qid, query=qs[qid], agent=name, answer=answer,
                      documents=[{"id": d.id, "text": d.text, "score": d.score} for d in docs])

    asking = FunctionEvaluator(ask, "tournament/answers", _Reply, key_of=lambda job: json.dumps(job),
                               description="asking the apps")
    replies = (await aevaluate(jobs, {"answers": asking}, concurrency=concurrency, executor=executor))["answers"]
    problems = [Problem(kind="app_error", message=r.reason) for r in replies if isinstance(r, Unscored)]
    records = [r.model_dump() for r in replies if isinstance(r, _Reply)]
    data = TournamentData.from_records(records, source="apps")
    for qid, query in qs.items():
        data.queries.setdefault(qid, query)
    data.problems[:0] = problems
    return data


async def atournament_over_apps(apps: Mapping[str, App], queries: Sequence[str] | Mapping[str, str],
                                judge: Judge, config: TournamentConfig | None = None, *,
                                store: RunStore | None = None, run_id: str | None = None,
                                concurrency: int = 8, executor: Executor | None = None) -> TournamentResult:
    """Collect every app's answers, then run the tournament on them (both through ``executor``)."""
    data = await acollect_answers(apps, queries, concurrency=concurrency, executor=executor)
    return await arun_tournament(data, judge, config, store=store, run_id=run_id, concurrency=concurrency,
                                 executor=executor)


collect_answers = synchronous(acollect_answers)
tournament_over_apps = synchronous(atournament_over_apps)


def _with_timeout(app: App, timeout: float | None) -> App:
    if timeout is None:
        return app

    async def call(query: str) -> tuple[str | None, Sequence[Document]]:
        try:
            return await asyncio.wait_for(app(query), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"no answer within {timeout:g} s") from None
    return call


def calling_error(exc: BaseException) -> bool:
    """Whether an app's error says it was called the wrong way (a missing input key or config value,
    a wrong keyword, no answer in time) rather than that it failed on that question."""
    return isinstance(exc, (TypeError, KeyError, AttributeError, TimeoutError)) or \
        any(hint in str(exc).lower() for hint in ("missing", "required", "must be", "expected", "input",
                                                  "configurable", "thread_id"))


async def afirst_query_checked(apps: Mapping[str, App], queries: Sequence[str] | Mapping[str, str], *,
                               timeout: float | None = None,
                               fix: Callable[[str, BaseException], str] | None = None) -> dict[str, App]:
    """Ask every app the first query before any other (each call at most ``timeout`` seconds). An
    app whose error there says it was called the wrong way (:func:`calling_error`) would fail (or
    time out) on every query: a :class:`ConfigError` names each such app once, with the error and
    ``fix(app name, error)``'s advice, before any other query is asked. Other errors stay that
    query's error, as in any run. The apps returned answer the first query from what they said
    already, so no app is asked anything twice.

    >>> import asyncio
    >>> async def app(q): raise KeyError("session_id")
    >>> asyncio.run(afirst_query_checked({"chat": app}, ["Capital?"]))
    Traceback (most recent call last):
    ...
    langrag_eval.errors.ConfigError: app 'chat' failed on the first query ('Capital?'), so no query was asked of it: KeyError: 'session_id'
    """
    qs = as_queries(queries)
    timed = {name: _with_timeout(app, timeout) for name, app in apps.items()}
    if not qs:
        return timed
    first = next(iter(qs.values()))
    names = list(timed)

    async def ask(name: str) -> Any:
        try:
            return await timed[name](first)
        except Exception as exc:  # noqa: BLE001 - reported below, once per app
            return exc

    answers = dict(zip(names, await gather_bounded(names, ask, concurrency=max(1, len(names)))))
    failed = {n: a for n, a in answers.items() if isinstance(a, Exception) and calling_error(a)}
    if failed:
        def line(name: str, exc: Exception) -> str:
            advice = fix(name, exc) if fix else ""
            return (f"app {name!r} failed on the first query ({first!r}), so no query was asked of it: "
                    f"{type(exc).__name__}: {exc}" + (f"; {advice}" if advice else ""))
        raise ConfigError(" | ".join(line(n, e) for n, e in failed.items()))

    def remembered(name: str) -> App:
        said: Any = answers[name]

        async def call(query: str) -> tuple[str | None, Sequence[Document]]:
            nonlocal said
            if query == first and said is not None:
                out, said = said, None
                if isinstance(out, Exception):
                    raise out
                return out
            return await timed[name](query)
        return call
    return {name: remembered(name) for name in names}
