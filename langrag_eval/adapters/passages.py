"""Retrieved documents found again in a prompt that holds them rewritten, and one text that holds
several documents split back into them. Free of any framework.

An app may hand its model a document cut to a prefix, a window of it or a passage from its middle,
or wrapped in a template (``Source: …\\nContent: …``). :func:`held_text` finds what of a document a
prompt holds: the runs of at least :data:`MIN_WORDS` of its words, in its own order, that the
prompt holds word for word, widened to the characters cut from their edge words.

>>> doc = "The pump carries a warranty of two years from delivery, parts and labour included."
>>> held_text(doc, normalise("Context: " + doc[:60] + "\\nQuestion: how long?"))
(9, 'The pump carries a warranty of two years from delivery, part')

A tool that runs a search itself and returns the results as one text
(``"\\n\\n".join(f"Source: {d.metadata}\\nContent: {d.page_content}" ...)``, as LangChain's RAG
agent tutorial writes it) gives :func:`split_passages` the documents back:

>>> [(d.text, d.metadata) for d in split_passages("Source: {'id': 'a'}\\nContent: One.\\n\\nSource: {}\\nContent: Two.")]
[('One.', {'id': 'a'}), ('Two.', {})]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from ..types import Document, read_document

__all__ = ["MIN_WORDS", "held_runs", "held_text", "normalise", "pieces_text", "split_passages"]

# a run of fewer words than this ("the pump", "two years") is common to many texts: it is no
# evidence that the prompt holds this document
MIN_WORDS = 5
_WORD = re.compile(r"\S+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_FIELD = re.compile(r"^([A-Za-z][\w ]{0,30}):[ \t]*(.*)$")
_TEXT_FIELDS = ("content", "page content", "page_content", "text", "passage", "document", "chunk")


def normalise(text: str) -> str:
    """Text compared for containment: case folded, every run of whitespace one space."""
    return " ".join(text.casefold().split())


def _holds(prompt: str, words: str) -> re.Match[str] | None:
    """Where ``prompt`` holds ``words`` as whole words ("sou" is not in "source")."""
    if words not in prompt:  # the quick answer, most of the time
        return None
    return re.search(r"(?<!\w)" + re.escape(words) + r"(?!\w)", prompt)


def _widen(joined: str, prompt: str, word: str, *, before: bool) -> int:
    """How many characters of ``word`` (the word next to a run) the prompt holds beside the run:
    a document cut mid-word keeps part of its edge word."""
    for k in range(len(word) - 1, 0, -1):
        piece = word[len(word) - k:] if before else word[:k]
        # the cut piece ends the prompt's word there: "deliv" of "delivery", not "q" of "question"
        pattern = r"(?<!\w)" + re.escape(piece + " " + joined) if before else re.escape(joined + " " + piece) + r"(?!\w)"
        if re.search(pattern, prompt):
            return k
    return 0


def held_runs(text: str, prompt: str, others: Sequence[str] = ()) -> list[tuple[int, int, int]]:
    """The runs of at least :data:`MIN_WORDS` of ``text``'s words that ``prompt`` (normalised)
    holds, each as (where the prompt holds it, where ``text`` starts and ends it), its edge words
    widened to the characters the prompt kept of them. A run that one of ``others`` (other
    documents' normalised texts) holds too is no evidence for this document (a footer, a chunk
    overlap) and is left out."""
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    words = [text[a:b].casefold() for a, b in spans]
    runs: list[tuple[int, int, int]] = []
    i = 0
    while i + MIN_WORDS <= len(words):
        if not _holds(prompt, " ".join(words[i:i + MIN_WORDS])):
            i += 1
            continue
        j = i + MIN_WORDS
        while j < len(words) and _holds(prompt, " ".join(words[i:j + 1])):
            j += 1
        joined = " ".join(words[i:j])
        if any(joined in other for other in others):
            i = j
            continue
        start, end = spans[i][0], spans[j - 1][1]
        if i > 0 and (k := _widen(joined, prompt, words[i - 1], before=True)):
            start, joined = spans[i - 1][1] - k, words[i - 1][-k:] + " " + joined
        if j < len(words) and (k := _widen(joined, prompt, words[j], before=False)):
            end, joined = spans[j][0] + k, joined + " " + words[j][:k]
        found = _holds(prompt, joined)
        runs.append((found.start() if found else prompt.find(joined), start, end))
        i = j
    return runs


def pieces_text(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """The parts of ``text`` at ``spans`` (overlapping or touching ones merged), joined by " … ";
    ``text`` itself when they cover all of it."""
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and not text[merged[-1][1]:a].strip():
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    if len(merged) == 1 and not text[:merged[0][0]].strip() and not text[merged[0][1]:].strip():
        return text
    return " … ".join(text[a:b] for a, b in merged)


def held_text(text: str, prompt: str, others: Sequence[str] = ()) -> tuple[int, str] | None:
    """Where ``prompt`` (normalised) first holds runs of ``text``'s words (:func:`held_runs`),
    and those runs as ``text`` writes them; None when it holds none."""
    runs = held_runs(text, prompt, others)
    if not runs:
        return None
    return min(at for at, _, _ in runs), pieces_text(text, [(a, b) for _, a, b in runs])


def _record(block: str) -> Document | None:
    """One templated search result: its text field (and the lines after it), its metadata field
    when that reads as a dict literal, the id the metadata names."""
    lines = block.strip().splitlines()
    meta: dict = {}
    text: str | None = None
    for n, line in enumerate(lines):
        found = _FIELD.match(line)
        if not found:
            continue
        name, value = found.group(1).strip().casefold(), found.group(2)
        if value.startswith("{") and not meta:
            try:
                parsed = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                parsed = None
            meta = parsed if isinstance(parsed, dict) else meta
        elif name in _TEXT_FIELDS and text is None:
            text = "\n".join([value, *lines[n + 1:]]).strip()
    return read_document({"text": text if text is not None else block.strip(), "metadata": meta,
                          "id": meta.get("id")}, "tool result")


def split_passages(text: str) -> list[Document]:
    """The search results one text holds: its blocks between blank lines, a templated block read
    as its fields (:func:`_record`); one document when there is one block."""
    blocks = [b.strip() for b in _BLANK_LINE.split(text) if b.strip()]
    label = _FIELD.match(blocks[0].splitlines()[0]) if blocks else None
    if label:  # records start where the first record's first field does: a text's own blank lines stay in it
        records: list[str] = []
        for b in blocks:
            if b.startswith(label.group(1) + ":") or not records:
                records.append(b)
            else:
                records[-1] += "\n\n" + b
        blocks = records
    if len(blocks) < 2 and not label:
        return [d for d in [read_document(text, "tool result")] if d is not None]
    found = [_record(b) if label else read_document(b, "tool result") for b in blocks]
    return [d for d in found if d is not None]
