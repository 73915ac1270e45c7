"""Capture (question, contexts, answer) from an unmodified LangChain app, for THELMA or any other
langrag evaluator.

:class:`RAGCapture` is a callback handler: each top-level run of the app becomes one
:class:`~langrag_eval.thelma.ThelmaSample` with the question (the run's input), the documents every
retriever inside it returned (``on_retriever_start`` / ``on_retriever_end``) and the answer (the
run's output at ``on_chain_end``). Inputs and outputs may be strings, dicts, chat messages or a
``{"messages": [...]}`` state (``create_agent``, LangGraph): the question is then the last user
message and the answer the last assistant message that calls no tool. The contexts keep the
documents' ids and metadata; an app whose retrieval runs no LangChain retriever (a LangGraph node
calling ``vector_store.similarity_search``) gives the ``context`` / ``documents`` of its output.
Pass it per call, ``app.invoke(q, config={"callbacks": [cap]})``,
or leave the call sites alone and capture everything inside ``with capturing() as cap:`` (a context
variable registered with LangChain's ``register_configure_hook``).

>>> from langchain_core.runnables import RunnableLambda
>>> app = RunnableLambda(lambda q: f"echo {q}")
>>> with capturing() as cap:
...     _ = app.invoke("hello")
>>> cap.samples[0].query, cap.samples[0].response
('hello', 'echo hello')
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document as LCDocument
from langchain_core.messages import BaseMessage
from langchain_core.tracers.context import register_configure_hook

from langrag_eval.contexts import as_documents, as_text
from langrag_eval.errors import ConfigError
from langrag_eval.thelma import ThelmaSample
from langrag_eval.types import Document

from ._common import ANSWER_KEYS, CONTEXT_KEYS, EVALUATION_TAG, QUESTION_KEYS

__all__ = ["RAGCapture", "capture_var", "capturing"]


def _role(message: Any) -> str | None:
    """A message's role: LangChain message types, ``{"role": ...}`` dicts and ``(role, text)`` pairs."""
    if isinstance(message, BaseMessage):
        return {"human": "user", "ai": "assistant"}.get(message.type, message.type)
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
        return {"human": "user", "ai": "assistant"}.get(role, role)
    if isinstance(message, tuple) and len(message) == 2:
        return {"human": "user", "ai": "assistant"}.get(message[0], message[0])
    return None


def _content(message: Any) -> str | None:
    if isinstance(message, tuple):
        message = message[1]
    if isinstance(message, Mapping):
        message = message.get("content")
    try:
        return as_text(message)
    except ConfigError:
        return None


def _last(messages: Any, role: str) -> str | None:
    """The text of the last message with ``role``; for the assistant, the last that calls no tool."""
    if not isinstance(messages, Sequence) or isinstance(messages, str):
        return None
    for m in reversed(messages):
        if _role(m) == role and not (getattr(m, "tool_calls", None) or
                                      (isinstance(m, Mapping) and m.get("tool_calls"))):
            text = _content(m)
            if text:
                return text
    return None


def _question(inputs: Any) -> str | None:
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, BaseMessage):
        return _content(inputs)
    if isinstance(inputs, Mapping):
        for k in QUESTION_KEYS:
            if isinstance(inputs.get(k), str):
                return inputs[k]
        if "messages" in inputs:  # create_agent, LangGraph MessagesState
            return _last(inputs["messages"], "user")
    if isinstance(inputs, Sequence):  # a chat model's or a chat prompt's message list
        return _last(inputs, "user")
    return None


def _answer(outputs: Any) -> str | None:
    if isinstance(outputs, str):
        return outputs
    content = getattr(outputs, "content", None)  # a chat message, when the app ends without a parser
    if isinstance(content, (str, list)):
        return _content(outputs)
    if isinstance(outputs, Mapping):
        for k in ANSWER_KEYS:
            if k in outputs:
                return _answer(outputs[k])
        if "messages" in outputs:
            return _last(outputs["messages"], "assistant")
    return None


