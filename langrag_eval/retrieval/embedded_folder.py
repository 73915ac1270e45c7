"""The embedded backend's folder: its live chunks saved as files, swapped in whole, and read back.

A folder holds ``chunks.jsonl`` (id, text and metadata, one chunk a line), ``vectors.npy`` (float32,
one row per chunk, zeros where a chunk has no vector) with ``has_vector.npy`` (which rows have one),
``postings.npz`` (term-major postings over the saved rows and each row's token count),
``vocabulary.json`` (the terms in id order) and ``manifest.json`` (format, version, space,
dimension). Each save writes a fresh folder beside the old one and renames it into place, so a
reader or a failed save never sees half an index. Version 1 folders (a forward index of
``(term, tf)`` entries) are still read; they are saved again in the current layout.

>>> import tempfile
>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend
>>> tmp = tempfile.TemporaryDirectory()
>>> folder = Path(tmp.name) / "idx"
>>> EmbeddedBackend(folder).index([Chunk(id="a", text="red apples")]).indexed
1
>>> sorted(p.name for p in folder.iterdir())
['chunks.jsonl', 'has_vector.npy', 'manifest.json', 'postings.npz', 'vectors.npy', 'vocabulary.json']
>>> saved = load_index(folder)
>>> saved.ids, saved.space, saved.dimension, len(saved.vocabulary)
(['a'], 'cosinesimil', None, 2)
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, RetrievalError
from ..files.reading import check_regular
from ..files.writing import temporary_name
from .base import Chunk
from .bm25 import Postings, Vocabulary
from .dense import DenseIndex, Space

__all__ = ["SavedIndex", "damaged_index_errors", "holds_index", "load_index", "save_index"]

_FORMAT = "langrag-eval-embedded"
_VERSION = 2   # 2: term-major postings; 1 (a forward index) is still read
_SLICE = 4096   # vector rows saved at once: temporaries stay a few MB


@dataclass(frozen=True)
class SavedIndex:
    """What a folder holds, read back: row ``i`` is the ``i``-th saved chunk. The lists are fresh, for
    the reader to keep; ``vectors`` is memory-mapped (zeros where ``has_vector`` is False)."""

    ids: list[str]
    texts: list[str]
    metadata: list[dict[str, Any]]
    lengths: np.ndarray      # int64, each row's token count
    postings: Postings
    vocabulary: Vocabulary
    space: Space
    dimension: int | None
    vectors: np.ndarray
    has_vector: np.ndarray   # bool, one per row


def holds_index(path: Path) -> bool:
    """Whether ``path`` holds a saved index (False for a missing or empty folder); a folder with
    other files in it is refused, so an index is never saved over a user's files."""
    if (path / "manifest.json").exists():
        return True
    if path.exists() and any(path.iterdir()):
        raise RetrievalError(f"{path} is not empty and holds no embedded index "
                             f"(manifest.json missing); give an empty or new folder")
    return False


@contextmanager
def damaged_index_errors(path: Path) -> Iterator[None]:
    """Turn what a damaged folder, or one from another version, raises while it is read (and loaded
    into a backend) into one :class:`RetrievalError` that says to index again."""
    try:
        yield
    except RetrievalError:
        raise
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError,
            zipfile.BadZipFile) as exc:  # ValueError covers JSON and pydantic errors too
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RetrievalError(f"{path}: the index files are damaged or from another "
                             f"version ({first}); index the corpus again into a new folder") from None


_FILES = ("manifest.json", "chunks.jsonl", "vectors.npy", "has_vector.npy", "postings.npz", "vocabulary.json")


def _refuse_special_files(path: Path) -> None:
    # A named pipe or a device in place of an index file would hold the reader forever: each file
    # is looked at (os.stat, nothing opened) before any is read. A missing one is left to the
    # readers below, which call the index damaged.
    for name in _FILES:
        if os.path.lexists(path / name):
            try:
                check_regular(path / name, what=f"the index file {name}")
            except DataError as exc:
                raise RetrievalError(f"{exc.path}: {exc.message.removesuffix('; give a file')}; index "
                                     "the corpus again into a new folder") from None


