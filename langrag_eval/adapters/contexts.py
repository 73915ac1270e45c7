"""What reached the answer's prompt: the contexts a capture keeps, chosen among the documents its
retrievals returned by what the final generating call's prompt held (:func:`select_contexts`).

Reading apps' values as documents and text is :func:`~langrag_eval.types.as_documents` and
:func:`~langrag_eval.types.as_text`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..types import Document

__all__ = ["CaptureWarning", "ModelCall", "Selection", "normalise", "select_contexts"]


# ---------------------------------------------------------------- what reached the answer's prompt

_CARRIED_MIN = 20  # an earlier reply shorter than this ("yes", "no") is not taken as carried over


def normalise(text: str) -> str:
    """Text compared for containment: case folded, every run of whitespace one space."""
    return " ".join(text.casefold().split())


class CaptureWarning(UserWarning):
    """A captured sample whose contexts the app's shape left open (see ``capture_note``)."""


@dataclass(frozen=True)
class ModelCall:
    """One model call an app made: its whole input as text (every message) and its reply."""

    prompt: str
    output: str


@dataclass(frozen=True)
class Selection:
    """What :func:`select_contexts` found: the documents that reached the answer's prompt, the text
    the app generated on the way that reached it too, and a note when the shape left it open."""

    contexts: list[Document]
    generated: list[str]
    note: str | None = None


def _final_call(calls: Sequence[ModelCall], answer: str | None) -> tuple[int, str | None]:
    want = normalise(answer or "")
    for i in range(len(calls) - 1, -1, -1):
        got = normalise(calls[i].output)
        if want and got and (got == want or got in want or want in got):
            return i, None
    for i in range(len(calls) - 1, -1, -1):
        if calls[i].output.strip():
            return i, ("the answer is no model call's reply: contexts are read from the prompt of "
                       "the last model call that replied")
    return len(calls) - 1, "no model call replied with text: contexts are read from the last call's prompt"


def _unique(docs: Iterable[Document]) -> list[Document]:
    seen: dict[str, Document] = {}
    for d in docs:
        seen.setdefault(normalise(d.text), d)
    return list(seen.values())


def select_contexts(retrievals: Sequence[Sequence[Document]], calls: Sequence[ModelCall],
                    answer: str | None, *, stated: Sequence[Document] | None = None) -> Selection:
    """The capture rule: a sample's contexts are the documents whose text reached the prompt of the
    model call that produced the answer. ``retrievals`` are the outermost retrievers' outputs, in
    order; ``calls`` the app's model calls, in the order they ended; ``stated`` the documents the
    app's result says it answered from (a LlamaIndex response's ``source_nodes``), which then
    replace the retrievals as candidates.

    The answering call is the last whose reply is the answer. Its prompt reached the answer, and so
    did the prompt of every earlier call whose reply (at least 20 characters) appears in a prompt
    that reached it: a sub-question's answer carries the documents it was written from. Those
    replies are ``generated``, kept apart from the documents. A stated document that no retriever
    returned and that holds a model's reply is generated text too (a "Sub question / Response"
    node). Without model calls the candidates are the contexts, and a note says so when there were
    several retrievals.

    >>> docs = [Document(id="a", text="Paris is in France."), Document(id="b", text="Rome is in Italy.")]
    >>> s = select_contexts([docs], [ModelCall("Context: Rome is in  Italy. Q: Rome?", "Italy.")], "Italy.")
    >>> [d.id for d in s.contexts], s.generated, s.note
    (['b'], [], None)
    """
    retrieved = _unique(d for r in retrievals for d in r)
    pool = _unique(stated) if stated is not None else retrieved
    if not calls:
        note = None
        if stated is None and len(retrievals) > 1:
            note = (f"no model call was seen: the contexts are the documents of all {len(retrievals)} "
                    "retrievals, not only those a prompt held")
        return Selection(pool, [], note)
    final, note = _final_call(calls, answer)
    reached = [normalise(calls[final].prompt)]
    generated: list[str] = []
    for call in reversed(calls[:final]):  # latest first: a reply reaches a later prompt
        out = normalise(call.output)
        if len(out) >= _CARRIED_MIN and any(out in p for p in reached):
            reached.append(normalise(call.prompt))
            generated.append(call.output.strip())
    generated = list(dict.fromkeys(reversed(generated)))  # a reply seen twice (chat and completion events)
    from_retrieval = {normalise(d.text) for d in retrieved}
    replies = [normalise(c.output) for c in calls[:final] if len(normalise(c.output)) >= _CARRIED_MIN]
    contexts = []
    for d in pool:
        text = normalise(d.text)
        if stated is not None and text not in from_retrieval and any(r in text for r in replies):
            continue  # text the app wrote itself, listed among its sources
        if any(text in p for p in reached):
            contexts.append(d)
    if pool and not contexts and note is None:
        note = (f"none of the {len(pool)} retrieved documents appears in the prompt of the model call "
                "that answered: the app answered without them or rewrote them, so the contexts are empty")
    return Selection(contexts, generated, note)
