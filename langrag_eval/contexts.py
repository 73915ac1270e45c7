"""Retrieved contexts and answers in whatever shape an app hands them over, read by type.

Apps return one string of context, a list of strings, LangChain ``Document``\\ s, LlamaIndex
``NodeWithScore``\\ s or nodes, a LlamaIndex ``Response`` carrying ``source_nodes``, or dicts.
:func:`as_documents` reads each of these into langrag :class:`~langrag_eval.types.Document`\\ s,
keeping the framework's document id and metadata; a single string is one document (never a
sequence of one-character documents). Shapes are recognised by their attributes, so the core
imports no framework. Anything else is refused with a :class:`ConfigError` naming the item.

>>> [d.text for d in as_documents("Paris is the capital.")]
['Paris is the capital.']
>>> d = as_documents([{"page_content": "Lyon.", "metadata": {"source": "fr.txt"}, "id": "d7"}])[0]
>>> d.id, d.text, d.metadata
('d7', 'Lyon.', {'source': 'fr.txt'})
>>> as_documents(None), as_text(None), as_text("Paris")
([], None, 'Paris')
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ConfigError
from .types import Document

__all__ = ["as_documents", "as_text", "text_id"]


def text_id(text: str) -> str:
    """The id of a document that has none: a digest of its text, so pooling finds copies."""
    return "sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _one(item: Any, where: str) -> Document | None:
    if isinstance(item, Document):
        return item
    text: Any = None
    ident: Any = None
    score: Any = None
    meta: Any = {}
    if isinstance(item, str):
        text = item
    elif isinstance(item, Mapping):
        text = item.get("page_content", item.get("text"))
        ident, score, meta = item.get("id"), item.get("score"), item.get("metadata") or {}
    elif isinstance(getattr(item, "page_content", None), str):  # LangChain Document
        text, ident, meta = item.page_content, getattr(item, "id", None), getattr(item, "metadata", None) or {}
    elif hasattr(getattr(item, "node", None), "get_content"):  # LlamaIndex NodeWithScore
        node = item.node
        text, ident, score = node.get_content(), getattr(node, "node_id", None), getattr(item, "score", None)
        meta = getattr(node, "metadata", None) or {}
    elif callable(getattr(item, "get_content", None)):  # a LlamaIndex node
        text, ident, meta = item.get_content(), getattr(item, "node_id", None), getattr(item, "metadata", None) or {}
    else:
        raise ConfigError(f"{where} is a {type(item).__name__}, not a document: pass strings, "
                          "LangChain Documents, LlamaIndex nodes or dicts with page_content / text")
    if not isinstance(text, str):
        raise ConfigError(f"{where} has no text (page_content / text is {type(text).__name__})")
    if not text.strip():
        return None
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    ident = ident if ident not in (None, "") else meta.get("id")
    if score is None:
        score = meta.get("score")
    return Document(id=str(ident) if ident not in (None, "") else text_id(text), text=text,
                    score=float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
                    metadata=meta)


def as_documents(contexts: Any, *, field: str = "contexts") -> list[Document]:
    """``contexts`` as documents, in order, empty ones left out. ``field`` names the argument in
    errors. A LlamaIndex ``Response`` (anything with ``source_nodes``) gives its source nodes."""
    if contexts is None:
        return []
    if isinstance(contexts, (str, Document, Mapping)) or hasattr(contexts, "page_content") \
            or hasattr(getattr(contexts, "node", None), "get_content") \
            or callable(getattr(contexts, "get_content", None)):
        # one document alone (a LlamaIndex node is a pydantic model: iterating it gives its fields)
        found = _one(contexts, field)
        return [found] if found is not None else []
    if hasattr(contexts, "source_nodes"):
        return as_documents(contexts.source_nodes or [], field=f"{field}.source_nodes")
    if isinstance(contexts, bytes) or not isinstance(contexts, Iterable):
        raise ConfigError(f"{field} is a {type(contexts).__name__}: pass a string or a list of documents")
    out = [_one(item, f"{field}[{i}]") for i, item in enumerate(contexts)]
    return [d for d in out if d is not None]


def as_text(value: Any, *, field: str = "answer", strict: bool = True) -> str | None:
    """An answer or a question as text: a string as it is; a chat message's text content; a
    LlamaIndex ``Response``'s ``response`` (a streaming one is read to its end) or ``QueryBundle``'s
    ``query_str``; a number as its digits; None stays None. Anything else is refused (a
    :class:`ConfigError` naming ``field``), or with ``strict=False`` given as ``str(value)``:
    what the adapters do with a value a framework handed over in a shape of its own.

    >>> as_text({"answer": "Paris"}, strict=False)
    "{'answer': 'Paris'}"
    """
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "response_gen") or hasattr(value, "async_response_gen"):
        text = str(value)  # a StreamingResponse: str() drains the stream into response_txt
        return None if text == "None" else text
    if hasattr(value, "source_nodes") and hasattr(value, "response"):
        return None if value.response is None else str(value.response)
    if isinstance(getattr(value, "query_str", None), str):  # a LlamaIndex QueryBundle
        return value.query_str
    content = getattr(value, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # message content blocks
        return "".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content)
    if isinstance(value, (int, float)) or not strict:
        return str(value)
    raise ConfigError(f"{field} is a {type(value).__name__}, not text")