def load_index(path: Path, space: Space | None = None) -> SavedIndex:
    """The index saved in ``path``; ``space``, when given, must be the one it was built with. Read
    it under :func:`damaged_index_errors`: a damaged file raises what its reader raises; a file
    that is not a regular file (a named pipe, a device) is refused before any is opened."""
    _refuse_special_files(path)
    try:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RetrievalError(f"{path}/manifest.json cannot be read: {exc}") from None
    if manifest.get("format") != _FORMAT or manifest.get("version") not in (1, _VERSION):
        raise RetrievalError(f"{path} holds an index of an unknown format "
                             f"({manifest.get('format')!r} v{manifest.get('version')}); re-index it")
    if space is not None and space != manifest["space"]:
        raise RetrievalError(f"{path} was built with space {manifest['space']!r}, not {space!r}; "
                             f"open it without space= or re-index")
    with open(path / "chunks.jsonl", encoding="utf-8") as f:
        chunks = [Chunk(**json.loads(line)) for line in f if line.strip()]
    matrix = np.load(path / "vectors.npy", mmap_mode="r")   # the reader copies it a slice at a time
    has_vec = np.load(path / "has_vector.npy")
    saved = np.load(path / "postings.npz")
    terms = json.loads((path / "vocabulary.json").read_text(encoding="utf-8"))
    vocabulary = Vocabulary((term, i) for i, term in enumerate(terms))
    lengths = saved["lengths"].astype(np.int64)
    if manifest["version"] == 1:   # a forward index: (term, tf) entries, document by document
        tokens = np.repeat(saved["terms"].astype(np.int64), saved["tfs"])
        postings = Postings.from_tokens(tokens, lengths, 0, len(vocabulary))
    else:
        postings = Postings(saved["indptr"].astype(np.int64), saved["docs"].astype(np.int32),
                            saved["tfs"])
    if len(lengths) != len(chunks) or postings.terms != len(vocabulary):
        raise RetrievalError(f"{path}: the index files are damaged or from another version "
                             f"(postings.npz does not match chunks.jsonl: {len(lengths)} lengths, "
                             f"{len(chunks)} chunks); index the corpus again into a new folder")
    return SavedIndex(ids=[c.id for c in chunks], texts=[c.text for c in chunks],
                      metadata=[c.metadata for c in chunks], lengths=lengths, postings=postings,
                      vocabulary=vocabulary, space=manifest["space"],
                      dimension=manifest.get("dimension"), vectors=matrix, has_vector=has_vec)


def save_index(path: Path, *, ids: list[str], texts: list[str], metadata: list[dict[str, Any]],
               live: np.ndarray, lengths: np.ndarray, postings: Postings, vocabulary: Iterable[str],
               dense: DenseIndex | None, space: Space, dimension: int | None) -> None:
    """Save the rows where ``live`` (a mask over all rows) is True to ``path``, replacing what it
    held. ``ids``, ``texts``, ``metadata`` and ``lengths`` cover every row; ``postings`` hold the
    live rows only, by row number; ``dense`` holds the vectors by row."""
    rows = np.flatnonzero(live)
    with _replacing(path) as tmp:
        with open(tmp / "chunks.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"id": ids[r], "text": texts[r], "metadata": metadata[r]},
                                    ensure_ascii=False) + "\n" for r in rows.tolist())
        has_vec = _write_vectors(tmp / "vectors.npy", rows, dense, dimension or 0)
        saved_row = (np.cumsum(live) - 1).astype(np.int32)   # a live row's place in the saved chunks
        np.savez(tmp / "postings.npz", indptr=postings.indptr, docs=saved_row[postings.docs],
                 tfs=postings.tfs, lengths=lengths[live])
        (tmp / "vocabulary.json").write_text(json.dumps(list(vocabulary), ensure_ascii=False),
                                             encoding="utf-8")
        np.save(tmp / "has_vector.npy", has_vec)
        (tmp / "manifest.json").write_text(json.dumps(
            {"format": _FORMAT, "version": _VERSION, "space": space, "dimension": dimension,
             "chunks": len(rows)}), encoding="utf-8")


@contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A fresh folder beside ``path`` to write into, swapped in for ``path`` when the block ends; when
    it fails, the fresh folder is removed and ``path`` is left as it was."""
    # The new folder and the old one's place while swapping get names only this call makes
    # (temporary_name), so a user's folder beside the index is never taken for one of them.
    tmp = temporary_name(path, "saving")
    tmp.mkdir(parents=True)
    old: Path | None = None
    try:
        yield tmp
        if path.exists():
            old = temporary_name(path, "old")
            path.rename(old)
        try:
            tmp.rename(path)
        except OSError:
            if old is not None:
                old.rename(path)
                old = None
            raise
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RetrievalError(f"{path}: the index could not be saved ({exc.strerror or exc}); "
                             "the index there is left as it was") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _write_vectors(path: Path, rows: np.ndarray, dense: DenseIndex | None, dim: int) -> np.ndarray:
    """Save the vectors of ``rows`` (zeros where a row has none) as .npy, a slice at a time so no
    second full matrix is built; returns which rows have one."""
    has = np.zeros(len(rows), dtype=bool) if dense is None else dense.has(rows)
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype("<f4")), "fortran_order": False,
              "shape": (len(rows), dim)}
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
        for start in range(0, len(rows), _SLICE):
            part, got = rows[start:start + _SLICE], has[start:start + _SLICE]
            block = np.zeros((len(part), dim), dtype="<f4")
            if got.any():
                block[got] = dense.vectors(part[got])  # type: ignore[union-attr]
            f.write(block.tobytes())
    return has
