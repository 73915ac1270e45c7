"""Plain data the evaluators consume: documents and samples. Small frozen pydantic models.

One :class:`Sample` is what every capability reads: the question, the answer the app gave, the
contexts it answered from (as :class:`Document`\\ s), the reference answer when there is one. The
contexts may be handed over as strings, mappings with ``text`` / ``page_content``, LangChain
``Document``\\ s or LlamaIndex nodes; a lone text is one context.

>>> s = Sample(question="Who founded it?", answer="Ada.", contexts="Ada founded it in 1990.")
>>> s.context_texts()
['Ada founded it in 1990.']
>>> Sample(question="q", contexts=["ok", 3]).invalid_contexts   # kept as data, not raised
'context 2 is int, not text'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .errors import ConfigError

__all__ = ["AgentAnswer", "Document", "Sample", "as_documents", "as_text", "node_id", "read_document",
           "sequence_of", "text_id"]


class Document(BaseModel):
    """A retrieved passage. ``id`` is stable across runs; ``score`` is the retriever's own."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    score: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


def text_id(text: str) -> str:
    """The id of a document that has none: a digest of its text, so pooling finds copies."""
    return "sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def node_id(node: Any) -> str | None:
    """A LlamaIndex node's id that names its document: the source document's id (``ref_doc_id``,
    the ``Document(id_=...)`` it was parsed from) when the node is that whole document, with the
    node's place in it (``#`` and its first character's offset) when the document was chunked; the
    node's own id when it has no source. A node's own id is a fresh UUID each time a document is
    indexed, so one document would have another id in each variant of an app."""
    try:
        source = getattr(node, "ref_doc_id", None)
    except Exception:  # noqa: BLE001 - a node type whose source relationship is malformed
        source = None
    if not source:
        return getattr(node, "node_id", None)
    chunked = getattr(node, "prev_node", None) is not None or getattr(node, "next_node", None) is not None
    if not chunked:
        return str(source)
    start = getattr(node, "start_char_idx", None)
    return f"{source}#{start}" if isinstance(start, int) else f"{source}#{text_id(node.get_content())}"


def read_document(item: Any, where: str) -> Document | None:
    """One context as a document (None when its text is blank); a :class:`ConfigError` naming
    ``where`` when it is not a text, a mapping with text, a LangChain Document or a LlamaIndex node."""
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
        text, ident, score = node.get_content(), node_id(node), getattr(item, "score", None)
        meta = getattr(node, "metadata", None) or {}
    elif callable(getattr(item, "get_content", None)):  # a LlamaIndex node
        text, ident, meta = item.get_content(), node_id(item), getattr(item, "metadata", None) or {}
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


def _is_one(value: Any) -> bool:
    # a single text or document handed over alone (a LlamaIndex node is a pydantic model:
    # iterating it would give its fields)
    return isinstance(value, (str, Mapping, Document)) or hasattr(value, "page_content") or \
        hasattr(getattr(value, "node", None), "get_content") or callable(getattr(value, "get_content", None))


def _contexts(value: Any) -> tuple[list[Document], str | None]:
    """``value`` as documents, in order, blank ones kept (they still count as retrieved), or no
    documents and the reason one of them is not text."""
    if value is None:
        return [], None
    items = [value] if _is_one(value) else value
    if isinstance(items, bytes) or not hasattr(items, "__iter__"):
        return [], f"contexts is {type(value).__name__}, not a list of texts"
    docs = []
    for i, item in enumerate(items, 1):
        try:
            found = read_document(item, f"context {i}")
        except ConfigError:
            return [], f"context {i} is {type(item).__name__}, not text"
        if found is None:  # a blank context: kept, it was retrieved
            blank = item if isinstance(item, str) else ""
            found = Document(id=text_id(blank), text=blank)
        docs.append(found)
    return docs, None


