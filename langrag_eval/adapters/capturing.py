"""What both frameworks' captures share, free of any framework: the tree of runs (or spans) below
each top-level app call, the sample one finished call becomes, and reading an app call's result
(an answer, a streamed answer, the documents it names) by its shape.

A capture adapter walks its framework's callbacks or instrumentation and records, per top-level
call, the question, the outermost retrievals, every model call (:class:`~langrag_eval.adapters.contexts.ModelCall`)
and the answer; :func:`captured_sample` then applies the one context rule
(:func:`~langrag_eval.adapters.contexts.select_contexts`).

>>> tree = CallTree()
>>> tree.enter("app", None), tree.enter("retriever", "app"), tree.enter("inner", "retriever")
('app', 'app', 'app')
>>> tree.retrievers.add("retriever"); tree.inside_retriever("inner"), tree.inside_retriever("retriever")
(True, False)
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .contexts import CaptureWarning, ModelCall, normalise, select_contexts
from .passages import held_runs
from ..errors import ConfigError
from ..types import Document, Sample, as_documents, as_text

__all__ = ["CallTree", "Turn", "call_question", "captured_sample", "lent", "read_result", "result_documents",
           "result_text", "turn_sample", "warn_once"]


class CallTree:
    """Which top-level call each run belongs to (``root``), its parent, and the retriever runs, so a
    retrieval inside another retriever (an ensemble's, a multi-query one's) is left to its wrapper.
    A run whose parent was never entered is a root itself (``adopt=False``: an app called inside a
    LangSmith ``@traceable``) or belongs to that parent (``adopt=True``: LlamaIndex's spans)."""

    def __init__(self, *, adopt: bool = False) -> None:
        self.root: dict[Hashable, Hashable] = {}
        self.parent: dict[Hashable, Hashable] = {}
        self.retrievers: set[Hashable] = set()
        self.adopt = adopt

    def enter(self, run: Hashable, parent: Hashable | None) -> Hashable:
        """Record ``run`` under ``parent``; its root."""
        root = self.root.get(parent, parent if self.adopt else run) if parent else run
        self.root[run] = root
        if parent and (self.adopt or root != run):
            self.parent[run] = parent
        return root

    def is_root(self, run: Hashable) -> bool:
        return self.root.get(run) == run

    def inside_retriever(self, run: Hashable | None) -> bool:
        """Whether a retriever run is among ``run``'s ancestors."""
        at = self.parent.get(run)
        while at is not None:
            if at in self.retrievers:
                return True
            at = self.parent.get(at)
        return False

    def forget(self, root: Hashable) -> None:
        """Drop every run of the call ``root``."""
        for run in [r for r, top in self.root.items() if top == root]:
            del self.root[run]
            self.parent.pop(run, None)
            self.retrievers.discard(run)


def captured_sample(ident: str, question: str | None, answer: str | None, candidates: Sequence[Sequence[Document]],
                    calls: Sequence[ModelCall], *, stated: Sequence[Document] | None = None,
                    include_generated: bool = False) -> Sample:
    """The sample one finished call becomes: as contexts, the ``candidates`` whose text reached the
    answering model call's prompt (or ``stated``, the sources the result names); the text the app
    generated on the way in ``generated`` (added to the sources with ``include_generated``) and,
    when the shape left the contexts open, why in ``capture_note``."""
    chosen = select_contexts(candidates, calls, answer, stated=stated)
    sources = list(chosen.contexts) + (as_documents(chosen.generated) if include_generated else [])
    return Sample(id=ident, question=question or "", answer=answer, contexts=sources,
                  generated=chosen.generated, capture_note=chosen.note)


def lent(turn: Turn, before: Sequence[Turn]) -> list[Turn]:
    """The earlier calls (``before``) that only retrieved (``docs = retriever.invoke(q)``) and whose
    documents reached ``turn``'s model calls: their retrievals are ``turn``'s, for a sample stands
    for an answer, not for a top-level call."""
    if not turn.calls:
        return []
    prompts = [normalise(c.prompt) for c in turn.calls]
    return [b for b in before if b.done and not b.calls and b.answer is None and b.retrieved
            and b.taken_by in (None, turn.id)
            and any(normalise(d.text) in p or held_runs(d.text, p) for r in b.retrieved for d in r for p in prompts)]


_SPLIT = ("a tool returned its search results as one text, split here into passages at its blank lines or "
          "record fields; their ids are the ids the text names, else digests of their text")


def turn_sample(turn: Turn, before: Sequence[Turn], include_generated: bool) -> Sample:
    """The sample of one finished call, with the retrievals of the calls ``before`` it that its
    answer used (:func:`lent`, marked as taken)."""
    borrowed = lent(turn, before)
    for b in borrowed:
        b.taken_by = turn.id
    question = turn.question or turn.retriever_query or next((b.retriever_query for b in borrowed
                                                              if b.retriever_query), turn.prompt_question)
    sample = captured_sample(turn.id, question, turn.final_answer(),
                             [r for b in borrowed for r in b.retrieved] + (turn.retrieved or turn.steps + turn.tools),
                             turn.calls, stated=turn.sources, include_generated=include_generated)
    if turn.split and sample.contexts:
        sample = sample.model_copy(update={"capture_note": "; ".join(filter(None, [sample.capture_note, _SPLIT]))})
    return sample


def warn_once(capture: Any, sample: Sample) -> None:
    """One :class:`CaptureWarning` per capture, at its first sample with a ``capture_note``."""
    if sample.capture_note and not getattr(capture, "_warned", False):
        capture._warned = True
        warnings.warn(f"captured sample {sample.id}: {sample.capture_note} (every such sample says so in "
                      "its capture_note)", CaptureWarning, stacklevel=3)


_QUESTION_ARGS = ("str_or_query_bundle", "message", "user_msg", "query_str", "query", "input")
_START_FIELDS = ("user_msg", "query", "input", "question")


def call_question(arguments: Mapping[str, Any]) -> str | None:
    """The question of an app call from its bound arguments: a query engine's query, a chat
    engine's message, an agent's ``user_msg``, a workflow's ``StartEvent`` field or keyword."""
    for name in _QUESTION_ARGS:
        if arguments.get(name) is not None:
            return as_text(arguments[name], strict=False)
    start = arguments.get("start_event")  # a workflow run: the StartEvent holds the user's message
    kwargs = arguments.get("kwargs") or {}
    for source in ([start] if start is not None else []) + [kwargs]:
        for name in _START_FIELDS:
            value = source.get(name) if hasattr(source, "get") else getattr(source, name, None)
            if value is not None:
                return as_text(value, strict=False)
    return None


@dataclass
class Turn:
    """One top-level call being captured: what it was asked, retrieved, asked its models and answered."""

    id: str
    question: str | None
    retrieved: list[list[Document]] = field(default_factory=list)  # outermost retrievals
    steps: list[list[Document]] = field(default_factory=list)      # documents steps returned (no retriever ran)
    tools: list[list[Document]] = field(default_factory=list)      # tools' results (no retriever ran)
    retriever_query: str | None = None  # the question when the app is a bare retriever
    prompt_question: str | None = None  # the last user message, when the app is a bare model call
    prompts: dict[Hashable, str] = field(default_factory=dict)     # model calls under way
    calls: list[ModelCall] = field(default_factory=list)            # model calls done, in the order they ended
    answer: str | None = None
    sources: list[Document] | None = None  # what the result names as its sources
    stream: Any = None            # a chat stream whose text is read once it is done
    done: bool = False
    asked: dict[Hashable, str] = field(default_factory=dict)  # app calls inside this one, by span: their question
    syntheses: set[Hashable] = field(default_factory=set)      # the spans that each write one answer
    formatting: bool = False      # it returned a prompt value: a template called alone
    split: bool = False           # a tool's one-text result was split into passages
    taken_by: str | None = None   # a later call whose answer this call's retrieval reached
    samples: dict[bool, Sample] = field(default_factory=dict)  # the sample, by include_generated, once read

    def final_answer(self) -> str | None:
        if self.stream is not None:
            return self.stream.response if getattr(self.stream, "is_done", True) else None
        return self.answer


def _tool_nodes(call: Any) -> list[Document]:
    raw = getattr(getattr(call, "tool_output", None), "raw_output", None)
    try:
        return as_documents(raw) if isinstance(raw, list) else []
    except ConfigError:
        return []


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
    return as_text(getattr(result, "response", result), strict=False)


def _tee(gen: Iterator[str], turn: Turn) -> Iterator[str]:
    parts: list[str] = []
    for token in gen:
        parts.append(token)
        yield token
    turn.answer, turn.done = "".join(parts), True


async def _atee(gen: Any, turn: Turn) -> Any:
    parts: list[str] = []
    async for token in gen:
        parts.append(token)
        yield token
    turn.answer, turn.done = "".join(parts), True


def read_result(turn: Turn, result: Any) -> None:
    """Answer and sources from what the call returned; a stream is wrapped so that its text is
    kept as the caller reads it. A retriever called alone returns its nodes (recorded as it
    retrieved them), and no answer."""
    if isinstance(result, list):
        turn.done = True
        return
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
