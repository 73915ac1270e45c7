"""An app's runs as a callback framework reports them (LangChain's callbacks), free of the
framework: the bookkeeping of a capture (:class:`RunBook`), and what a tournament needs to call an
app once per query (:func:`session_config`, :func:`call_config`, :func:`app_reply`) or to expose
an agent as an app (:func:`agent_output`).

A callback adapter translates each event's framework types into plain values (the question, the
documents, a model call's prompt and reply text) and calls the book's method of the same event; the
book keeps one pending call per top-level run and, when it ends, the sample it becomes
(:func:`~langrag_eval.capturing.captured_sample`).

>>> book = RunBook()
>>> book.chain_start("app", None, {"question": "Capital?"})
>>> book.retriever_start("r", "app", "Capital?"); book.retriever_end("r", ["Paris is the capital."])
>>> book.model_start("m", "app", "Context: Paris is the capital. Question: Capital?"); book.model_end("m", "Paris.")
>>> book.chain_end("app", {"answer": "Paris."})
>>> s = book.samples[0]; s.question, s.answer, [d.text for d in s.contexts]
('Capital?', 'Paris.', ['Paris is the capital.'])
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .adapting import ANSWER_KEYS, CONTEXT_KEYS, QUESTION_KEYS, answer_of, message_text, pick, question_of
from .capturing import CallTree, captured_sample, warn_once
from .contexts import ModelCall, as_documents, as_text
from .errors import ConfigError
from .pipelines import Agent, AgentAnswer
from .types import Document, Sample

__all__ = ["EVALUATION_TAG", "RunBook", "agent_output", "app_input", "app_reply", "call_config", "prompt_text",
           "read_agent_input", "runnable_fix", "session_config", "step_documents"]

EVALUATION_TAG = "langrag:evaluation"  # the tag of an evaluation's own traced run: a capture takes it for no app


def step_documents(outputs: Any) -> list[Any]:
    """Documents a step hands on (a graph node's state update, a lambda returning documents): the
    lists of documents (objects with ``page_content``) among its values."""
    values = outputs.values() if isinstance(outputs, Mapping) else [outputs]
    return [d for v in values if isinstance(v, list) and v and all(hasattr(x, "page_content") for x in v) for d in v]


def prompt_text(messages: Iterable[Any]) -> str:
    """The text a chat model call was given: each message's text and the tool calls it makes."""
    return "\n".join((message_text(m) or "") + "".join(f"\n{c.get('name')}({c.get('args')})" for c in
                                                        getattr(m, "tool_calls", None) or [] if isinstance(c, Mapping))
                     for m in messages)


def _output_contexts(outputs: Any) -> list[Document]:
    """Contexts an app returns in its output (a LangGraph state's ``context``, an LCEL dict)."""
    if isinstance(outputs, Mapping):
        for k in CONTEXT_KEYS:
            if outputs.get(k):
                try:
                    return as_documents(outputs[k], field=f"output {k!r}")
                except ConfigError:
                    return []
    return []


@dataclass
class _Pending:
    question: str | None
    retriever_query: str | None = None
    retrievals: list[list[Document]] = field(default_factory=list)  # outermost retrievers' outputs
    steps: list[list[Document]] = field(default_factory=list)       # documents steps returned (no retriever ran)
    tools: list[list[Document]] = field(default_factory=list)       # tools' results (no retriever ran)
    prompts: dict[Hashable, str] = field(default_factory=dict)      # model calls under way
    calls: list[ModelCall] = field(default_factory=list)            # model calls done, in the order they ended


class RunBook:
    """One sample per top-level run: ``samples`` holds the finished ones, in order; ``errors``
    counts top-level runs that raised (they are not samples). A run whose parent the book never saw
    is top-level (the app was called inside a LangSmith ``@traceable`` or ``langsmith.evaluate``,
    whose run is the parent). Safe to share between threads.

    The question is the run's input, the answer its output (strings, dicts, chat messages or a
    ``{"messages": [...]}`` state, where they are the last user message and the last assistant
    message that calls no tool). The contexts are the documents the outermost retrievers returned
    (a retriever inside another one, as in an ensemble, multi-query or compression retriever, is
    left to its wrapper) whose text reached the prompt of the model call that produced the answer
    (:func:`~langrag_eval.contexts.select_contexts`); documents retrieved then dropped do not
    count. An app that runs no retriever gives the documents its steps or tools return, else those
    its output names. Text the app generated on the way goes to ``generated`` (added to the sources
    with ``include_generated``), and ``capture_note`` (with one
    :class:`~langrag_eval.contexts.CaptureWarning` per capture) says when the shape left the
    contexts open."""

    def __init__(self, *, include_generated: bool = False) -> None:
        self.samples: list[Sample] = []
        self.errors = 0
        self.include_generated = include_generated
        self._tree = CallTree()
        self._pending: dict[Hashable, _Pending] = {}
        self._lock = threading.RLock()
        self._warned = False

    def _of(self, run: Hashable) -> _Pending | None:
        return self._pending.get(self._tree.root.get(run))  # type: ignore[arg-type]

    def chain_start(self, run: Hashable, parent: Hashable | None, inputs: Any, tags: Any = ()) -> None:
        if EVALUATION_TAG in (tags or ()):
            return  # an evaluation traced while capturing
        with self._lock:
            if self._tree.enter(run, parent) == run:
                self._pending[run] = _Pending(question_of(inputs))

    def retriever_start(self, run: Hashable, parent: Hashable | None, query: str) -> None:
        with self._lock:
            pending = self._pending.setdefault(self._tree.enter(run, parent), _Pending(None))
            self._tree.retrievers.add(run)
            pending.retriever_query = pending.retriever_query or query

    def retriever_end(self, run: Hashable, documents: Any) -> None:
        with self._lock:
            pending = self._of(run)
            if pending is not None and not self._tree.inside_retriever(run):
                pending.retrievals.append(as_documents(documents))
            if self._tree.root.get(run, run) == run:  # the app is a bare retriever
                self._finish(run, None)

    def chain_end(self, run: Hashable, outputs: Any) -> None:
        with self._lock:
            pending = self._of(run)
            if not self._tree.is_root(run):
                docs = step_documents(outputs) if pending is not None else []
                if docs and not self._tree.inside_retriever(run):
                    pending.steps.append(as_documents(docs))  # type: ignore[union-attr]
                return
            if pending is not None and not pending.retrievals and not pending.steps:
                pending.steps.append(_output_contexts(outputs))
            self._finish(run, answer_of(outputs))

    def chain_error(self, run: Hashable) -> None:
        with self._lock:
            if self._tree.is_root(run):
                self._pending.pop(run, None)
                self.errors += 1
                self._tree.forget(run)

    def model_start(self, run: Hashable, parent: Hashable | None, prompt: str) -> None:
        with self._lock:
            root = self._tree.enter(run, parent)
            if (pending := self._pending.get(root)) is not None and root != run:
                pending.prompts[run] = prompt

    def model_end(self, run: Hashable, reply: str) -> None:
        with self._lock:
            pending = self._of(run)
            prompt = pending.prompts.pop(run, None) if pending is not None else None
            if prompt is not None:
                pending.calls.append(ModelCall(prompt, reply))  # type: ignore[union-attr]

    def tool_start(self, run: Hashable, parent: Hashable | None) -> None:
        with self._lock:  # an agent's retriever tool: the retriever inside it belongs to the agent's run
            self._tree.enter(run, parent)

    def tool_end(self, run: Hashable, output: Any) -> None:
        """A tool that searches without a retriever: its result is what the agent saw (the
        documents of a ``content_and_artifact`` tool's artifact, else its text)."""
        with self._lock:
            pending = self._of(run)
            if pending is None or output is None or self._tree.inside_retriever(run):
                return
            artifact = step_documents(getattr(output, "artifact", None))
            text = message_text(output)
            if artifact or text:
                pending.tools.append(as_documents(artifact or text))

    def _finish(self, root: Hashable, answer: str | None) -> None:
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


def session_config(name: str, qid: str) -> dict[str, Any]:
    """The config a tournament gives each call by default: a conversation of its own per variant
    and query (``thread_id`` for a LangGraph checkpointer, ``session_id`` for
    ``RunnableWithMessageHistory``), so no history leaks between queries or variants."""
    session = f"langrag:{name}:{qid}"
    return {"configurable": {"thread_id": session, "session_id": session}}


def call_config(name: str, qid: str, own: Callable[[str, str], Mapping[str, Any]] | None) -> dict[str, Any]:
    """:func:`session_config` with ``own(name, qid)`` added (its ``configurable`` keys win)."""
    config = session_config(name, qid)
    if own is None:
        return config
    mine = dict(own(name, qid))
    return {**mine, "configurable": {**config["configurable"], **(mine.get("configurable") or {})}}


def runnable_fix(name: str, exc: BaseException) -> str:
    """What to try when an app fails on its first question."""
    text = str(exc)
    if "Missing keys" in text or "configurable" in text or "thread_id" in text or "checkpointer" in text:
        return ("pass config=lambda name, qid: {'configurable': {...}} with the keys the runnable needs "
                "(each call gets thread_id and session_id by default)")
    return ("pass input=lambda question: ... to build the runnable's input from the question (by default it "
            "is read from the input schema), or answer_key= / context_key= to read its output")


def app_input(app: Any, query: str) -> Any:
    """What a runnable ``app`` takes for a question, read from its input schema: a ``{"messages":
    [...]}`` state for agents and message graphs, ``{"question": q}`` (or query / input) for a graph
    or chain that declares that key, else the question itself."""
    try:
        props = (app.get_input_jsonschema() or {}).get("properties") or {}
    except Exception:  # noqa: BLE001 - pydantic cannot build it (a TypedDict state with string
        # annotations, say): a LangGraph graph still names its state keys
        schema = getattr(getattr(app, "builder", None), "input_schema", None)
        props = dict(getattr(schema, "__annotations__", None) or {})
    if "messages" in props:
        return {"messages": [{"role": "user", "content": query}]}
    return next(({key: query} for key in QUESTION_KEYS if key in props), query)


def app_reply(out: Any, sample: Sample | None, answer_key: str | None = None,
              context_key: str | None = None) -> tuple[str | None, list[Document]]:
    """An app call's answer and contexts: read from its output dict under ``answer_key`` /
    ``context_key`` when one is given, else the captured ``sample``'s, else a bare output's text."""
    if answer_key or context_key:
        if not isinstance(out, Mapping):
            return as_text(out, strict=False), []
        return (as_text(pick(out, answer_key, ANSWER_KEYS, sole=False), strict=False),
                as_documents(pick(out, context_key, CONTEXT_KEYS, sole=False)))
    if sample is None:
        return (None if isinstance(out, Mapping) else as_text(out, strict=False)), []
    return sample.answer, as_documents(sample.contexts)


def read_agent_input(value: Any) -> tuple[str, str | None]:
    """``(question, qid)`` from a question string or a dict with a question / query / input string
    and an optional ``qid``."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict):
        for key in QUESTION_KEYS:
            if isinstance(value.get(key), str):
                return value[key], None if value.get("qid") is None else str(value["qid"])
    raise ConfigError("an agent runnable takes a question string or a dict with a 'question' or "
                      f"'query' string, got {type(value).__name__}")


async def agent_output(agent: Agent, value: Any) -> dict[str, Any]:
    """One agent's answer to ``value`` (:func:`read_agent_input`) as the dict LCEL RAG chains expose:
    question, answer, ``context`` (the documents the answer came from, best first), agent,
    variations, qid and error (answer None and the reason when there is no answer; never raises)."""
    question, qid = read_agent_input(value)
    result = await agent.arun(question, qid=qid)
    out: dict[str, Any] = {"question": question, "answer": None, "context": [], "agent": agent.name,
                           "variations": [], "qid": qid, "error": None}
    if isinstance(result, AgentAnswer):
        return {**out, "answer": result.answer, "context": list(result.contexts), "variations": list(result.variations)}
    return {**out, "error": f"{result.cause}: {result.reason}"}