class Sample(BaseModel):
    """One interaction of a RAG app: the question, what it answered, the contexts it answered
    from, and the reference answer when there is one.

    ``generated`` is text the app wrote on the way to its answer (sub-question answers, rewritten
    questions) that reached the answer's prompt: kept apart from the contexts and not judged.
    ``capture_note`` says why captured contexts may not be what the prompt held, when unsure.
    ``invalid_contexts`` is set (and ``contexts`` left empty) when a context could not be read as
    text: the context metrics of such a sample are unscored, the others still run.
    """

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    question: str = ""
    answer: str | None = None
    contexts: list[Document] = Field(default_factory=list)
    reference: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    generated: list[str] = Field(default_factory=list)
    capture_note: str | None = None
    invalid_contexts: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _read_contexts(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "contexts" in data:
            docs, reason = _contexts(data["contexts"])
            data = {**data, "contexts": docs}
            if reason is not None:
                data["invalid_contexts"] = reason
        return data

    def context_texts(self) -> list[str]:
        """The contexts' texts, in order."""
        return [d.text for d in self.contexts]

    def key(self) -> str:
        """A stable item key for resumable batches: the id, else a digest of the content."""
        if self.id:
            return self.id
        payload: list[Any] = [self.question, self.context_texts(), self.answer]
        if self.invalid_contexts:
            payload.append(self.invalid_contexts)
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


class AgentAnswer(Sample):
    """A :class:`Sample` answered by one named app variant (``agent``): what the pipelines produce
    and what tournaments and GRAMMAR read. ``id`` is the query's id and ``contexts`` the passages
    the agent was given, best first.

    ``variations`` holds the rewrites a Fusion agent retrieved with (the original query excluded);
    it is empty for a plain RAG agent and for answers read from a file. ``contexts[i].score`` is
    the retriever's score for RAG and the fused RRF score for Fusion.
    """

    agent: str
    answer: str
    variations: list[str] = Field(default_factory=list)


# ------------------------------------------------ apps' values read as documents and text, by type
# Apps return one string of context, a list of strings, LangChain ``Document``s, LlamaIndex
# ``NodeWithScore``s or nodes, a LlamaIndex ``Response`` carrying ``source_nodes``, or dicts. Shapes
# are recognised by their attributes, so the core imports no framework; a single string is one
# document (never a sequence of one-character documents).

def as_documents(contexts: Any, *, field: str = "contexts") -> list[Document]:
    """``contexts`` as documents, in order, empty ones left out. ``field`` names the argument in
    errors. A LlamaIndex ``Response`` (anything with ``source_nodes``) gives its source nodes."""
    if contexts is None:
        return []
    if isinstance(contexts, (str, Document, Mapping)) or hasattr(contexts, "page_content") \
            or hasattr(getattr(contexts, "node", None), "get_content") \
            or callable(getattr(contexts, "get_content", None)):
        # one document alone (a LlamaIndex node is a pydantic model: iterating it gives its fields)
        found = read_document(contexts, field)
        return [found] if found is not None else []
    if hasattr(contexts, "source_nodes"):
        return as_documents(contexts.source_nodes or [], field=f"{field}.source_nodes")
    if isinstance(contexts, bytes) or not isinstance(contexts, Iterable):
        raise ConfigError(f"{field} is a {type(contexts).__name__}: pass a string or a list of documents")
    out = [read_document(item, f"{field}[{i}]") for i, item in enumerate(contexts)]
    return [d for d in out if d is not None]


def sequence_of(value: Any, *, field: str) -> list[Any]:
    """``value`` as a list, refusing what is one item rather than a collection of them: a string
    (which would index one document per character), bytes, a mapping, a lone document or node.

    >>> sequence_of(("a", "b"), field="texts")
    ['a', 'b']
    >>> sequence_of("some text", field="texts")
    Traceback (most recent call last):
    ...
    langrag_eval.errors.ConfigError: texts is one str, not a list of them: pass ['some text'] to index one text
    """
    one = isinstance(value, (str, bytes, Mapping)) or hasattr(value, "page_content") \
        or callable(getattr(value, "get_content", None)) or hasattr(getattr(value, "node", None), "get_content")
    if one or not isinstance(value, Iterable):
        hint = f"pass [{value!r}] to index one text" if isinstance(value, str) and len(value) < 40 else \
            "pass a list with it to index one item"
        raise ConfigError(f"{field} is one {type(value).__name__}, not a list of them: {hint}")
    return list(value)


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