def _output_contexts(outputs: Any) -> list[Document]:
    """Contexts an app returns in its output (a LangGraph state's ``context``, an LCEL dict)."""
    if not isinstance(outputs, Mapping):
        return []
    for k in CONTEXT_KEYS:
        if outputs.get(k):
            try:
                return as_documents(outputs[k], field=f"output {k!r}")
            except ConfigError:
                return []
    return []


class _Pending:
    def __init__(self, question: str | None) -> None:
        self.question = question
        self.retriever_query: str | None = None
        self.contexts: list[Document] = []


class RAGCapture(BaseCallbackHandler):
    """Collects one sample per top-level run. ``samples`` holds the finished ones, in order;
    ``errors`` counts top-level runs that raised (they are not samples)."""

    raise_error = False

    def __init__(self) -> None:
        self.samples: list[ThelmaSample] = []
        self.errors = 0
        self._root: dict[UUID, UUID] = {}
        self._pending: dict[UUID, _Pending] = {}
        self._lock = threading.Lock()

    def _enter(self, run_id: UUID, parent_run_id: UUID | None) -> UUID:
        # A run whose parent this handler never saw is top-level for the capture: the app was
        # called inside a LangSmith @traceable or langsmith.evaluate, whose run is the parent.
        with self._lock:
            root = self._root.get(parent_run_id, run_id) if parent_run_id else run_id
            self._root[run_id] = root
            return root

    def _is_root(self, run_id: UUID) -> bool:
        return self._root.get(run_id) == run_id

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        if EVALUATION_TAG in (kwargs.get("tags") or ()):
            return  # an evaluation traced while capturing: not a run of the app
        root = self._enter(run_id, parent_run_id)
        if root == run_id:
            with self._lock:
                self._pending[root] = _Pending(_question(inputs))

    def on_retriever_start(self, serialized: dict[str, Any] | None, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        root = self._enter(run_id, parent_run_id)
        with self._lock:
            pending = self._pending.setdefault(root, _Pending(None))
            pending.retriever_query = pending.retriever_query or query

    def on_retriever_end(self, documents: Sequence[LCDocument], *, run_id: UUID,
                         parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            root = self._root.get(run_id, run_id)
            pending = self._pending.get(root)
            if pending is not None:
                pending.contexts.extend(as_documents(documents))
            if root == run_id:  # the app is a bare retriever
                self._finish(root, None)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        if self._is_root(run_id):
            with self._lock:
                pending = self._pending.get(run_id)
                if pending is not None and not pending.contexts:
                    # no retriever ran (a graph node calling vector_store.similarity_search, say):
                    # the contexts the app returns are the ones it used
                    pending.contexts = _output_contexts(outputs)
                self._finish(run_id, _answer(outputs))

    def on_chain_error(self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None,
                       **kwargs: Any) -> None:
        if self._is_root(run_id):
            with self._lock:
                self._pending.pop(run_id, None)
                self.errors += 1
                self._forget(run_id)

    # Every start event registers its run, so nested LLM and tool runs resolve to their root too.
    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID,
                            parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._enter(run_id, parent_run_id)

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        self._enter(run_id, parent_run_id)

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        # an agent's retriever tool: the retriever inside it belongs to the agent's run
        self._enter(run_id, parent_run_id)

    def _finish(self, root: UUID, answer: str | None) -> None:
        pending = self._pending.pop(root, None)
        if pending is not None:
            self.samples.append(ThelmaSample(id=str(root), query=pending.question or pending.retriever_query or "",
                                             sources=pending.contexts, response=answer))
        self._forget(root)

    def _forget(self, root: UUID) -> None:
        for run in [r for r, top in self._root.items() if top == root]:
            del self._root[run]

    def clear(self) -> None:
        with self._lock:
            self.samples.clear()
            self.errors = 0


capture_var: ContextVar[RAGCapture | None] = ContextVar("langrag_rag_capture", default=None)
register_configure_hook(capture_var, inheritable=True)


@contextmanager
def capturing(capture: RAGCapture | None = None) -> Iterator[RAGCapture]:
    """Capture every LangChain run started inside the block, without touching its call sites."""
    cap = capture or RAGCapture()
    token = capture_var.set(cap)
    try:
        yield cap
    finally:
        capture_var.reset(token)
