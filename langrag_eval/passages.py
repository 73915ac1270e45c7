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

from .types import Document, read_document

__all__ = ["MIN_WORDS", "held_text", "normalise", "split_passages"]

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


def held_text(text: str, prompt: str, others: Sequence[str] = ()) -> tuple[int, str] | None:
    """Where in ``prompt`` (normalised) the runs of ``text``'s words it holds start, and those runs
    as ``text`` writes them (several joined by " … "); None when it holds no run of
    :data:`MIN_WORDS` words. A run that one of ``others`` (other documents' normalised texts) holds
    too is no evidence for this document (a footer, a chunk overlap) and is left out."""
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    words = [text[a:b].casefold() for a, b in spans]
    runs: list[tuple[int, str]] = []
    i = 0
    while i + MIN_WORDS <= len(words):
        if " ".join(words[i:i + MIN_WORDS]) not in prompt:
            i += 1
            continue
        j = i + MIN_WORDS
        while j < len(words) and " ".join(words[i:j + 1]) in prompt:
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
        runs.append((prompt.find(joined), text[start:end]))
        i = j
    if not runs:
        return None
    return min(at for at, _ in runs), " … ".join(piece for _, piece in runs)


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
