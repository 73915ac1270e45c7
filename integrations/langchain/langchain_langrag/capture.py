"""Capture (question, contexts, answer) from an unmodified LangChain app, and RAGElo tournaments
over runnables read by that capture. :class:`RAGCapture`, a callback handler, turns each top-level
run into one sample (:class:`~langrag_eval.adapters.recorder.CallRecorder` says how). Pass it per call,
``app.invoke(q, config={"callbacks": [cap]})``, or capture all runs inside ``with capturing() as cap:``.

>>> from langchain_core.runnables import RunnableLambda
>>> app = RunnableLambda(lambda q: f"echo {q}")
>>> with capturing() as cap:
...     _ = app.invoke("hello")
>>> cap.samples[0].question, cap.samples[0].answer
('hello', 'echo hello')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult
from langchain_core.runnables import Runnable
from langchain_core.tracers.context import register_configure_hook

from langrag_eval.adapters.adapting import question_of
from langrag_eval.adapters.recorder import (
    CallRecorder, app_input, app_reply, call_config, prompt_text, runnable_fix,
)
from langrag_eval.adapters.steps import StepBook
from langrag_eval.runtime import RunStore, synchronous
from langrag_eval.tournament import TournamentConfig, TournamentResult, atournament_over_apps
from langrag_eval.tournament.apps import afirst_query_checked, as_queries
from langrag_eval.trajectories import TrajectorySample

from .models import JudgeLike, as_judge

__all__ = ["RAGCapture", "atournament_from_runnables", "capture_var", "capturing", "tournament_from_runnables"]


class RAGCapture(CallRecorder, BaseCallbackHandler):
    """Collects one sample per top-level run in ``samples``; ``errors`` counts those that raised.
    ``trajectories`` holds each sample's trajectory, index by index: the messages its first model
    call received (less the system prompt), every model reply (its agent from ``create_agent``'s
    ``name``) and every tool result (a handoff ``Command``'s tool message), as the callbacks heard them."""

    raise_error = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._book = StepBook()
        self._asked: dict[UUID, tuple[str | None, Any]] = {}  # a run under way: (its agent, its tool call id)

    @property
    def trajectories(self) -> list[TrajectorySample]:
        return self._book.samples(self.samples)

    def clear(self) -> None:
        super().clear()
        self._book.clear()

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                       tags: list[str] | None = None, **kwargs: Any) -> None:
        self.chain_start(run_id, parent_run_id, inputs, tags)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.chain_end(run_id, outputs)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.chain_error(run_id)

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID, parent_run_id: UUID | None = None,
                           **kwargs: Any) -> None:
        self.retriever_start(run_id, parent_run_id, query)

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.retriever_end(run_id, documents)

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID,
                            parent_run_id: UUID | None = None, tags: list[str] | None = None, **kwargs: Any) -> None:
        batch = [m for one in messages for m in one]
        self.model_start(run_id, parent_run_id, prompt_text(batch), question=question_of(batch), tags=tags)
        self._book.prompt(self.call_of(run_id), batch)
        self._asked[run_id] = ((kwargs.get("metadata") or {}).get("lc_agent_name"), None)

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     tags: list[str] | None = None, **kwargs: Any) -> None:
        self.model_start(run_id, parent_run_id, "\n".join(prompts), tags=tags)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._asked.pop(run_id, None)
        self.chain_error(run_id)  # a model call the app made alone, failed: no sample

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        gens = response.generations[0] if response.generations else []
        agent, _ = self._asked.pop(run_id, (None, None))
        if gens:  # before the call ends: a model called alone is a call of its own, forgotten as it ends
            self._book.reply(self.call_of(run_id), getattr(gens[0], "message", None), agent=agent)
        self.model_end(run_id, gens[0].text if gens else "")

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID, parent_run_id: UUID | None = None,
                      **kwargs: Any) -> None:
        self.tool_start(run_id, parent_run_id)
        self._asked[run_id] = (None, kwargs.get("tool_call_id"))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        _, call_id = self._asked.pop(run_id, (None, None))
        self._book.tool(self.call_of(run_id), output, call_id)
        self.tool_end(run_id, output)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._asked.pop(run_id, None)


capture_var: ContextVar[RAGCapture | None] = ContextVar("langrag_rag_capture", default=None)
register_configure_hook(capture_var, inheritable=True)


@contextmanager
def capturing(capture: RAGCapture | None = None, *, include_generated: bool = False) -> Iterator[RAGCapture]:
    """Capture every LangChain run started inside the block, without touching its call sites."""
    cap = capture or RAGCapture(include_generated=include_generated)
    token = capture_var.set(cap)
    try:
        yield cap
    finally:
        capture_var.reset(token)


async def atournament_from_runnables(runnables: Mapping[str, Runnable], queries: Sequence[str] | Mapping[str, str],
                                     judge: JudgeLike, config: TournamentConfig | None = None, *,
                                     answer_key: str | None = None, context_key: str | None = None,
                                     input: Callable[[str], Any] | None = None,
                                     run_config: Callable[[str, str], Mapping[str, Any]] | None = None,
                                     timeout: float | None = None, store: RunStore | None = None,
                                     run_id: str | None = None, concurrency: int = 8) -> TournamentResult:
    """Invoke every runnable (an LCEL chain, an agent, a graph) on every query, then run the
    tournament. Answer and contexts are what :class:`RAGCapture` reads, or the output's
    ``answer_key`` / ``context_key``. ``input(question)`` builds the input (default
    :func:`~langrag_eval.adapters.recorder.app_input`); ``run_config(name, qid)`` adds to each call's own
    conversation (:func:`~langrag_eval.adapters.recorder.call_config`). A runnable that raises on the first
    query stops the run with a :class:`ConfigError` and a fix. ``timeout``: seconds per call."""
    qids = {q: qid for qid, q in reversed(list(as_queries(queries).items()))}

    def app(name: str, runnable: Runnable) -> Callable[[str], Any]:
        async def call(query: str) -> Any:
            capture = RAGCapture()
            run = call_config(name, qids.get(query, query), run_config)
            run["callbacks"] = [*(run.get("callbacks") or []), capture]
            out = await runnable.ainvoke(input(query) if input else app_input(runnable, query), config=run)
            return app_reply(out, capture.samples, answer_key, context_key)
        return call

    apps = await afirst_query_checked({n: app(n, r) for n, r in runnables.items()}, queries, timeout=timeout,
                                      fix=runnable_fix)
    return await atournament_over_apps(apps, queries, as_judge(judge), config, store=store, run_id=run_id,
                                      concurrency=concurrency)


tournament_from_runnables = synchronous(atournament_from_runnables)
