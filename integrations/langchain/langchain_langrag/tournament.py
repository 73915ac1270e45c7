"""RAGElo tournaments over LangChain runnables: every runnable answers every query (its answer and
contexts read by :class:`~langchain_langrag.capture.RAGCapture`), then the tournament is played.
The pairwise and LangSmith comparative evaluators are in :mod:`langchain_langrag.evaluators`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import Runnable

from langrag_eval.adapting import ANSWER_KEYS, CONTEXT_KEYS, QUESTION_KEYS, pick
from langrag_eval.contexts import as_documents, as_text
from langrag_eval.runtime import RunStore, synchronous
from langrag_eval.tournament import TournamentConfig, TournamentResult, atournament_over_apps
from langrag_eval.tournament.apps import afirst_query_checked, as_queries
from langrag_eval.types import Document

from .capture import RAGCapture
from ._common import JudgeLike, as_judge

__all__ = ["app_input", "atournament_from_runnables", "session_config", "tournament_from_runnables"]


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
                                      concurrency=limit)


tournament_from_runnables = synchronous(atournament_from_runnables)
