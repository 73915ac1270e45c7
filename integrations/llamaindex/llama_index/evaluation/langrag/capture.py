"""Capture (question, contexts, answer) from an unmodified LlamaIndex app through its
instrumentation, for THELMA or any other langrag evaluator.

Every top-level call of an app becomes one :class:`~langrag_eval.thelma.Sample`: a query
engine's ``query`` / ``aquery`` (streaming too), a chat engine's ``chat`` / ``achat`` /
``stream_chat`` / ``astream_chat``, and an agent's or workflow's ``run``. The question comes from the
call's arguments, the answer from its result (a streamed answer once the stream has been read).
The contexts follow one rule (:func:`~langrag_eval.contexts.select_contexts`): the documents whose
text reached the prompt of the model call that produced the answer. The candidates are the nodes
the call's result names (``source_nodes``, after post-processing and reranking; none when a
post-processor dropped them all), else what the outermost retrievers returned inside the call (an
agent's retriever tool); the capture records every model call's input messages and keeps the
candidates the answering call's messages hold. Text the app wrote on the way and passed on
(sub-question answers, a condensed question) goes to the sample's ``generated``, not its sources;
``capture_note`` (and one :class:`~langrag_eval.contexts.CaptureWarning` per capture) says when the
shape left the contexts open. Contexts keep node ids and metadata.

LlamaIndex reports calls as spans and retrievals and model calls as events. ``with capturing() as
cap:`` sets the capture in a context variable; a span handler and an event handler, added to the
root dispatcher once, hand each span and event to the capture of the context it happens in and do
nothing outside a block, so a capture sees only the calls made in its own context (thread or task),
as LangChain's callbacks do. Registered alone as an event handler
(``get_dispatcher().add_event_handler(cap)``) it still captures query engines, from their
``QueryEndEvent`` and their ``source_nodes``.

>>> cap = RAGCapture()
>>> cap.class_name(), cap.samples
('LangragRAGCapture', [])
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent, LLMCompletionEndEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent, RetrievalStartEvent
from llama_index.core.instrumentation.span.simple import SimpleSpan
from llama_index.core.instrumentation.span_handlers.base import BaseSpanHandler
from pydantic import PrivateAttr

from langrag_eval.capturing import (CallTree, Turn, call_question, captured_sample, read_result, result_documents,
                                    result_text, warn_once)
from langrag_eval.contexts import ModelCall, as_documents, as_text
from langrag_eval.types import Sample

__all__ = ["RAGCapture", "capturing", "result_documents", "result_text"]  # the last two from the core

_APP_METHODS = {"query", "aquery", "chat", "achat", "stream_chat", "astream_chat", "run"}


def _call_of(event: BaseEvent) -> ModelCall | None:
    if isinstance(event, LLMChatEndEvent):
        prompt = "\n".join(str(m.content or "") for m in event.messages or [])
        reply = getattr(getattr(event.response, "message", None), "content", None)
        return ModelCall(prompt, str(reply or ""))
    if isinstance(event, LLMCompletionEndEvent):
        return ModelCall(str(event.prompt or ""), str(getattr(event.response, "text", None) or ""))
    return None


class RAGCapture(BaseEventHandler):
    """Collects one sample per finished top-level app call, in the order the calls ended (a
    streamed answer is read when the samples are). With ``include_generated`` the text the app
    generated on the way (``sample.generated``) is added to the sources, to be judged like them."""

    include_generated: bool = False
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _turns: list[Turn] = PrivateAttr(default_factory=list)
    _open: dict[str, Turn] = PrivateAttr(default_factory=dict)
    _tree: CallTree = PrivateAttr(default_factory=lambda: CallTree(adopt=True))
    _watched: bool = PrivateAttr(default=False)  # spans reach it: capturing() registered the watcher
    _warned: bool = PrivateAttr(default=False)

    @classmethod
    def class_name(cls) -> str:
        return "LangragRAGCapture"

    @property
    def samples(self) -> list[Sample]:
        with self._lock:
            turns = [t for t in self._turns if t.done]
        out = []
        for t in turns:
            out.append(captured_sample(t.id, t.question, t.final_answer(), t.retrieved, t.calls, stated=t.sources,
                                       include_generated=self.include_generated))
            warn_once(self, out[-1])
        return out

    def clear(self) -> None:
        with self._lock:
            self._turns.clear()

    # ---- spans: which call each span belongs to
    def enter(self, id_: str, bound: inspect.BoundArguments, parent: str | None) -> None:
        with self._lock:
            self._watched = True
            root = self._tree.enter(id_, parent)
            method = id_.split("-", 1)[0].rsplit(".", 1)[-1]
            if root == id_ and method in _APP_METHODS:
                self._open[id_] = Turn(id=id_, question=call_question(bound.arguments))

    def exit(self, id_: str, result: Any, failed: bool = False) -> None:
        with self._lock:
            if not self._tree.is_root(id_):
                return  # a span inside a call: forgotten with its root
            turn = self._open.pop(id_, None)
            if turn is None or failed:
                self._tree.forget(id_)
                return
            self._turns.append(turn)
        read_result(turn, result)
        if turn.done and turn.stream is None:
            with self._lock:
                self._tree.forget(id_)
        # a stream's model call ends when it is read: its spans stay known until then

    def _turn_of(self, span_id: str | None) -> Turn | None:
        root = self._tree.root.get(span_id or "")
        if root is None:
            return None
        return self._open.get(root) or next((t for t in self._turns if t.id == root), None)

    # ---- events: what was retrieved and what the models were asked inside each call
    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, RetrievalStartEvent):
            with self._lock:
                if event.span_id:
                    self._tree.retrievers.add(event.span_id)
        elif isinstance(event, RetrievalEndEvent):
            with self._lock:
                turn = self._turn_of(event.span_id)
                if turn is not None and not self._tree.inside_retriever(event.span_id):
                    turn.retrieved.append(as_documents(event.nodes or []))
        elif (call := _call_of(event)) is not None:
            with self._lock:
                turn = self._turn_of(event.span_id)
                if turn is not None:
                    turn.calls.append(call)
        elif isinstance(event, QueryEndEvent) and not self._watched:
            # registered as an event handler alone (no span watcher): query engines still count
            turn = Turn(id=event.id_, question=as_text(event.query, strict=False))
            with self._lock:
                self._turns.append(turn)
            read_result(turn, event.response)


_current: ContextVar[RAGCapture | None] = ContextVar("langrag_llamaindex_capture", default=None)


class _Forwarder(BaseEventHandler):
    """Hands each event to the capture of the context it is dispatched in."""

    @classmethod
    def class_name(cls) -> str:
        return "LangragCaptureForwarder"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        cap = _current.get()
        if cap is not None:
            cap.handle(event, **kwargs)


class _ContextSpans(BaseSpanHandler[SimpleSpan]):
    """The span side of :class:`_Forwarder` (LlamaIndex reports app calls as spans). It keeps no
    spans itself: the capture tracks only which call each span belongs to."""

    def __init__(self) -> None:
        super().__init__(open_spans={}, completed_spans=[], dropped_spans=[], current_span_ids={})

    @classmethod
    def class_name(cls) -> str:
        return "LangragContextSpans"

    def new_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                 parent_span_id: str | None = None, tags: Any = None, **kwargs: Any) -> SimpleSpan | None:
        if (cap := _current.get()) is not None:
            cap.enter(id_, bound_args, parent_span_id)
        return None

    def prepare_to_exit_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                             result: Any = None, **kwargs: Any) -> SimpleSpan | None:
        if (cap := _current.get()) is not None:
            cap.exit(id_, result)
        return None

    def prepare_to_drop_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                             err: BaseException | None = None, **kwargs: Any) -> SimpleSpan | None:
        if (cap := _current.get()) is not None:
            cap.exit(id_, None, failed=True)
        return None


_installed = threading.Lock()


def _install() -> None:
    """Add the context forwarders to the root dispatcher, once per process (idempotent)."""
    with _installed:
        dispatcher = get_dispatcher()
        if not any(isinstance(h, _Forwarder) for h in dispatcher.event_handlers):
            dispatcher.add_event_handler(_Forwarder())
        if not any(isinstance(h, _ContextSpans) for h in dispatcher.span_handlers):
            dispatcher.add_span_handler(_ContextSpans())


@contextmanager
def capturing(capture: RAGCapture | None = None, *, include_generated: bool = False) -> Iterator[RAGCapture]:
    """Capture every app call made inside the block, in this context only (another thread's or
    task's calls are not seen unless they run in a copy of this context)."""
    cap = capture or RAGCapture(include_generated=include_generated)
    _install()
    token = _current.set(cap)
    try:
        yield cap
    finally:
        _current.reset(token)
