"""What reached the answer's prompt: the contexts a capture keeps, chosen among the documents its
retrievals returned by what the final generating call's prompt held (:func:`select_contexts`).

Reading apps' values as documents and text is :func:`~langrag_eval.types.as_documents` and
:func:`~langrag_eval.types.as_text`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from .passages import held_runs, normalise, pieces_text
from ..types import Document

__all__ = ["CaptureWarning", "ModelCall", "Selection", "normalise", "select_contexts"]


# ---------------------------------------------------------------- what reached the answer's prompt

_CARRIED_MIN = 20  # an earlier reply shorter than this ("yes", "no") is carried over only by structure


class CaptureWarning(UserWarning):
    """A captured sample whose contexts the app's shape left open (see ``capture_note``)."""


@dataclass(frozen=True)
class ModelCall:
    """One model call an app made: its whole input as text (every message) and its reply.
    ``question`` is the question of the app call inside the app that made it (a sub-question's
    query engine), ``group`` the one synthesis it belongs to (a refine or tree-summarize loop):
    the structure that links a reply to the later prompt holding it, however short."""

    prompt: str
    output: str
    question: str | None = None
    group: Hashable | None = None


@dataclass(frozen=True)
class Selection:
    """What :func:`select_contexts` found: the documents that reached the answer's prompt, in the
    order it held them, the text the app generated on the way that reached it too, and a note when
    the shape left it open."""

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


def _carried(call: ModelCall, final: ModelCall, prompt: str, claimed: set[int]) -> int:
    """Where ``prompt`` holds ``call``'s reply (-1: it does not): a long reply anywhere; a short
    one only with the structure that put it there, its sub-question beside it or the same synthesis.
    Calls are asked latest first, so of equal replies (two summaries "Two years.") the later call
    takes the last place not ``claimed`` yet."""
    out = normalise(call.output)
    at, end = -1, len(prompt)
    while out and (found := prompt.rfind(out, 0, end)) >= 0:
        whole = (found == 0 or not prompt[found - 1].isalnum()) and \
            (found + len(out) == len(prompt) or not prompt[found + len(out)].isalnum())
        if found not in claimed and (whole or len(out) >= _CARRIED_MIN):  # "no" is not in "note"
            at = found
            break
        end = found + len(out) - 1
    if at < 0 or len(out) >= _CARRIED_MIN:
        return at
    if call.group is not None and call.group == final.group:
        return at
    return at if call.question and normalise(call.question) in prompt else -1


def _reached(calls: Sequence[ModelCall], final: int) -> tuple[list[tuple[tuple[int, ...], str]], list[str]]:
    """The prompts that reached the answer, each with its place (where the answering prompt, or a
    prompt that reached it, holds its reply), and the replies carried on the way."""
    reached = [((), normalise(calls[final].prompt))]
    claimed: list[set[int]] = [set()]
    generated: list[str] = []
    for call in reversed(calls[:final]):  # latest first: a reply reaches a later prompt
        places = [(key, at, n) for n, (key, p) in enumerate(reached)
                  if (at := _carried(call, calls[final], p, claimed[n])) >= 0]
        if not places:
            continue
        key, at, n = min(places)
        claimed[n].add(at)
        claimed.append(set())
        reached.append(((*key, at), normalise(call.prompt)))
        generated.append(call.output.strip())
    return reached, list(dict.fromkeys(g for g in reversed(generated) if g))


def _place(text: str, reached: list[tuple[tuple[int, ...], str]]) -> tuple[int, ...] | None:
    """Where the reached prompts first hold ``text``; that place is then blanked (its length kept),
    so that a shorter text it holds (an overlapping window, a chunk inside its parent) is placed
    where the prompt holds it on its own, if it does."""
    places = [(*key, p.find(text), n) for n, (key, p) in enumerate(reached) if text in p]
    if not places:
        return None
    *key, at, n = min(places)
    reached[n] = (reached[n][0], reached[n][1][:at] + "\x00" * len(text) + reached[n][1][at + len(text):])
    return (*key, at)


