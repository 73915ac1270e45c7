"""Plain data the evaluators consume: documents and RAG samples. Small frozen pydantic models.

>>> s = RAGSample(question="Who founded it?", answer="Ada.", contexts=["Ada founded it in 1990."])
>>> s.contexts[0]
'Ada founded it in 1990.'
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentAnswer", "Document", "RAGSample"]


class Document(BaseModel):
    """A retrieved passage. ``id`` is stable across runs; ``score`` is the retriever's own."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    score: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class RAGSample(BaseModel):
    """One question with what the RAG app retrieved and answered, and the label when there is one."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    question: str
    answer: str | None = None
    contexts: list[str] = Field(default_factory=list)
    reference: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class AgentAnswer(BaseModel):
    """One app variant's (agent's) answer to one query, with the passages it was given, best first:
    what the pipelines produce and what tournaments and GRAMMAR read.

    ``variations`` holds the rewrites a Fusion agent retrieved with (the original query excluded);
    it is empty for a plain RAG agent and for answers read from a file. ``documents[i].score`` is
    the retriever's score for RAG and the fused RRF score for Fusion.
    """

    model_config = ConfigDict(frozen=True)

    qid: str | None = None
    query: str = ""
    agent: str
    answer: str
    documents: list[Document] = Field(default_factory=list)
    variations: list[str] = Field(default_factory=list)
