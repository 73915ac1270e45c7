"""One capture's bookkeeping, free of any framework, and what a tournament needs to call an app once
per query. A capture adapter hands a :class:`CallRecorder` its framework's runs or spans and
events as plain values; the recorder keeps, per top-level app call, the question, the outermost
retrievals, the documents steps and tools returned, every model call and what the call returned,
and makes one sample of each finished call with the one context rule
(:func:`~langrag_eval.adapters.capturing.captured_sample`); an agent's run reads as an app's reply
(:func:`agent_output`, :func:`agent_response`). Thread-safe: one recorder may hear calls made in
several threads.

Spans (LlamaIndex's instrumentation) enter and exit, and report retrievals and model calls:

>>> from langrag_eval.adapters.capturing import read_result
>>> rec = CallRecorder(adopt=True, read=read_result)
>>> rec.enter("app", None, question="Capital?"); rec.enter("llm", "app")
>>> rec.model_called("llm", ModelCall("Paris is the capital of France. Capital?", "Paris."))
>>> rec.exit("llm", None); rec.exit("app", "Paris.")
>>> [(s.question, s.answer) for s in rec.samples]
[('Capital?', 'Paris.')]

Callback events (LangChain's) are the same bookkeeping under the events' names:

>>> book = CallRecorder()
>>> book.chain_start("app", None, {"question": "Capital?"})
>>> book.retriever_start("r", "app", "Capital?"); book.retriever_end("r", ["Paris is the capital."])
>>> book.model_start("m", "app", "Context: Paris is the capital. Question: Capital?"); book.model_end("m", "Paris.")
>>> book.chain_end("app", {"answer": "Paris."})
>>> s = book.samples[0]; s.question, s.answer, [d.text for d in s.contexts]
('Capital?', 'Paris.', ['Paris is the capital.'])
"""

from __future__ import annotations

import threading
from dataclasses import replace
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from .adapting import ANSWER_KEYS, CONTEXT_KEYS, QUESTION_KEYS, answer_of, message_text, pick, question_of
from .capturing import CallTree, Turn, result_documents, result_text, turn_sample, warn_once
from .contexts import ModelCall
from .passages import split_passages
from ..errors import ConfigError
from ..results import Unscored
from ..types import AgentAnswer, Document, Sample, as_documents, as_text

if TYPE_CHECKING:
    from ..pipelines import Agent

__all__ = ["EVALUATION_TAG", "CallRecorder", "ModelCall", "agent_output", "agent_response", "app_input", "app_reply",
           "call_config", "prompt_text", "read_agent_input", "read_outputs", "runnable_fix", "session_config",
           "step_documents"]

EVALUATION_TAG = "langrag:evaluation"  # the tag of an evaluation's own traced run: a capture takes it for no app

_active: ContextVar[CallRecorder | None] = ContextVar("langrag_active_capture", default=None)


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


def read_outputs(turn: Turn, outputs: Any) -> None:
    """A callback run's outputs as its call's answer (:func:`~langrag_eval.adapters.adapting.answer_of`) and,
    when no retriever or step gave documents, the contexts the output names (a LangGraph state's
    ``context``, an LCEL dict's)."""
    if not turn.retrieved and not turn.steps and isinstance(outputs, Mapping):
        key = next((k for k in CONTEXT_KEYS if outputs.get(k)), None)
        try:
            turn.steps.append(as_documents(outputs[key], field=f"output {key!r}") if key else [])
        except ConfigError:
            turn.steps.append([])
    turn.formatting = hasattr(outputs, "to_messages")  # a prompt template's value: input for a later call
    turn.answer, turn.done = answer_of(outputs), True


