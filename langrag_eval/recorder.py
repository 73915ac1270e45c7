"""One capture's bookkeeping, free of any framework. A capture adapter hands it its framework's spans
(or runs) and events; the recorder keeps, per top-level app call, the question, the outermost
retrievals, every model call and what the call returned, and makes one sample of each finished call
with the one context rule (:func:`~langrag_eval.capturing.captured_sample`). Thread-safe: one
recorder may hear calls made in several threads.

>>> rec = CallRecorder()
>>> rec.enter("app", None, question="Capital?"); rec.enter("llm", "app")
>>> rec.model_called("llm", ModelCall("Paris is the capital of France. Capital?", "Paris."))
>>> rec.exit("llm", None); rec.exit("app", "Paris.")
>>> [(s.question, s.answer) for s in rec.samples()]
[('Capital?', 'Paris.')]
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .capturing import CallTree, Turn, captured_sample, read_result, result_documents, result_text, warn_once
from .contexts import ModelCall, as_documents
from .types import Document, Sample

__all__ = ["CallRecorder", "ModelCall", "captured_answer"]


_active: ContextVar[CallRecorder | None] = ContextVar("langrag_active_capture", default=None)


class CallRecorder:
    """Collects one sample per finished top-level app call, in the order the calls ended (a streamed
    answer is read when the samples are). ``watched`` is True once spans reach it."""

    def __init__(self) -> None:
        self.watched = self._local = False
        self._lock = threading.Lock()
        self._turns: list[Turn] = []
        self._open: dict[Hashable, Turn] = {}
        self._tree = CallTree(adopt=True)  # a span whose parent was not seen belongs to that parent
        self._warned = False

    @contextmanager
    def active(self) -> Iterator[CallRecorder]:
        """Record the spans of this block's context only (thread or task, and the tasks and
        threads that copy it): the spans of other contexts are not entered, so their events
        belong to no call of this recorder."""
        self.watched = self._local = True
        token = _active.set(self)
        try:
            yield self
        finally:
            _active.reset(token)

    def _elsewhere(self) -> bool:
        return self._local and _active.get() is not self

    def enter(self, span: Hashable, parent: Hashable | None, *, question: str | None = None,
              app: bool = True) -> None:
        """A span starts under ``parent``; a top-level one that is an ``app`` call opens a call."""
        if self._elsewhere():
            return
        with self._lock:
            self.watched = True
            if self._tree.enter(span, parent) == span and app:
                self._open[span] = Turn(id=str(span), question=question)

    def exit(self, span: Hashable, result: Any, *, failed: bool = False) -> None:
        """A span ends; a top-level call's ``result`` gives its answer (a failed call is no sample)."""
        if self._elsewhere():
            return
        with self._lock:
            if not self._tree.is_root(span):
                return  # a span inside a call: forgotten with its root
            turn = self._open.pop(span, None)
            if turn is None or failed:
                self._tree.forget(span)
                return
            self._turns.append(turn)
        read_result(turn, result)
        if turn.done and turn.stream is None:  # a stream's model call ends when it is read
            with self._lock:
                self._tree.forget(span)

    def finished(self, ident: str, question: str | None, result: Any) -> None:
        """A whole call reported at once, with no spans (a query engine's end event)."""
        turn = Turn(id=ident, question=question)
        with self._lock:
            self._turns.append(turn)
        read_result(turn, result)

    def retriever(self, span: Hashable) -> None:
        """``span`` is a retriever's: retrievals inside it are left to it."""
        with self._lock:
            self._tree.retrievers.add(span)

    def _turn_of(self, span: Hashable | None) -> Turn | None:
        root = self._tree.root.get(span)  # type: ignore[arg-type]
        if root is None:
            return None
        return self._open.get(root) or next((t for t in self._turns if t.id == str(root)), None)

    def retrieved(self, span: Hashable | None, documents: Any) -> None:
        """A retriever in ``span`` returned ``documents``; kept when it is an outermost one."""
        with self._lock:
            turn = self._turn_of(span)
            if turn is not None and not self._tree.inside_retriever(span):
                turn.retrieved.append(as_documents(documents))

    def model_called(self, span: Hashable | None, call: ModelCall) -> None:
        with self._lock:
            if (turn := self._turn_of(span)) is not None:
                turn.calls.append(call)

    def samples(self, *, include_generated: bool = False) -> list[Sample]:
        """The finished calls' samples; ``include_generated`` adds the text the app generated on the
        way (``sample.generated``) to the sources, to be judged like them."""
        with self._lock:
            turns = [t for t in self._turns if t.done]
        out = []
        for t in turns:
            out.append(captured_sample(t.id, t.question, t.final_answer(), t.retrieved, t.calls, stated=t.sources,
                                       include_generated=include_generated))
            warn_once(self, out[-1])
        return out

    def clear(self) -> None:
        with self._lock:
            self._turns.clear()


def captured_answer(samples: Sequence[Sample], result: Any) -> tuple[str | None, list[Document]]:
    """An app call's answer and documents: its one captured sample's, else read from what it returned."""
    if len(samples) == 1:
        return samples[0].answer, as_documents(samples[0].contexts)
    return result_text(result), result_documents(result) or []
