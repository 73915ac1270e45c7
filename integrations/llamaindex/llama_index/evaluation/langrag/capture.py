"""Capture (question, contexts, answer) from an unmodified LlamaIndex app through its
instrumentation, for THELMA or any other langrag evaluator.

Every top-level call of an app becomes one :class:`~langrag_eval.thelma.ThelmaSample`: a query
engine's ``query`` / ``aquery`` (streaming too), a chat engine's ``chat`` / ``achat`` /
``stream_chat`` / ``astream_chat``, and an agent's or workflow's ``run``. The question comes from the
call's arguments, the answer from its result (a streamed answer once the stream has been read), and
the contexts from the result's ``source_nodes``, else from every retrieval made inside the call (an
agent's retriever tool), else from an agent's tool outputs. Contexts keep node ids and metadata.

LlamaIndex reports calls as spans and retrievals as events, so the capture is a span handler and an
event handler on the root dispatcher: ``with capturing() as cap:`` registers both for the block.
Registered alone as an event handler (``get_dispatcher().add_event_handler(cap)``) it still
captures query engines, from their ``QueryEndEvent``.

>>> cap = RAGCapture()
>>> cap.class_name(), cap.samples
('LangragRAGCapture', [])
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.span.simple import SimpleSpan
from llama_index.core.instrumentation.span_handlers.base import BaseSpanHandler
from pydantic import PrivateAttr

from langrag_eval.contexts import as_documents, as_text
from langrag_eval.errors import ConfigError
from langrag_eval.thelma import ThelmaSample
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
    retrieved: list[Document] = field(default_factory=list)
    answer: str | None = None
    sources: list[Document] | None = None
    stream: Any = None            # a chat stream whose text is read once it is done
    done: bool = False


class RAGCapture(BaseEventHandler):
    """Collects one sample per finished top-level app call, in the order the calls ended (a
    streamed answer is read when the samples are)."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _turns: list[_Turn] = PrivateAttr(default_factory=list)
    _open: dict[str, _Turn] = PrivateAttr(default_factory=dict)
    _root: dict[str, str] = PrivateAttr(default_factory=dict)
    _watched: bool = PrivateAttr(default=False)  # spans reach it: capturing() registered the watcher

    @classmethod
    def class_name(cls) -> str:
        return "LangragRAGCapture"

    @property
    def samples(self) -> list[ThelmaSample]:
        with self._lock:
            turns = [t for t in self._turns if t.done]
        return [ThelmaSample(id=t.id, query=t.question or "", response=_answer_of(t),
                             sources=t.sources if t.sources is not None else t.retrieved) for t in turns]

    def clear(self) -> None:
        with self._lock:
            self._turns.clear()

    # ---- spans: which call each span belongs to
    def enter(self, id_: str, bound: inspect.BoundArguments, parent: str | None) -> None:
        with self._lock:
            self._watched = True
            root = self._root.get(parent, parent) if parent else id_
            self._root[id_] = root
            method = id_.split("-", 1)[0].rsplit(".", 1)[-1]
            if root == id_ and method in _APP_METHODS:
                self._open[id_] = _Turn(id=id_, question=_question(bound))

    def exit(self, id_: str, result: Any, failed: bool = False) -> None:
        with self._lock:
            if self._root.get(id_) != id_:
                return  # a span inside a call: forgotten with its root
            turn = self._open.pop(id_, None)
            for span in [s for s, r in self._root.items() if r == id_]:
                del self._root[span]
            if turn is None or failed:
                return
            self._turns.append(turn)
        _read_result(turn, result)

    # ---- events: what was retrieved inside each call
    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, RetrievalEndEvent):
            with self._lock:
                turn = self._open.get(self._root.get(event.span_id or "", ""))
                if turn is not None:
                    turn.retrieved.extend(as_documents(event.nodes or []))
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
    docs = result_documents(result)
    if docs is not None and (getattr(result, "source_nodes", None) or not turn.retrieved):
        turn.sources = docs
    if getattr(result, "response_gen", None) is not None and hasattr(result, "response_txt"):
        result.response_gen = _tee(result.response_gen, turn)  # a streaming query response
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


def _answer_of(turn: _Turn) -> str | None:
    if turn.stream is not None:
        return turn.stream.response if getattr(turn.stream, "is_done", True) else None
    return turn.answer


class _SpanWatcher(BaseSpanHandler[SimpleSpan]):
    """Forwards span starts and ends to the capture (LlamaIndex reports app calls as spans). It
    keeps no spans itself: the capture tracks only which call each span belongs to."""

    _capture: Any = PrivateAttr(default=None)

    def __init__(self, capture: RAGCapture) -> None:
        super().__init__(open_spans={}, completed_spans=[], dropped_spans=[], current_span_ids={})
        self._capture = capture

    @classmethod
    def class_name(cls) -> str:
        return "LangragSpanWatcher"

    def new_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                 parent_span_id: str | None = None, tags: Any = None, **kwargs: Any) -> SimpleSpan | None:
        self._capture.enter(id_, bound_args, parent_span_id)
        return None

    def prepare_to_exit_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                             result: Any = None, **kwargs: Any) -> SimpleSpan | None:
        self._capture.exit(id_, result)
        return None

    def prepare_to_drop_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                             err: BaseException | None = None, **kwargs: Any) -> SimpleSpan | None:
        self._capture.exit(id_, None, failed=True)
        return None


@contextmanager
def capturing(capture: RAGCapture | None = None) -> Iterator[RAGCapture]:
    """Capture every app call made inside the block (the handlers are removed afterwards)."""
    cap = capture or RAGCapture()
    watcher = _SpanWatcher(cap)
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(cap)
    dispatcher.add_span_handler(watcher)
    try:
        yield cap
    finally:
        dispatcher.event_handlers = [h for h in dispatcher.event_handlers if h is not cap]
        dispatcher.span_handlers = [h for h in dispatcher.span_handlers if h is not watcher]
