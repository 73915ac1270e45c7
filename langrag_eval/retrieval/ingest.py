"""Loading plain text, Markdown and JSONL sources, and ingesting them into a backend.

- ``.txt``: one source per file, id = the file's path relative to the folder given (or its name).
- ``.md`` / ``.markdown``: same, with the first ``# heading`` as ``title`` metadata; a leading
  ``---`` front-matter block is dropped from the text.
- ``.jsonl``: one source per line, text from ``text_field`` (default ``text``), id from ``id_field``
  (default ``id``; ``<file stem>:<line>`` when absent), every other field kept as metadata.
  A bad line becomes a :class:`~langrag_eval.errors.DataError` naming file, line and field; the
  other lines still load.

Embedding goes through any :class:`~langrag_eval.models.embeddings.Embedder` (default: the packaged MiniLM).

>>> import json, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "faq.jsonl").write_text(json.dumps({"id": "q1", "text": "Refunds take 5 days."}) + "\\n{oops\\n")
>>> loaded = load_path(folder)
>>> [s.id for s in loaded.sources], [str(e) for e in loaded.errors]  # doctest: +ELLIPSIS
(['q1'], ['...faq.jsonl:2: not valid JSON (...)'])
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

import numpy as np

from ..models.embeddings import Embedder
from ..errors import DataError
from ..files.jsontext import lines_of
from ..files.tables import jsonl_objects
from ..files.reading import read_text
from ..runtime.concurrency import synchronous
from .base import Chunk, HybridSettings, IngestReport, Mode, Retriever, SearchBackend
from .chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, Source, chunk_sources

__all__ = ["SUFFIXES", "Loaded", "aingest", "ingest", "load_jsonl", "load_path", "load_text", "retriever_over",
           "source_of"]

SUFFIXES = (".txt", ".md", ".markdown", ".jsonl")


@dataclass
class Loaded:
    """Sources read, and one error per input that could not be read."""

    sources: list[Source] = field(default_factory=list)
    errors: list[DataError] = field(default_factory=list)

    def extend(self, other: Loaded) -> None:
        self.sources.extend(other.sources)
        self.errors.extend(other.errors)


def _markdown(text: str) -> tuple[str, dict[str, str]]:
    if text.startswith("---\n"):  # YAML front matter is configuration, not content
        end = text.find("\n---\n", 3)
        if end != -1:
            text = text[end + 5:]
    meta = {}
    for line in lines_of(text):  # Markdown lines end at line feeds; U+2028 is text within one
        if line.startswith("# "):
            meta["title"] = line[2:].strip()
            break
    return text, meta


def load_text(path: str | Path, *, source_id: str | None = None) -> Loaded:
    """One plain-text or Markdown file as one source."""
    path = Path(path)
    try:
        text = read_text(path)
    except DataError as exc:
        return Loaded(errors=[exc])
    meta: dict[str, str] = {"path": str(path)}
    if path.suffix.lower() in (".md", ".markdown"):
        text, extra = _markdown(text)
        meta.update(extra)
    if not text.strip():
        return Loaded(errors=[DataError("file holds no text", path=str(path))])
    return Loaded(sources=[Source(id=source_id or path.name, text=text, metadata=meta)])


def load_jsonl(path: str | Path, *, text_field: str = "text", id_field: str = "id") -> Loaded:
    """One source per JSON line; bad lines are reported, the rest load."""
    path = Path(path)
    out = Loaded()
    try:
        content = read_text(path)
    except DataError as exc:
        return Loaded(errors=[exc])
    seen: set[str] = set()
    for number, row in jsonl_objects(path, content):
        if isinstance(row, DataError):
            out.errors.append(row)
            continue
        text = row.get(text_field)
        if not isinstance(text, str) or not text.strip():
            problem = "missing" if text_field not in row else "empty or not a string"
            out.errors.append(DataError(f"text is {problem}", path=str(path), line=number, field=text_field))
            continue
        raw_id = row.get(id_field, f"{path.stem}:{number}")
        if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool) or str(raw_id) == "":
            out.errors.append(DataError("id must be a non-empty string or an integer", path=str(path),
                                        line=number, field=id_field))
            continue
        if str(raw_id) in seen:
            out.errors.append(DataError(f"duplicate id {raw_id!r}", path=str(path), line=number,
                                        field=id_field))
            continue
        seen.add(str(raw_id))
        meta = {k: v for k, v in row.items() if k not in (text_field, id_field)}
        out.sources.append(Source(id=str(raw_id), text=text, metadata=meta))
    return out


def load_path(path: str | Path, *, text_field: str = "text", id_field: str = "id") -> Loaded:
    """A file, or every ``.txt`` / ``.md`` / ``.jsonl`` file under a folder (sorted, recursive)."""
    path = Path(path)
    if not path.exists():
        return Loaded(errors=[DataError("no such file or folder", path=str(path))])
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*")
                                                 if p.is_file() and p.suffix.lower() in SUFFIXES)
    out = Loaded()
    for file in files:
        suffix = file.suffix.lower()
        if suffix == ".jsonl":
            out.extend(load_jsonl(file, text_field=text_field, id_field=id_field))
        elif suffix in SUFFIXES:
            rel = file.relative_to(path).as_posix() if path.is_dir() else file.name
            out.extend(load_text(file, source_id=rel))
        else:
            out.errors.append(DataError(f"unsupported file type {suffix or '(none)'}; use one of "
                                        f"{', '.join(SUFFIXES)}", path=str(file)))
    return out


async def aingest(backend: SearchBackend, sources: Sequence[Source] | Sequence[Chunk], *,
                  embedder: Embedder | None = None, vectors: bool = True, size: int = DEFAULT_SIZE,
                  overlap: int = DEFAULT_OVERLAP, embed_batch: int = 256,
                  index_batch: int = 10_000, prune: bool = False) -> IngestReport:
    """Chunk (when given sources), embed (unless ``vectors=False``) and index; one merged report.

    Given sources, indexing is an upsert by source: chunks a source had before and no longer has
    (its text changed) are removed, so an edited document never leaves its old text behind to
    outrank the new. With ``prune``, chunks of sources not given at all are removed too (the corpus
    is the whole truth: a deleted file leaves the index). The report counts chunks added, unchanged
    and removed. Backends without ``aids``/``adelete`` only add and replace.
    """
    given_sources = not all(isinstance(s, Chunk) for s in sources)
    chunks = chunk_sources(sources, size=size, overlap=overlap) if given_sources else list(sources)  # type: ignore[arg-type]
    stale: list[str] = []
    before: set[str] = set()
    if given_sources and hasattr(backend, "aids") and hasattr(backend, "adelete"):
        before = set(await backend.aids())  # type: ignore[attr-defined]
        names = {s.id for s in sources}  # type: ignore[union-attr]
        fresh = {c.id for c in chunks}
        for old in before - fresh:
            owner = source_of(old)
            if owner is not None and (prune or owner in names):
                stale.append(old)
    if vectors and embedder is None:
        from ..models.embeddings import default_embedder
        embedder = default_embedder()
    report = IngestReport(indexed=0)
    for start in range(0, len(chunks), index_batch):
        batch = chunks[start:start + index_batch]
        matrix = None
        if vectors:
            assert embedder is not None
            parts = [await asyncio.to_thread(embedder.embed, [c.text for c in batch[i:i + embed_batch]])
                     for i in range(0, len(batch), embed_batch)]
            matrix = np.concatenate(parts) if parts else None
        part = await backend.aindex(batch, matrix)
        report = IngestReport(indexed=report.indexed + part.indexed, failed=report.failed + part.failed)
    refused = {i for i, _ in report.failed}
    removed = await backend.adelete(sorted(stale)) if stale else 0  # type: ignore[attr-defined]
    kept = {c.id for c in chunks} - refused
    return report.model_copy(update={"added": len(kept - before), "unchanged": len(kept & before),
                                     "removed": removed})


_CHUNK_ID = re.compile(r"^(?P<source>.*)#\d+:[0-9a-f]{10}$", re.S)


def source_of(chunk_id: str) -> str | None:
    """The source id inside a chunk id made by :func:`~langrag_eval.retrieval.chunking.chunk_id`
    (None for an id of another shape: chunks indexed as they were, which re-indexing leaves alone).

    >>> source_of("docs/faq.md#250:0123456789"), source_of("my-own-id")
    ('docs/faq.md', None)
    """
    found = _CHUNK_ID.match(chunk_id)
    return found.group("source") if found else None


ingest = synchronous(aingest)


def retriever_over(documents: Any, *, backend: SearchBackend | None = None, mode: Mode = "bm25",
                   embedder: Embedder | None = None, k: int = 4,
                   hybrid: HybridSettings = HybridSettings()) -> Retriever:
    """A retriever over ``documents`` (anything :func:`~langrag_eval.types.as_documents` reads:
    texts, LangChain documents, LlamaIndex nodes), indexed whole into ``backend`` (default: a new
    in-process :class:`EmbeddedBackend`), embedded when ``mode`` needs vectors. Each document keeps
    its id (a digest of the text when it has none; repeats get ``#2``, ``#3`` ...) and metadata.

    >>> r = retriever_over(["Paris is in France.", "Rome is in Italy."], k=1)
    >>> [d.text for d in r.retrieve("Where is Rome?")]
    ['Rome is in Italy.']
    """
    from ..types import as_documents
    from .embedded import EmbeddedBackend

    seen: dict[str, int] = {}
    chunks = []
    for doc in as_documents(documents, field="documents"):
        seen[doc.id] = seen.get(doc.id, 0) + 1
        ident = doc.id if seen[doc.id] == 1 else f"{doc.id}#{seen[doc.id]}"
        chunks.append(Chunk(id=ident, text=doc.text, metadata=doc.metadata))
    backend = backend if backend is not None else EmbeddedBackend()
    retriever = Retriever(backend, mode=mode, embedder=embedder, k=k, hybrid=hybrid)
    if chunks:
        ingest(backend, chunks, embedder=retriever.embedder if mode != "bm25" else None,
               vectors=mode != "bm25")
    return retriever
