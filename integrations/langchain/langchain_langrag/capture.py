"""Capture (question, contexts, answer) from an unmodified LangChain app, for THELMA or any other
langrag evaluator.

:class:`RAGCapture` is a callback handler: each top-level run of the app becomes one
:class:`~langrag_eval.thelma.Sample` with the question (the run's input), the answer (the
run's output at ``on_chain_end``) and as contexts the documents whose text reached the prompt of the
model call that produced the answer (:func:`~langrag_eval.contexts.select_contexts`). The capture
records what every outermost retriever returned (a retriever run inside another one, as in
``EnsembleRetriever``, ``MultiQueryRetriever`` or ``ContextualCompressionRetriever``, is left to its
wrapper), and every model call's input messages and reply; the contexts are the retrieved documents
that the answering call's messages hold. Documents retrieved then dropped (compressed away, graded
out in a loop) do not count; text the app generated on the way and passed on (a rewritten question)
goes to the sample's ``generated``, and a note in ``capture_note`` (with one
:class:`~langrag_eval.contexts.CaptureWarning` per capture) says when the shape left the contexts
open. Inputs and outputs may be strings, dicts, chat messages or a ``{"messages": [...]}`` state
(``create_agent``, LangGraph): the question is then the last user message and the answer the last
assistant message that calls no tool. An app whose retrieval runs no LangChain retriever (a
LangGraph node calling ``vector_store.similarity_search``) gives the documents its steps return.
Pass it per call, ``app.invoke(q, config={"callbacks": [cap]})``,
or leave the call sites alone and capture everything inside ``with capturing() as cap:`` (a context
variable registered with LangChain's ``register_configure_hook``).

>>> from langchain_core.runnables import RunnableLambda
>>> app = RunnableLambda(lambda q: f"echo {q}")
>>> with capturing() as cap:
...     _ = app.invoke("hello")
>>> cap.samples[0].question, cap.samples[0].answer
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
from langchain_core.outputs import LLMResult
from langchain_core.tracers.context import register_configure_hook

from langrag_eval.adapting import CONTEXT_KEYS, answer_of, message_text, question_of
from langrag_eval.capturing import CallTree, captured_sample, warn_once
from langrag_eval.contexts import ModelCall, as_documents
from langrag_eval.errors import ConfigError
from langrag_eval.types import Document, Sample

from ._common import EVALUATION_TAG

__all__ = ["RAGCapture", "capture_var", "capturing"]


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


def _message_text(message: Any) -> str:
    text = message_text(message) or ""
    calls = getattr(message, "tool_calls", None) or []
    return text + "".join(f"\n{c.get('name')}({c.get('args')})" for c in calls if isinstance(c, Mapping))


def _step_documents(outputs: Any) -> list[LCDocument]:
    """Documents a step hands on (a LangGraph node's state update, a lambda returning documents)."""
    values = outputs.values() if isinstance(outputs, Mapping) else [outputs]
    return [d for v in values if isinstance(v, list) and v and all(isinstance(x, LCDocument) for x in v)
            for d in v]


class _Pending:
    def __init__(self, question: str | None) -> None:
        self.question = question
        self.retriever_query: str | None = None
        self.retrievals: list[list[Document]] = []   # outermost retrievers' outputs
        self.steps: list[list[Document]] = []        # documents steps returned (no retriever ran)
        self.tools: list[list[Document]] = []        # tools' results (no retriever ran)
        self.prompts: dict[UUID, str] = {}           # model calls under way
        self.calls: list[ModelCall] = []             # model calls done, in the order they ended


class RAGCapture(BaseCallbackHandler):
    """Collects one sample per top-level run. ``samples`` holds the finished ones, in order;
    ``errors`` counts top-level runs that raised (they are not samples). With
    ``include_generated`` the text the app generated on the way (``sample.generated``) is added to
    the sources, to be judged like them."""

    raise_error = False

    def __init__(self, *, include_generated: bool = False) -> None:
        self.samples: list[Sample] = []
        self.errors = 0
        self.include_generated = include_generated
        # A run whose parent this handler never saw is top-level for the capture: the app was
        # called inside a LangSmith @traceable or langsmith.evaluate, whose run is the parent.
        self._tree = CallTree()
        self._pending: dict[UUID, _Pending] = {}
        self._lock = threading.Lock()
        self._warned = False

    def _enter(self, run_id: UUID, parent_run_id: UUID | None) -> UUID:
        with self._lock:
            return self._tree.enter(run_id, parent_run_id)  # type: ignore[return-value]

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        if EVALUATION_TAG in (kwargs.get("tags") or ()):
            return  # an evaluation traced while capturing: not a run of the app
        root = self._enter(run_id, parent_run_id)
        if root == run_id:
            with self._lock:
                self._pending[root] = _Pending(question_of(inputs))

    def on_retriever_start(self, serialized: dict[str, Any] | None, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        root = self._enter(run_id, parent_run_id)
        with self._lock:
            self._tree.retrievers.add(run_id)
            pending = self._pending.setdefault(root, _Pending(None))
            pending.retriever_query = pending.retriever_query or query

    def on_retriever_end(self, documents: Sequence[LCDocument], *, run_id: UUID,
                         parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            root = self._tree.root.get(run_id, run_id)
            pending = self._pending.get(root)
            if pending is not None and not self._tree.inside_retriever(run_id):
                pending.retrievals.append(as_documents(documents))
            if root == run_id:  # the app is a bare retriever
                self._finish(root, None)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        with self._lock:
            if not self._tree.is_root(run_id):
                pending = self._pending.get(self._tree.root.get(run_id))  # type: ignore[arg-type]
                docs = _step_documents(outputs) if pending is not None else []
                if docs and not self._tree.inside_retriever(run_id):
                    pending.steps.append(as_documents(docs))  # type: ignore[union-attr]
                return
            pending = self._pending.get(run_id)
            if pending is not None and not pending.retrievals and not pending.steps:
                pending.steps.append(_output_contexts(outputs))
            self._finish(run_id, answer_of(outputs))

    def on_chain_error(self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None,
                       **kwargs: Any) -> None:
        if self._tree.is_root(run_id):
            with self._lock:
                self._pending.pop(run_id, None)
                self.errors += 1
                self._tree.forget(run_id)

    # Every start event registers its run, so nested LLM and tool runs resolve to their root too.
    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID,
                            parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        text = "\n".join(_message_text(m) for batch in messages for m in batch)
        self._model_started(run_id, parent_run_id, text)

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        self._model_started(run_id, parent_run_id, "\n".join(prompts))

    def _model_started(self, run_id: UUID, parent_run_id: UUID | None, prompt: str) -> None:
        root = self._enter(run_id, parent_run_id)
        with self._lock:
            pending = self._pending.get(root)
            if pending is not None and root != run_id:
                pending.prompts[run_id] = prompt

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, parent_run_id: UUID | None = None,
                   **kwargs: Any) -> None:
        with self._lock:
            pending = self._pending.get(self._tree.root.get(run_id))  # type: ignore[arg-type]
            prompt = pending.prompts.pop(run_id, None) if pending is not None else None
            if prompt is None:
                return
            gens = response.generations[0] if response.generations else []
            pending.calls.append(ModelCall(prompt, gens[0].text if gens else ""))  # type: ignore[union-attr]

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        # an agent's retriever tool: the retriever inside it belongs to the agent's run
        self._enter(run_id, parent_run_id)

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                    **kwargs: Any) -> None:
        # a tool that searches without a LangChain retriever: its result is what the agent saw
        with self._lock:
            pending = self._pending.get(self._tree.root.get(run_id))  # type: ignore[arg-type]
            if pending is None or output is None or self._tree.inside_retriever(run_id):
                return
            # a tool with response_format="content_and_artifact" hands its documents on as the artifact
            artifact = _step_documents(getattr(output, "artifact", None))
            text = message_text(output)
            if artifact or text:
                pending.tools.append(as_documents(artifact or text))

    def _finish(self, root: UUID, answer: str | None) -> None:
        pending = self._pending.pop(root, None)
        if pending is not None:
            sample = captured_sample(str(root), pending.question or pending.retriever_query, answer,
                                     pending.retrievals or pending.steps + pending.tools, pending.calls,
                                     include_generated=self.include_generated)
            self.samples.append(sample)
            warn_once(self, sample)
        self._tree.forget(root)

    def clear(self) -> None:
        with self._lock:
            self.samples.clear()
            self.errors = 0


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
