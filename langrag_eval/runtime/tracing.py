"""A seam for tracing judge calls: an observer, set for a block of code, hears of every model call
the judge makes inside it (not cached replies), with the reply and its token usage. Framework
adapters turn these into their own traces (LangChain callbacks, LlamaIndex instrumentation events),
so judge cost and latency show up as child runs of the evaluation. Observers live in a context
variable: they follow the code into tasks and into :func:`~langrag_eval.runtime.run_sync` threads.

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> class Log:
...     def started(self, prompt, model_id, params): return prompt
...     def finished(self, token, reply): print("judge call:", token, "->", reply.text)
...     def failed(self, token, error): print("failed:", error)
>>> with observing(Log()):
...     _ = asyncio.run(Judge(ScriptedModel(["4"])).complete("grade"))
judge call: grade -> 4
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from ..model import GenerationParams, Reply

__all__ = ["CallObserver", "current_observer", "observing"]

log = logging.getLogger(__name__)


class CallObserver(Protocol):
    def started(self, prompt: str, model_id: str, params: GenerationParams) -> Any: ...

    def finished(self, token: Any, reply: Reply) -> None: ...

    def failed(self, token: Any, error: BaseException) -> None: ...


_observer: ContextVar[CallObserver | None] = ContextVar("langrag_call_observer", default=None)


def current_observer() -> CallObserver | None:
    """The observer set by :func:`observing`, and OpenTelemetry spans when a tracer provider is set
    (:mod:`.otel`): both hear of each call."""
    from .otel import judge_spans

    observer, spans = _observer.get(), judge_spans()
    if spans is None or observer is None:
        return observer or spans
    return _Both(observer, spans)


class _Both:
    def __init__(self, first: CallObserver, second: CallObserver) -> None:
        self.observers = (first, second)

    def started(self, prompt: str, model_id: str, params: GenerationParams) -> Any:
        return tuple(notify(o, "started", prompt, model_id, params) for o in self.observers)

    def finished(self, token: Any, reply: Reply) -> None:
        for o, t in zip(self.observers, token or (None, None)):
            notify(o, "finished", t, reply)

    def failed(self, token: Any, error: BaseException) -> None:
        for o, t in zip(self.observers, token or (None, None)):
            notify(o, "failed", t, error)


@contextmanager
def observing(observer: CallObserver | None) -> Iterator[None]:
    """Report the judge calls made inside the block to ``observer`` (None: to nobody)."""
    token = _observer.set(observer)
    try:
        yield
    finally:
        _observer.reset(token)


def notify(observer: CallObserver | None, method: str, *args: Any) -> Any:
    """Call an observer method; a failing observer is logged and never fails the judgment."""
    if observer is None:
        return None
    try:
        return getattr(observer, method)(*args)
    except Exception:  # noqa: BLE001 - tracing is best effort, grading is not
        log.warning("judge call observer %s.%s failed", type(observer).__name__, method, exc_info=True)
        return None
