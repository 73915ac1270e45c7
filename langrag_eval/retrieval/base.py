"""The retrieval interface every backend implements, and the one concrete :class:`Retriever`.

A backend stores :class:`Chunk` objects (text + optional vector) and answers three kinds of search:
``bm25`` (text), ``knn`` (vector) and ``hybrid`` (both, fused as :class:`HybridSettings` says).
Backends are async first; :class:`SyncSearchMixin` derives ``index`` / ``search`` / ``count`` once.

>>> from langrag_eval.retrieval import EmbeddedBackend
>>> backend = EmbeddedBackend()
>>> backend.index([Chunk(id="a", text="Paris is the capital of France."),
...                Chunk(id="b", text="Berlin is the capital of Germany.")]).indexed
2
>>> [d.id for d in Retriever(backend, k=1).retrieve("capital of France")]
['a']
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, get_args, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..models.embeddings import Embedder
from ..errors import ConfigError, RetrievalError
from ..runtime.concurrency import gather_bounded, run_sync
from ..types import Document
# in a module of its own: `langrag-eval search --help` makes its options from them without numpy
from .settings import Fusion, HybridSettings, Mode, Normalization

__all__ = [
    "Chunk",
    "Fusion",
    "HybridSettings",
    "IngestReport",
    "Mode",
    "Normalization",
    "Retriever",
    "SearchBackend",
    "SyncSearchMixin",
    "run_sync",
]

T = TypeVar("T")


class Chunk(BaseModel):
    """One unit of indexed text. ``id`` must be unique within an index and stable across runs."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class IngestReport(BaseModel):
    """What an ``aindex`` call did: how many chunks went in, and each one refused with its reason."""

    indexed: int
    failed: list[tuple[str, str]] = Field(default_factory=list)
    # re-indexing sources into a backend that already held them (see ``ingest``):
    added: int = 0       # chunks the backend did not hold before
    unchanged: int = 0   # chunks it held already, with the same text
    removed: int = 0     # chunks of changed or vanished sources taken out


