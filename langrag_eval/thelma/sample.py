"""What THELMA reads and writes: a (query, sources, response) sample and its per-metric result.

>>> s = ThelmaSample(query="When was it built?", sources=["It was built in 1896."], response="In 1896.")
>>> s.source_texts()
(['It was built in 1896.'], None)
>>> ThelmaSample(query="q", sources=["ok", 3]).source_texts()[1]
'source 2 is int, not text'
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..results import Unscored
from ..contexts import as_documents
from ..errors import ConfigError
from ..types import RAGSample
from .aggregate import MetricOutcome, MetricScore
from .diagnosis import Finding

__all__ = ["SampleUsage", "ThelmaResult", "ThelmaSample"]


class ThelmaSample(BaseModel):
    """One interaction of a RAG app. ``sources`` are the retrieved texts; a :class:`Document` or a
    mapping with a string ``text`` or ``page_content`` also counts as text, anything else is invalid
    input for the source metrics (the response metrics still run)."""

    model_config = ConfigDict(frozen=True)

    query: str = ""
    sources: list[Any] = Field(default_factory=list)
    response: str | None = ""
    id: str | None = None

    @classmethod
    def from_rag(cls, sample: RAGSample) -> ThelmaSample:
        return cls(query=sample.question, sources=list(sample.contexts), response=sample.answer,
                   id=sample.id)

    def source_texts(self) -> tuple[list[str], str | None]:
        """The sources as texts, or the reason they cannot be read as texts."""
        texts = []
        for i, src in enumerate(self.sources, 1):
            if isinstance(src, str):
                texts.append(src)
                continue
            try:  # documents, LangChain Documents, LlamaIndex nodes, dicts with text
                docs = as_documents([src], field=f"source {i}")
            except ConfigError:
                return [], f"source {i} is {type(src).__name__}, not text"
            texts.append(docs[0].text if docs else "")  # a blank source still counts in SP1
        return texts, None

    def key(self) -> str:
        """A stable item key for resumable batches: the id, else a digest of the content."""
        if self.id:
            return self.id
        payload = json.dumps([self.query, [str(s) for s in self.sources], self.response], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


class SampleUsage(BaseModel):
    """Judge calls made for one sample: ``calls`` reached the model, ``cached`` were answered
    from the cache (a shared decomposition, an identical check), ``failed`` failed after retries."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    cached: int = 0
    failed: int = 0
    repairs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ThelmaResult(BaseModel):
    """Every requested metric as a :class:`MetricScore` or :class:`Unscored`, the decompositions
    they were computed from, the Table 2 diagnosis and the judge usage of this sample."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    metrics: dict[str, MetricOutcome] = Field(default_factory=dict)
    claims: list[str] | None = None
    facts: list[list[str]] | None = None
    questions: list[str] | None = None
    sentences: list[str] | None = None
    diagnosis: list[Finding] = Field(default_factory=list)
    usage: SampleUsage = SampleUsage()
    mode: str = "per_component"

    def score(self, metric: str) -> float | None:
        """The metric's score, or None when it was not scored or not requested."""
        value = self.metrics.get(metric)
        return value.score if isinstance(value, MetricScore) else None

    def scores(self) -> dict[str, float | None]:
        return {m: self.score(m) for m in self.metrics}

    def unscored(self) -> dict[str, Unscored]:
        return {m: v for m, v in self.metrics.items() if isinstance(v, Unscored)}
