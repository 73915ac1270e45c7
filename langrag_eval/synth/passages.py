"""Long passages for synthetic query generation (RAGElo/RAG-Fusion section 4: about 2,000 tokens a
passage, so that a question may need several retrieval chunks to answer).

Tokens are counted either by whitespace (``"whitespace"``, the default: words, stable across
tokenizers) or with the project's provider-free estimate (``"estimate"``: about four characters a
token, :func:`langrag_eval.model.estimate_tokens`). Documents are cut at paragraph boundaries where
possible; a paragraph longer than a passage is cut between words.

>>> docs = [CorpusDocument(id="guide", text="alpha beta gamma\\n\\ndelta epsilon")]
>>> [p.text for p in split_passages(docs, tokens=3, min_tokens=1)]
['alpha beta gamma', 'delta epsilon']
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import ConfigError, DataError
from ..files.tables import jsonl_objects
from ..files.jsontext import parse_json
from ..files.reading import check_regular, read_text

__all__ = [
    "CorpusDocument",
    "Passage",
    "TokenCounter",
    "count_tokens",
    "load_corpus",
    "sample_passages",
    "split_passages",
]

TokenCounter = Literal["whitespace", "estimate"]
_TEXT_FIELDS = ("text", "content", "page_content", "body")


class CorpusDocument(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    text: str


class Passage(BaseModel):
    """A slice of one document; ``id`` is ``<document id>#<n>``."""

    model_config = ConfigDict(frozen=True)

    id: str
    doc_id: str
    text: str
    tokens: int


def count_tokens(text: str, counter: TokenCounter = "whitespace") -> int:
    """Tokens in ``text`` by the chosen counter.

    >>> count_tokens("one two  three"), count_tokens("one two  three", "estimate")
    (3, 4)
    """
    if counter == "whitespace":
        return len(text.split())
    if counter == "estimate":
        return (len(text) + 3) // 4 if text else 0
    raise ConfigError(f"unknown token counter {counter!r}: use whitespace or estimate")


def load_corpus(path: str | Path) -> list[CorpusDocument]:
    """Documents from a JSON object ``{id: text}``, a JSON list (of strings or of objects with
    ``id`` and ``text``), a JSONL file of such objects, a folder of ``.txt``/``.md`` files, or one
    text file. Bad records raise :class:`DataError` naming the file, line and field."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.suffix.lower() in (".txt", ".md") and f.is_file())
        docs = [CorpusDocument(id=str(f.relative_to(p)), text=_read(f)) for f in files]
    elif not p.is_file():
        if not os.path.lexists(p):
            raise ConfigError(f"{p}: corpus not found")
        check_regular(p, what="corpus")  # a pipe, device or link loop: refused before reading
    elif p.suffix.lower() == ".jsonl":
        docs = [_record(_strict(obj), str(p), n, n - 1) for n, obj in jsonl_objects(p, _read(p))]
    elif p.suffix.lower() == ".json":
        try:
            raw = parse_json(_read(p))
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON: {exc.msg}", path=str(p), line=exc.lineno) from None
        if isinstance(raw, dict):
            docs = []
            for key, value in raw.items():
                if not isinstance(value, str):
                    raise DataError("must map document ids to text", path=str(p), field=str(key))
                docs.append(CorpusDocument(id=str(key), text=value))
        elif isinstance(raw, list):
            docs = [CorpusDocument(id=str(i), text=item) if isinstance(item, str)
                    else _record(item, str(p), None, i) for i, item in enumerate(raw)]
        else:
            raise DataError("expected a JSON object or list of documents", path=str(p))
    else:
        docs = [CorpusDocument(id=p.name, text=_read(p))]
    docs = [d for d in docs if d.text.strip()]
    if not docs:
        raise DataError("the corpus holds no text", path=str(p))
    return docs


def _read(path: Path) -> str:
    return read_text(path, what="corpus file")


def _strict(obj: dict[str, Any] | DataError) -> dict[str, Any]:
    if isinstance(obj, DataError):
        raise obj
    return obj


def _record(obj: object, path: str, line: int | None, index: int) -> CorpusDocument:
    if not isinstance(obj, dict):
        raise DataError("expected a JSON object with id and text", path=path, line=line)
    text = next((obj[f] for f in _TEXT_FIELDS if isinstance(obj.get(f), str)), None)
    if text is None:
        raise DataError("is missing or not a string (also accepted: content, page_content, body)",
                        path=path, line=line, field="text")
    doc_id = obj.get("id", obj.get("doc_id", index))
    return CorpusDocument(id=str(doc_id), text=text)


def split_passages(docs: Iterable[CorpusDocument], *, tokens: int = 2000, min_tokens: int = 50,
                   counter: TokenCounter = "whitespace") -> list[Passage]:
    """Cut each document into passages of at most ``tokens`` tokens; drop pieces under ``min_tokens``
    (a short document is one passage when it reaches ``min_tokens``)."""
    if tokens < 1:
        raise ConfigError("passage tokens must be at least 1")
    out: list[Passage] = []
    for doc in docs:
        pieces: list[str] = []
        current: list[str] = []
        for para in (p.strip() for p in doc.text.split("\n\n")):
            if not para:
                continue
            for chunk in _fit(para.split(), tokens, counter):
                if current and _cost(current + [chunk], "\n\n", counter) > tokens:
                    pieces.append("\n\n".join(current))
                    current = []
                current.append(chunk)
        if current:
            pieces.append("\n\n".join(current))
        for n, text in enumerate(pieces, start=1):
            size = count_tokens(text, counter)
            if size >= min_tokens:
                out.append(Passage(id=f"{doc.id}#{n}", doc_id=doc.id, text=text, tokens=size))
    return out


def _cost(parts: list[str], sep: str, counter: TokenCounter) -> int:
    """Tokens of ``sep.join(parts)`` without building the string."""
    if counter == "whitespace":
        return sum(len(p.split()) for p in parts)
    chars = sum(len(p) for p in parts) + len(sep) * (len(parts) - 1)
    return (chars + 3) // 4 if chars else 0


def _fit(words: list[str], tokens: int, counter: TokenCounter) -> list[str]:
    """A paragraph's words joined into pieces that each fit in ``tokens`` (one running count, so a
    long paragraph costs linear time)."""
    pieces: list[str] = []
    current: list[str] = []
    chars = 0
    for word in words:
        grown = chars + len(word) + (1 if current else 0)
        size = len(current) + 1 if counter == "whitespace" else (grown + 3) // 4
        if current and size > tokens:
            pieces.append(" ".join(current))
            current, grown = [], len(word)
        current.append(word)
        chars = grown
    if current:
        pieces.append(" ".join(current))
    return pieces


def sample_passages(passages: Sequence[Passage], count: int | None, *, seed: int = 0) -> list[Passage]:
    """``count`` passages drawn without replacement (all of them when ``count`` is None or larger),
    in corpus order."""
    if count is None or count >= len(passages):
        return list(passages)
    if count < 1:
        raise ConfigError("the number of passages must be at least 1")
    chosen = set(random.Random(seed).sample(range(len(passages)), count))
    return [p for i, p in enumerate(passages) if i in chosen]
