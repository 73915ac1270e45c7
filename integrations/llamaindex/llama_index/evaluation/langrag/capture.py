"""Capture (question, contexts, answer) from an unmodified LlamaIndex app through its instrumentation:
one :class:`~langrag_eval.types.Sample` per top-level call (a query or chat engine's ``query`` /
``chat`` and their async and streaming forms, an agent's or workflow's ``run``), its contexts by the
core's one rule (:mod:`langrag_eval.adapters.recorder`), node ids and metadata kept.

``with capturing() as cap:`` registers the capture and a span handler on LlamaIndex's root dispatcher
for the block only, and only the calls of the block's own context (thread or task) are captured, as
with LangChain's callbacks. Registered alone (``get_dispatcher().add_event_handler(cap)``) a
capture still sees query engines, from their ``QueryEndEvent``.

>>> cap = RAGCapture()
>>> cap.class_name(), cap.samples
('LangragRAGCapture', [])
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent, LLMCompletionEndEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent, RetrievalStartEvent
from llama_index.core.instrumentation.span_handlers import SimpleSpanHandler
from pydantic import PrivateAttr

from langrag_eval.adapters.capturing import call_question, read_result
from langrag_eval.types import as_text
from langrag_eval.adapters.recorder import CallRecorder, ModelCall
from langrag_eval.adapters.steps import StepBook
from langrag_eval.trajectories import TrajectorySample
from langrag_eval.types import Sample

__all__ = ["RAGCapture", "capturing"]

_APP_METHODS = {"query", "aquery", "chat", "achat", "stream_chat", "astream_chat", "run"}
_SYNTHESIS = {"synthesize", "asynthesize"}  # a response synthesizer: its refine / tree-summarize calls write one answer
# called by the app itself, not inside an engine: ``nodes = retriever.retrieve(q)``, then
# ``synthesizer.synthesize(q, nodes)``; the retrieval is the answer's when its nodes reach the prompt
_CALLED_ALONE = {"retrieve", "aretrieve", *_SYNTHESIS}


class RAGCapture(BaseEventHandler):
    """One sample per finished top-level app call, in the order the calls ended (a streamed answer
    is read when the samples are). ``include_generated`` adds ``sample.generated`` to the sources.
    ``trajectories`` holds each sample's trajectory, index by index, read from the events its agent's
    workflow steps returned (:func:`~langrag_eval.trajectories.events.trajectory_of_events`)."""

    include_generated: bool = False
    _rec: CallRecorder = PrivateAttr(default_factory=lambda: CallRecorder(adopt=True, read=read_result))
    _book: StepBook = PrivateAttr(default_factory=StepBook)

    @classmethod
    def class_name(cls) -> str:
        return "LangragRAGCapture"

    @property
    def samples(self) -> list[Sample]:
        return self._rec.collected(self.include_generated)

    @property
    def trajectories(self) -> list[TrajectorySample]:
        return self._book.samples(self.samples)

    def clear(self) -> None:
        self._rec.clear()
        self._book.clear()

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        rec, span = self._rec, event.span_id
        if isinstance(event, RetrievalStartEvent) and span:
            rec.retriever(span)
        elif isinstance(event, RetrievalEndEvent):
            rec.retrieved(span, event.nodes or [])
        elif isinstance(event, LLMChatEndEvent):
            reply = getattr(getattr(event.response, "message", None), "content", None)
            rec.model_called(span, ModelCall("\n".join(_message_text(m) for m in event.messages or []),
                                             str(reply or "")))
        elif isinstance(event, LLMCompletionEndEvent):
            text = getattr(event.response, "text", "")
            rec.model_called(span, ModelCall(str(event.prompt or ""), str(text or "")))
        elif isinstance(event, QueryEndEvent) and not rec.watched:  # registered alone: query engines
            rec.finished(event.id_, as_text(event.query, strict=False), event.response)


def _message_text(message: Any) -> str:
    """A chat message's text and the tool calls it makes: an agent's prompt holds the question it
    asked a query engine tool beside that tool's answer, which links a short answer to its nodes."""
    calls = [f"\n{b.tool_name}({b.tool_kwargs})" for b in getattr(message, "blocks", None) or []
             if getattr(b, "tool_name", None)]
    return str(message.content or "") + "".join(calls)


class _Spans(SimpleSpanHandler):
    """Tells the capture which call each span belongs to; keeps no spans itself."""

    capture: Any = None

    def new_span(self, id_: str, bound_args: Any, parent_span_id: str | None = None, **kwargs: Any) -> None:
        method = id_.split("-", 1)[0].rsplit(".", 1)[-1]  # span ids are "Class.method-uuid"
        app = method in _APP_METHODS or (parent_span_id is None and method in _CALLED_ALONE)
        self.capture._rec.enter(id_, parent_span_id, question=call_question(bound_args.arguments),
                                app=app, synthesis=method in _SYNTHESIS)

    def prepare_to_exit_span(self, id_: str, result: Any = None, **kwargs: Any) -> None:
        if hasattr(result, "current_agent_name") or hasattr(result, "tool_output"):
            # an agent workflow's step returned its event (the agent's input or output, a tool's
            # result): the trajectory's steps, as the workflow streams them
            self.capture._book.event(self.capture._rec.call_of(id_), result)
        self.capture._rec.exit(id_, result)

    def prepare_to_drop_span(self, id_: str, **kwargs: Any) -> None:
        self.capture._rec.exit(id_, None, failed=True)


_swap = threading.Lock()  # handler lists are replaced, never changed in place: a dispatch keeps its own


@contextmanager
def capturing(capture: RAGCapture | None = None, *, include_generated: bool = False) -> Iterator[RAGCapture]:
    """Capture every app call made inside the block, in this context only
    (:meth:`~langrag_eval.adapters.recorder.CallRecorder.active`)."""
    cap = capture or RAGCapture(include_generated=include_generated)
    root, spans = get_dispatcher(), _Spans()
    spans.capture = cap  # a span handler's constructor takes its own fields only
    with _swap:
        root.event_handlers, root.span_handlers = [*root.event_handlers, cap], [*root.span_handlers, spans]
    try:
        with cap._rec.active():
            yield cap
    finally:
        with _swap:
            root.event_handlers = [h for h in root.event_handlers if h is not cap]
            root.span_handlers = [h for h in root.span_handlers if h is not spans]
