"""Splitting source documents into overlapping chunks with stable ids.

Defaults follow the vRAG-Eval test bed: chunks of at most 1,000 characters overlapping by 25 %
(250 characters). A chunk ends at the last paragraph break, line break, sentence end or space in
the second half of its window (a hard cut only when none exists) and the next chunk starts at a
word boundary about ``overlap`` characters earlier, so words are not cut in two.

Chunk ids are ``<source id>#<start offset>:<content digest>``: identical across runs for the same
input, and different when a chunk's text changes. Each chunk keeps its source's metadata plus
``chunk_index``, ``start`` and ``end`` (character offsets in the source text), and ``source`` (the
source id) unless the source's metadata has a ``source`` of its own.

>>> text = "First sentence here. " * 10
>>> spans = chunk_text(text, size=80, overlap=20)
>>> [(s, e) for s, e, _ in spans][:3]
[(0, 63), (48, 126), (111, 189)]
>>> chunks = chunk_sources([Source(id="doc1", text=text, metadata={"lang": "en"})], size=80, overlap=20)
>>> chunks[0].id, chunks[0].metadata["lang"], chunks[0].metadata["chunk_index"]
('doc1#0:12c9c72682', 'en', 0)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from .base import Chunk

__all__ = ["DEFAULT_OVERLAP", "DEFAULT_SIZE", "Source", "chunk_id", "chunk_sources", "chunk_text"]

DEFAULT_SIZE = 1000
DEFAULT_OVERLAP = 250
_BREAKS = ("\n\n", "\n", ". ", "? ", "! ", "; ", " ")


class Source(BaseModel):
    """A whole input document before chunking."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)


def chunk_id(source_id: str, start: int, text: str) -> str:
    """Stable id of the chunk of ``source_id`` starting at ``start`` with content ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return f"{source_id}#{start}:{digest}"


def _end_of_window(text: str, start: int, size: int) -> int:
    end = start + size
    if end >= len(text):
        return len(text)
    floor = start + size // 2  # never shorten a chunk below half its size to find a nice break
    for sep in _BREAKS:
        at = text.rfind(sep, floor, end)
        if at != -1:
            return at + len(sep) if sep != "\n\n" else at + 2
    return end


def _next_start(text: str, start: int, end: int, overlap: int) -> int:
    candidate = max(end - overlap, start + 1)
    if candidate >= end:
        return end
    # Begin at the next word: skip the rest of a word the overlap cut into.
    if candidate > 0 and not text[candidate - 1].isspace():
        space = next((i for i in range(candidate, end) if text[i].isspace()), None)
        if space is not None:
            candidate = space
    while candidate < end and text[candidate].isspace():
        candidate += 1
    return min(end, candidate)


def chunk_text(text: str, *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[tuple[int, int, str]]:
    """``(start, end, text)`` windows of at most ``size`` characters, consecutive ones sharing about
    ``overlap`` characters. Windows holding only whitespace are dropped."""
    if size < 1:
        raise ConfigError(f"chunk size must be at least 1 character, got {size}")
    if not 0 <= overlap < size:
        raise ConfigError(f"chunk overlap must be between 0 and size - 1 ({size - 1}), got {overlap}")
    spans: list[tuple[int, int, str]] = []
    start = 0
    while start < len(text):
        end = _end_of_window(text, start, size)
        piece = text[start:end]
        if piece.strip():
            spans.append((start, end, piece))
        if end >= len(text):
            break
        start = _next_start(text, start, end, overlap)
    return spans


def chunk_sources(sources: Iterable[Source], *, size: int = DEFAULT_SIZE,
                  overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """Chunks of every source, in order, with stable ids and the source metadata kept."""
    chunks: list[Chunk] = []
    for source in sources:
        for index, (start, end, piece) in enumerate(chunk_text(source.text, size=size, overlap=overlap)):
            # the user's own "source" (a URL, a file name) wins; the chunk id names the source anyway
            metadata = {"source": source.id, **source.metadata, "chunk_index": index,
                        "start": start, "end": end}
            chunks.append(Chunk(id=chunk_id(source.id, start, piece), text=piece, metadata=metadata))
    return chunks