class CallRecorder:
    """One sample per finished top-level call (``samples``, in the order the calls ended; a
    streamed answer is read when the samples are); ``errors`` counts the top-level calls that
    failed (they are no sample). ``read(turn, result)`` reads a call's answer from what it returned
    (:func:`read_outputs`, the default, or :func:`~langrag_eval.adapters.capturing.read_result`). A run
    whose parent was never seen is top-level (``adopt=False``: an app called inside a LangSmith
    ``@traceable``) or belongs to that parent (``adopt=True``: LlamaIndex's spans).

    The contexts are the documents the outermost retrievers returned (a retriever inside another
    one, as in an ensemble, multi-query or compression retriever, is left to its wrapper) whose
    text reached the prompt of the model call that produced the answer
    (:func:`~langrag_eval.adapters.contexts.select_contexts`). A call that runs no retriever gives the
    documents its steps or tools return, else those its output names. ``include_generated`` adds
    the text the app generated on the way (``sample.generated``) to the sources; ``capture_note``
    (with one :class:`~langrag_eval.adapters.contexts.CaptureWarning` per capture) says when the shape left
    the contexts open. ``watched`` is True once spans reach it."""

    def __init__(self, *, include_generated: bool = False, adopt: bool = False,
                 read: Callable[[Turn, Any], None] = read_outputs) -> None:
        self.include_generated, self.errors, self.watched, self._local = include_generated, 0, False, False
        self._read = read
        self._lock = threading.RLock()
        self._turns: list[Turn] = []
        self._open: dict[Hashable, Turn] = {}
        self._tree = CallTree(adopt=adopt)
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

    # ------------------------------------------------------------------ spans

    def enter(self, span: Hashable, parent: Hashable | None, *, question: str | None = None,
              app: bool = True, synthesis: bool = False) -> None:
        """A span starts under ``parent``; a top-level one that is an ``app`` call opens a call. An
        ``app`` call inside one (a sub-question's query engine) and a ``synthesis`` (the calls
        that write one answer from several prompts) are the structure a model call's reply is
        linked by (:class:`~langrag_eval.adapters.contexts.ModelCall`)."""
        if self._elsewhere():
            return
        with self._lock:
            self.watched = True
            root = self._tree.enter(span, parent)
            if root == span and app:
                self._open[span] = Turn(id=str(span), question=question)
            elif (turn := self._open.get(root)) is not None:
                if app and question:
                    turn.asked[span] = question
                if synthesis:
                    turn.syntheses.add(span)

    def exit(self, span: Hashable, result: Any, *, failed: bool = False) -> None:
        """A span ends; a top-level call's ``result`` gives its answer (a failed call is no sample)."""
        if self._elsewhere():
            return
        with self._lock:
            if not self._tree.is_root(span):
                return  # a span inside a call: forgotten with its root
            turn = self._open.pop(span, None)
            if turn is None or failed:
                self.errors += int(turn is not None)  # a failed call's, not an unwatched span's
                self._tree.forget(span)
                return
            self._turns.append(turn)
        self._read(turn, result)
        if turn.done and turn.stream is None:  # a stream's model call ends when it is read
            with self._lock:
                self._tree.forget(span)
            self._sample(turn, self.include_generated)  # its capture note is told as the call ends

    def finished(self, ident: str, question: str | None, result: Any) -> None:
        """A whole call reported at once, with no spans (a query engine's end event)."""
        turn = Turn(id=ident, question=question)
        with self._lock:
            self._turns.append(turn)
        self._read(turn, result)

    def retriever(self, span: Hashable) -> None:
        """``span`` is a retriever's: retrievals inside it are left to it."""
        with self._lock:
            self._tree.retrievers.add(span)

    def _turn_of(self, span: Hashable | None) -> Turn | None:
        root = self._tree.root.get(span)  # type: ignore[arg-type]
        if root is None:
            return None
        return self._open.get(root) or next((t for t in self._turns if t.id == str(root)), None)

    def call_of(self, run: Hashable | None) -> str | None:
        """The id of the top-level call ``run`` belongs to (its sample's), None when it is in none."""
        root = self._tree.root.get(run)  # type: ignore[arg-type]  # one dict read: no lock needed
        return None if root is None else str(root)

    def retrieved(self, span: Hashable | None, documents: Any) -> None:
        """A retriever in ``span`` returned ``documents``; kept when it is an outermost one."""
        with self._lock:
            turn = self._turn_of(span)
            if turn is not None and not self._tree.inside_retriever(span):
                turn.retrieved.append(as_documents(documents))

    def model_called(self, span: Hashable | None, call: ModelCall) -> None:
        with self._lock:
            if (turn := self._turn_of(span)) is None:
                return
            question, group, at = None, None, span
            while at is not None:  # the nearest app call and synthesis the call was made in
                question = question or turn.asked.get(at)
                group = group if group is not None or at not in turn.syntheses else at
                at = self._tree.parent.get(at)
            turn.calls.append(replace(call, question=question, group=group))

    # ------------------------------------------------------------------ callback events

    def chain_start(self, run: Hashable, parent: Hashable | None, inputs: Any, tags: Any = ()) -> None:
        if EVALUATION_TAG not in (tags or ()):  # an evaluation traced while capturing is no app
            # a chain inside the app's call is a step, not an app call of its own: its question (a
            # grader's, asked the user's question) links no reply to the answer
            self.enter(run, parent, question=question_of(inputs), app=parent is None or parent not in self._tree.root)

    def chain_end(self, run: Hashable, outputs: Any) -> None:
        with self._lock:
            if not self._tree.is_root(run):  # a step: the documents it hands on
                turn, docs = self._turn_of(run), step_documents(outputs)
                if turn is not None and docs and not self._tree.inside_retriever(run):
                    turn.steps.append(as_documents(docs))
                return
        self.exit(run, outputs)

    def chain_error(self, run: Hashable) -> None:
        self.exit(run, None, failed=True)

    def retriever_start(self, run: Hashable, parent: Hashable | None, query: str) -> None:
        with self._lock:
            root = self._tree.enter(run, parent)
            turn = self._open.setdefault(root, Turn(id=str(root), question=None)) if root == run else \
                self._turn_of(run)
            self._tree.retrievers.add(run)
            if turn is not None:
                turn.retriever_query = turn.retriever_query or query

    def retriever_end(self, run: Hashable, documents: Any) -> None:
        self.retrieved(run, documents)
        if self._tree.root.get(run, run) == run:  # the app is a bare retriever
            self.exit(run, None)

    def model_start(self, run: Hashable, parent: Hashable | None, prompt: str, *, question: str | None = None,
                    tags: Any = ()) -> None:
        """A model call starts; one the app makes itself, under no run at all (``messages =
        prompt.invoke(...)``, then ``llm.invoke(messages)``), is a call of the app's, asked
        ``question``."""
        if parent is None and EVALUATION_TAG in (tags or ()):
            return  # a judge's call while capturing
        with self._lock:
            root = self._tree.enter(run, parent)
            if parent is None:  # its messages are the whole prompt: the question a retrieval it used was asked wins
                self._open[run] = Turn(id=str(run), question=None, prompt_question=question)
            if (turn := self._open.get(root)) is not None:
                turn.prompts[run] = prompt

    def model_end(self, run: Hashable, reply: str) -> None:
        with self._lock:
            turn = self._turn_of(run)
            if turn is not None and (prompt := turn.prompts.pop(run, None)) is not None:
                turn.calls.append(ModelCall(prompt, reply))
        if turn is not None and turn.id == str(run):
            self.exit(run, reply)

    def tool_start(self, run: Hashable, parent: Hashable | None) -> None:
        with self._lock:  # an agent's retriever tool: the retriever inside it belongs to the agent's run
            self._tree.enter(run, parent)

    def tool_end(self, run: Hashable, output: Any) -> None:
        """A tool that searches without a retriever: its result is what the agent saw (the
        documents of a ``content_and_artifact`` tool's artifact, else its text)."""
        with self._lock:
            turn = self._turn_of(run)
            if turn is None or output is None or self._tree.inside_retriever(run):
                return
            artifact, text = step_documents(getattr(output, "artifact", None)), message_text(output)
            if artifact:
                turn.tools.append(as_documents(artifact))
            elif text:  # the search results as one text: split back into its documents
                turn.tools.append(split_passages(text))
                turn.split = turn.split or len(turn.tools[-1]) > 1

    # ------------------------------------------------------------------ samples

    def _sample(self, t: Turn, include_generated: bool) -> Sample:
        if include_generated in t.samples:
            return t.samples[include_generated]
        with self._lock:
            sample = turn_sample(t, self._turns[:self._turns.index(t)] if t in self._turns else [], include_generated)
        warn_once(self, sample)
        if t.stream is None or getattr(t.stream, "is_done", True):  # an unread stream's answer is to come
            t.samples[include_generated] = sample
        return sample

    def collected(self, include_generated: bool | None = None) -> list[Sample]:
        """The finished calls' samples (``include_generated``: default the recorder's)."""
        with self._lock:
            turns = [t for t in self._turns if t.done]
        generated = self.include_generated if include_generated is None else include_generated
        samples = [(t, self._sample(t, generated)) for t in turns]
        # a retrieval lent to a later answer is in that answer's sample; a prompt template called
        # alone only formats a later call's input
        return [s for t, s in samples if t.taken_by is None and not (t.formatting and not t.calls and not s.contexts)]

    samples = property(collected)

    def clear(self) -> None:
        with self._lock:
            self._turns.clear()
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
        return ("pass run_config=lambda name, qid: {'configurable': {...}} with the keys the runnable needs "
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


def app_reply(out: Any, samples: Sequence[Sample], answer_key: str | None = None,
              context_key: str | None = None) -> tuple[str | None, list[Document]]:
    """An app call's answer and contexts: read from its output dict under ``answer_key`` /
    ``context_key`` when one is given, else the call's last captured sample's, else read from what
    it returned (a response's text and source nodes; nothing from a dict)."""
    if answer_key or context_key:
        if not isinstance(out, Mapping):
            return as_text(out, strict=False), []
        return (as_text(pick(out, answer_key, ANSWER_KEYS, sole=False), strict=False),
                as_documents(pick(out, context_key, CONTEXT_KEYS, sole=False)))
    if samples:
        return samples[-1].answer, as_documents(samples[-1].contexts)
    if isinstance(out, Mapping):
        return None, []
    return result_text(out), result_documents(out) or []


def agent_response(agent: str, query: str, result: AgentAnswer | Unscored
                   ) -> tuple[str | None, Sequence[Document], dict[str, Any]]:
    """What an agent's run gives a framework's response: the answer (None when it could not be
    produced), the passages it was generated from, and metadata (the agent, the query, a Fusion
    agent's variations, or the ``error``)."""
    meta: dict[str, Any] = {"agent": agent, "query": query}
    if isinstance(result, Unscored):
        return None, [], {**meta, "error": f"{result.cause}: {result.reason}"}
    return result.answer, result.contexts, {**meta, "variations": list(result.variations)}


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
    answer, contexts, meta = agent_response(agent.name, question, await agent.arun(question, qid=qid))
    return {"question": question, "answer": answer, "context": list(contexts), "agent": agent.name,
            "variations": meta.get("variations", []), "qid": qid, "error": meta.get("error")}