def select_contexts(retrievals: Sequence[Sequence[Document]], calls: Sequence[ModelCall],
                    answer: str | None, *, stated: Sequence[Document] | None = None) -> Selection:
    """The capture rule: a sample's contexts are the documents whose text reached the prompt of the
    model call that produced the answer, in the order that prompt held them. ``retrievals`` are the
    outermost retrievers' outputs, in order; ``calls`` the app's model calls, in the order they
    ended; ``stated`` the documents the app's result says it answered from (a LlamaIndex
    response's ``source_nodes``), which then replace the retrievals as candidates.

    The answering call is the last whose reply is the answer. Its prompt reached the answer, and so
    did the prompt of every earlier call whose reply appears in a prompt that reached it: a reply of
    at least 20 characters anywhere, a shorter one beside the sub-question it answers or within the
    same synthesis (``ModelCall.question`` / ``group``). A sub-question's answer carries the
    documents it was written from, in the place the answering prompt held it. Those replies are
    ``generated``, kept apart from the documents. A stated document that no retriever returned and
    that holds a carried reply is generated text too (a "Sub question / Response" node).

    A document the prompt holds only in part (cut to a prefix, a window of it, wrapped in a
    template) keeps its id with the text the prompt held (:func:`~langrag_eval.adapters.passages.held_text`),
    and the note says so. Without model calls the candidates are the contexts, and a note says so
    when there were several retrievals.

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
    reached, generated = _reached(calls, final)
    from_retrieval = {normalise(d.text) for d in retrieved}
    replies = [normalise(g) for g in generated]
    found: list[tuple[tuple[int, ...], int, Document]] = []
    rest: list[Document] = []
    blanked = list(reached)
    for n, d in sorted(enumerate(pool), key=lambda nd: -len(nd[1].text)):  # longest first: see _place
        text = normalise(d.text)
        if stated is not None and text not in from_retrieval and any(r in text for r in replies):
            continue  # text the app wrote itself, listed among its sources
        if (at := _place(text, blanked) or _place(text, list(reached))) is not None:
            found.append((at, n, d))
        else:
            rest.append(d)
    rest.sort(key=pool.index)
    parts = _rewritten(rest, [d for _, _, d in found], reached)
    found += [(at, len(pool) + n, d) for n, (at, d) in enumerate(parts)]
    contexts = [d for _, _, d in sorted(found, key=lambda f: (f[0], f[1]))]
    rewritten = [d for _, d in parts if d not in pool]  # not those whose parts made up all of them
    if rewritten:
        note = (f"{len(rewritten)} of the {len(contexts)} documents reached the prompt rewritten (cut, "
                "trimmed or re-wrapped): each keeps its id, with the text the prompt held")
    if pool and not contexts and note is None:
        note = (f"none of the {len(pool)} retrieved documents appears in the prompt of the model call "
                "that answered: the app answered without them or rewrote them, so the contexts are empty")
    return Selection(contexts, generated, note)


def _rewritten(rest: Sequence[Document], whole: Sequence[Document], reached: Sequence[tuple[tuple[int, ...], str]]
               ) -> list[tuple[tuple[int, ...], Document]]:
    """The documents ``reached`` prompts hold in parts, each as the parts they hold (all of it
    when the parts cover it: a synthesizer that split a node across its calls). What the documents
    found whole take up is set aside first (chunks that overlap share text), and a document that
    holds more of the prompts is matched before one that holds less."""
    prompts = []
    for key, p in reached:
        for d in whole:
            p = p.replace(normalise(d.text), "\x00" * len(normalise(d.text)))  # places kept
        prompts.append((key, p))
    texts = {id(d): normalise(d.text) for d in [*rest, *whole]}
    others = {id(d): [t for k, t in texts.items() if k != id(d)] for d in rest}

    def runs(d: Document) -> list[tuple[tuple[int, ...], int, int, int]]:
        return [((*key, at), n, a, b) for n, (key, p) in enumerate(prompts)
                for at, a, b in held_runs(d.text, p, others[id(d)])]
    found = sorted(((sum(b - a for *_, a, b in r), d) for d in rest if (r := runs(d))), key=lambda f: -f[0])
    out = []
    for _, d in found:
        held = runs(d)  # again: a document matched before may have taken its words
        if not held:
            continue
        out.append((min(k for k, *_ in held), d.model_copy(update={"text": pieces_text(d.text, [(a, b) for *_, a, b in held])})))
        for _, n, a, b in held:
            part = normalise(d.text[a:b])
            prompts[n] = (prompts[n][0], prompts[n][1].replace(part, "\x00" * len(part)))
    return out
