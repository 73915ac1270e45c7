"""Capture (question, contexts, answer) from an unmodified LlamaIndex app through its
instrumentation events, for THELMA or any other langrag evaluator.

:class:`RAGCapture` is an event handler: every ``QueryEndEvent`` becomes one
:class:`~langrag_eval.thelma.ThelmaSample` with the query, the response text and the contexts of the
response's ``source_nodes`` (or, for a response that carries none, the nodes of the last
``RetrievalEndEvent`` for the same query). Register it on the root dispatcher for the block with
``with capturing() as cap:``, or yourself with ``get_dispatcher().add_event_handler(cap)``.

>>> cap = RAGCapture()
>>> cap.class_name()
'LangragRAGCapture'
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from pydantic import Field, PrivateAttr

from langrag_eval.thelma import ThelmaSample

__all__ = ["RAGCapture", "capturing"]


def _query_text(query: Any) -> str:
    if isinstance(query, str):
        return query
    return str(getattr(query, "query_str", "") or "")


def _node_texts(nodes: Any) -> list[str]:
    out = []
    for n in nodes or []:
        node = getattr(n, "node", n)
        out.append(node.get_content() if hasattr(node, "get_content") else str(node))
    return out


class RAGCapture(BaseEventHandler):
    """Collects one sample per finished query, in the order the queries ended."""

    samples: list[ThelmaSample] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _retrieved: dict[str, list[str]] = PrivateAttr(default_factory=dict)

    @classmethod
    def class_name(cls) -> str:
        return "LangragRAGCapture"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, RetrievalEndEvent):
            with self._lock:
                self._retrieved[_query_text(event.str_or_query_bundle)] = _node_texts(event.nodes)
        elif isinstance(event, QueryEndEvent):
            query = _query_text(event.query)
            response = event.response
            text = getattr(response, "response", None)
            nodes = getattr(response, "source_nodes", None)
            with self._lock:
                retrieved = self._retrieved.pop(query, [])
                contexts = _node_texts(nodes) if nodes else retrieved
                self.samples.append(ThelmaSample(id=event.id_, query=query, sources=contexts,
                                                 response=text if isinstance(text, str) or text is None
                                                 else str(text)))


@contextmanager
def capturing(capture: RAGCapture | None = None) -> Iterator[RAGCapture]:
    """Capture every query the app answers inside the block (the handler is removed afterwards)."""
    cap = capture or RAGCapture()
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(cap)
    try:
        yield cap
    finally:
        dispatcher.event_handlers = [h for h in dispatcher.event_handlers if h is not cap]
