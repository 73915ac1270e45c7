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
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
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

from langrag_eval.contexts import CaptureWarning, ModelCall, as_documents, as_text, select_contexts
from langrag_eval.errors import ConfigError
from langrag_eval import Sample
from langrag_eval.types import Document

__all__ = ["RAGCapture", "capturing", "result_documents", "result_text"]

_APP_METHODS = {"query", "aquery", "chat", "achat", "stream_chat", "astream_chat", "run"}
_QUESTION_ARGS = ("str_or_query_bundle", "message", "user_msg", "query_str", "query", "input")


def _text(value: Any) -> str | None:
    return as_text(value, strict=False)  # a QueryBundle's query_str, a message's content, a response's text


def _question(bound: inspect.BoundArguments) -> str | None:
    args = bound.arguments
    for name in _QUESTION_ARGS:
        if args.get(name) is not None:
            return _text(args[name])
    start = args.get("start_event")  # a workflow run: the StartEvent holds the user's message
    if start is not None:
        for name in ("user_msg", "query", "input", "question"):
            value = start.get(name) if hasattr(start, "get") else getattr(start, name, None)
            if value is not None:
                return _text(value)
    kwargs = args.get("kwargs") or {}
    for name in ("user_msg", "query", "input", "question"):
        if kwargs.get(name) is not None:
            return _text(kwargs[name])
    return None


@dataclass
class _Turn:
    id: str
    question: str | None
    retrieved: list[list[Document]] = field(default_factory=list)  # outermost retrievals
    calls: list[ModelCall] = field(default_factory=list)
    answer: str | None = None
    sources: list[Document] | None = None  # what the result names as its sources
    stream: Any = None            # a chat stream whose text is read once it is done
    done: bool = False


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
    _turns: list[_Turn] = PrivateAttr(default_factory=list)
    _open: dict[str, _Turn] = PrivateAttr(default_factory=dict)
    _root: dict[str, str] = PrivateAttr(default_factory=dict)
    _parent: dict[str, str] = PrivateAttr(default_factory=dict)
    _retrieving: set[str] = PrivateAttr(default_factory=set)
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
            answer = _answer_of(t)
            chosen = select_contexts(t.retrieved, t.calls, answer, stated=t.sources)
            sources = list(chosen.contexts)
            if self.include_generated:
                sources += as_documents(chosen.generated)
            out.append(Sample(id=t.id, question=t.question or "", answer=answer, contexts=sources,
                                    generated=chosen.generated, capture_note=chosen.note))
            if chosen.note and not self._warned:
                self._warned = True
                warnings.warn(f"captured sample {t.id}: {chosen.note} (every such sample says so in its "
                              "capture_note)", CaptureWarning, stacklevel=2)
        return out

    def clear(self) -> None:
        with self._lock:
            self._turns.clear()

    # ---- spans: which call each span belongs to
    def enter(self, id_: str, bound: inspect.BoundArguments, parent: str | None) -> None:
        with self._lock:
            self._watched = True
            root = self._root.get(parent, parent) if parent else id_
            self._root[id_] = root
            if parent:
                self._parent[id_] = parent
            method = id_.split("-", 1)[0].rsplit(".", 1)[-1]
            if root == id_ and method in _APP_METHODS:
                self._open[id_] = _Turn(id=id_, question=_question(bound))

    def exit(self, id_: str, result: Any, failed: bool = False) -> None:
        with self._lock:
            if self._root.get(id_) != id_:
                return  # a span inside a call: forgotten with its root
            turn = self._open.pop(id_, None)
            if turn is None or failed:
                self._forget(id_)
                return
            self._turns.append(turn)
        _read_result(turn, result)
        if turn.done and turn.stream is None:
            with self._lock:
                self._forget(id_)
        # a stream's model call ends when it is read: its spans stay known until then

    def _forget(self, root: str) -> None:
        for span in [s for s, r in self._root.items() if r == root]:
            del self._root[span]
            self._parent.pop(span, None)
            self._retrieving.discard(span)

    def _turn_of(self, span_id: str | None) -> _Turn | None:
        root = self._root.get(span_id or "")
        if root is None:
            return None
        return self._open.get(root) or next((t for t in self._turns if t.id == root), None)

    def _outermost(self, span_id: str | None) -> bool:
        span = self._parent.get(span_id or "")
        while span is not None:
            if span in self._retrieving:
                return False
            span = self._parent.get(span)
        return True

    # ---- events: what was retrieved and what the models were asked inside each call
    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, RetrievalStartEvent):
            with self._lock:
                if event.span_id:
                    self._retrieving.add(event.span_id)
        elif isinstance(event, RetrievalEndEvent):
            with self._lock:
                turn = self._turn_of(event.span_id)
                if turn is not None and self._outermost(event.span_id):
                    turn.retrieved.append(as_documents(event.nodes or []))
        elif (call := _call_of(event)) is not None:
            with self._lock:
                turn = self._turn_of(event.span_id)
                if turn is not None:
                    turn.calls.append(call)
        elif isinstance(event, QueryEndEvent) and not self._watched:
            # registered as an event handler alone (no span watcher): query engines still count
            turn = _Turn(id=event.id_, question=_text(event.query))
            with self._lock:
                self._turns.append(turn)
            _read_result(turn, event.response)


def result_documents(result: Any) -> list[Document] | None:
    """The contexts an app call returned: its ``source_nodes``, else the nodes its tools returned
    (an agent's retriever tool); None when it carries neither."""
    nodes = getattr(result, "source_nodes", None)
    if nodes:
        return as_documents(nodes)
    tool_nodes = [n for call in getattr(result, "tool_calls", None) or [] for n in _tool_nodes(call)]
    return tool_nodes or None


def result_text(result: Any) -> str | None:
    """The answer of an app call: a response's text, a chat response's, an agent output's message."""
    return _text(getattr(result, "response", result))


def _read_result(turn: _Turn, result: Any) -> None:
    """Answer and sources from what the call returned; a stream is wrapped so that its text is
    kept as the caller reads it."""
    if hasattr(result, "source_nodes") and not getattr(result, "tool_calls", None):
        turn.sources = as_documents(result.source_nodes or [])  # after post-processing: may be none
    elif not turn.retrieved and (docs := result_documents(result)):
        turn.retrieved.append(docs)  # an agent whose tools returned nodes without a retriever
    if getattr(result, "response_gen", None) is not None and hasattr(result, "response_txt"):
        gen = result.response_gen  # a streaming query response, sync or async
        result.response_gen = _atee(gen, turn) if hasattr(gen, "__aiter__") else _tee(gen, turn)
        return
    if hasattr(result, "is_done") and hasattr(result, "response_gen"):  # a streaming chat response
        turn.stream, turn.done = result, True
        return
    turn.answer = result_text(result)
    turn.done = True


def _tool_nodes(call: Any) -> list[Document]:
    raw = getattr(getattr(call, "tool_output", None), "raw_output", None)
    try:
        return as_documents(raw) if isinstance(raw, list) else []
    except ConfigError:
        return []


def _tee(gen: Iterator[str], turn: _Turn) -> Iterator[str]:
    parts: list[str] = []
    for token in gen:
        parts.append(token)
        yield token
    turn.answer, turn.done = "".join(parts), True


async def _atee(gen: Any, turn: _Turn) -> Any:
    parts: list[str] = []
    async for token in gen:
        parts.append(token)
        yield token
    turn.answer, turn.done = "".join(parts), True


def _answer_of(turn: _Turn) -> str | None:
    if turn.stream is not None:
        return turn.stream.response if getattr(turn.stream, "is_done", True) else None
    return turn.answer


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