@runtime_checkable
class SearchBackend(Protocol):
    """A store of chunks answering BM25, KNN and hybrid searches. Scores are the backend's own."""

    name: str

    async def aindex(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> IngestReport: ...

    async def asearch(self, *, text: str | None = None, vector: Sequence[float] | None = None,
                      mode: Mode = "bm25", k: int = 10,
                      hybrid: HybridSettings | None = None) -> list[Document]: ...

    async def acount(self) -> int: ...



class SyncSearchMixin:
    """Sync ``index`` / ``search`` / ``count`` derived from the async methods, written once."""

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> IngestReport:
        return run_sync(self.aindex(chunks, vectors))  # type: ignore[attr-defined]

    def search(self, *, text: str | None = None, vector: Sequence[float] | None = None,
               mode: Mode = "bm25", k: int = 10, hybrid: HybridSettings | None = None) -> list[Document]:
        return run_sync(self.asearch(text=text, vector=vector, mode=mode, k=k,  # type: ignore[attr-defined]
                                     hybrid=hybrid))

    def count(self) -> int:
        return run_sync(self.acount())  # type: ignore[attr-defined]


class Retriever:
    """A backend + a mode + an embedder: turns a query string into ranked :class:`Document` objects.

    The embedder is needed for ``knn`` and ``hybrid``; when none is given the packaged MiniLM
    default is loaded on first use (extra ``embeddings``).
    """

    def __init__(self, backend: SearchBackend, *, mode: Mode = "bm25", embedder: Embedder | None = None,
                 k: int = 10, hybrid: HybridSettings = HybridSettings()) -> None:
        if mode not in get_args(Mode):
            raise ConfigError(f"retrieval mode {mode!r} is unknown; use one of {get_args(Mode)}")
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        self.backend, self.mode, self.k, self.hybrid = backend, mode, k, hybrid
        if embedder is not None and not callable(getattr(embedder, "embed", None)):
            # fail here, not at the first query: a framework embedding object needs its adapter
            raise ConfigError(f"embedder {type(embedder).__name__} has no embed(texts) method; wrap a "
                              "LangChain Embeddings or LlamaIndex BaseEmbedding in the integration's "
                              "embedder adapter (LangChainEmbedder, LlamaIndexEmbedder)")
        self._embedder = embedder
        self.name: str = mode

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from ..models.embeddings import default_embedder
            self._embedder = default_embedder()
        return self._embedder

    async def aretrieve(self, query: str, k: int | None = None, *, mode: Mode | None = None,
                        hybrid: HybridSettings | dict[str, Any] | None = None) -> list[Document]:
        """The top ``k`` (default: the retriever's ``k``) documents for ``query``, best first.
        ``mode`` and ``hybrid`` override the retriever's own for this call only."""
        return (await self.aretrieve_many([query], k, mode=mode, hybrid=hybrid))[0]

    def retrieve(self, query: str, k: int | None = None, **search: Any) -> list[Document]:
        """Sync form of :meth:`aretrieve`; no event loop when the backend has a sync ``search_many``
        or ``search`` (the embedded and OpenSearch backends do)."""
        return self.retrieve_many([query], k, **search)[0]

    @staticmethod
    def search_arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
        """Per-call search arguments a framework passes (``k``, ``mode``, ``hybrid``), checked:
        an argument this retriever cannot honour is refused rather than silently ignored."""
        unknown = sorted(set(kwargs) - {"k", "mode", "hybrid"})
        if unknown:
            raise ConfigError(f"unknown search argument(s) {', '.join(unknown)}; a langrag retriever "
                              "takes k, mode and hybrid")
        return dict(kwargs)

    async def aretrieve_many(self, queries: Sequence[str], k: int | None = None, *, mode: Mode | None = None,
                             hybrid: HybridSettings | dict[str, Any] | None = None) -> list[list[Document]]:
        """:meth:`aretrieve` for each query: the queries are embedded in one call, and a backend
        with ``asearch_many`` answers them in one batch (the embedded one scores KNN as one matrix
        product); other backends get one ``asearch`` per query, a few at a time."""
        args = self._search_args(k, mode, hybrid)
        texts, vectors = self._texts(queries, args["mode"]), None
        if args["mode"] != "bm25":
            # Embedding is CPU-bound; keep the event loop free for concurrent retrievals.
            vectors = await asyncio.to_thread(self.embedder.embed, list(queries))
        many = getattr(self.backend, "asearch_many", None)
        if many is not None:
            return await many(texts=texts, vectors=vectors, **args)
        return await gather_bounded(list(range(len(queries))), lambda i: self.backend.asearch(
            text=None if texts is None else texts[i], vector=None if vectors is None else vectors[i],
            **args), concurrency=8)

    def retrieve_many(self, queries: Sequence[str], k: int | None = None, *, mode: Mode | None = None,
                      hybrid: HybridSettings | dict[str, Any] | None = None) -> list[list[Document]]:
        """Sync form of :meth:`aretrieve_many`."""
        many, one = getattr(self.backend, "search_many", None), getattr(self.backend, "search", None)
        if many is None and one is None:
            return run_sync(self.aretrieve_many(queries, k, mode=mode, hybrid=hybrid))
        args = self._search_args(k, mode, hybrid)
        texts = self._texts(queries, args["mode"])
        vectors = self.embedder.embed(list(queries)) if args["mode"] != "bm25" else None
        if many is not None:
            return many(texts=texts, vectors=vectors, **args)
        return [one(text=None if texts is None else texts[i], vector=None if vectors is None else vectors[i],
                    **args) for i in range(len(queries))]

    def _texts(self, queries: Sequence[str], mode: Mode) -> list[str] | None:
        if isinstance(queries, str):
            raise RetrievalError("give a list of queries, not one string")
        for query in queries:
            if not isinstance(query, str) or not query.strip():
                raise RetrievalError("empty query: give a question or keywords to search for")
        return None if mode == "knn" else list(queries)

    def _search_args(self, k: int | None, mode: Mode | None = None,
                     hybrid: HybridSettings | dict[str, Any] | None = None) -> dict[str, Any]:
        mode = mode or self.mode
        if mode not in get_args(Mode):
            raise ConfigError(f"retrieval mode {mode!r} is unknown; use one of {get_args(Mode)}")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ConfigError(f"k must be a whole number of at least 1, got {k!r}")
        if isinstance(hybrid, dict):
            hybrid = dataclasses.replace(self.hybrid, **hybrid)
        return {"mode": mode, "k": k or self.k, "hybrid": (hybrid or self.hybrid) if mode == "hybrid" else None}

    def __repr__(self) -> str:
        return f"Retriever(backend={getattr(self.backend, 'name', '?')!r}, mode={self.mode!r}, k={self.k})"
