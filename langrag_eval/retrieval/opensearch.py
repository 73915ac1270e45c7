"""OpenSearch backend (extra ``opensearch``): BM25 ``match``, ``knn``, and hybrid search fused
client-side (RRF), by the server's score-ranker RRF pipeline (2.19+) or by its normalization
pipeline, with fallback to client-side fusion when the cluster lacks a feature. Here are the
clients, the index (created, checked, bulk-indexed, counted, deleted) and the server's capabilities;
the searches are :class:`~.opensearch_queries.OpenSearchQueries`, which the backend inherits.

Each operation is written once as a *plan* (see :mod:`.opensearch_transport`), run by a sync driver
on ``OpenSearch`` or by an async one on ``AsyncOpenSearch``, which lives on the backend's own
event-loop thread so one connection pool serves every caller loop and never crosses loops.

Credentials come from arguments or ``OPENSEARCH_URL`` / ``OPENSEARCH_USER`` / ``OPENSEARCH_PASSWORD``;
they are passed to the client as basic auth, never kept in the URL, logged, or shown in errors/repr.

>>> backend = OpenSearchBackend("https://admin:secret@localhost:9200", index="docs")
>>> backend
OpenSearchBackend(url='https://localhost:9200', index='docs', auth='basic', verify_certs=True)
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from ..errors import ConfigError, DataError, RetrievalError, redact
from ..files.reading import check_regular
from ..types import Document
from . import opensearch_requests as osr
from .base import Chunk, HybridSettings, IngestReport, Mode
from .opensearch_maintenance import ids_plan, remove_plan
from .opensearch_queries import OpenSearchQueries
from .opensearch_requests import Capabilities
from .opensearch_transport import (
    Call, LoopThread, Plan, Secret, drive_async, drive_sync, error_object, method, resolve_credentials,
    to_retrieval_error,
)

__all__ = ["Capabilities", "OpenSearchBackend"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


class OpenSearchBackend(OpenSearchQueries):
    """A :class:`~langrag_eval.retrieval.SearchBackend` over one OpenSearch index.

    ``url``/``user``/``password`` default to ``OPENSEARCH_URL``/``OPENSEARCH_USER``/
    ``OPENSEARCH_PASSWORD``. TLS certificates are verified unless ``verify_certs=False``;
    ``ca_certs`` names a CA bundle for self-signed clusters. The index is created on the first
    :meth:`aindex` call, with a ``knn_vector`` field when vectors are given (``engine``/``space_type``,
    faiss + cosinesimil by default, which needs OpenSearch 2.19+). A knn search visits
    ``knn_candidates`` (at least ``k``) neighbours and returns the best ``k``. ``client``/``async_client`` accept
    ready-made clients (they are then not closed by :meth:`close`).
    """

    def __init__(self, url: str | None = None, *, index: str = "langrag-chunks", user: str | None = None,
                 password: str | None = None, verify_certs: bool = True, ca_certs: str | None = None,
                 engine: str = "faiss", space_type: str = "cosinesimil", text_field: str = "text",
                 vector_field: str = "embedding", shards: int | None = None, timeout: float = 30.0,
                 max_retries: int = 1, bulk_size: int = 500, knn_candidates: int = 100, client: Any = None,
                 async_client: Any = None) -> None:
        osr.check_engine(engine, space_type)
        self.url, user, password = resolve_credentials(url, user, password, injected=client is not None)
        if not index or index != index.lower() or index.startswith(("_", "-", "+")):
            raise ConfigError(f"OpenSearch index names are lowercase and do not start with _, - or +; "
                              f"got {index!r}")
        if bulk_size < 1:
            raise ConfigError(f"bulk_size must be at least 1, got {bulk_size}")
        self.name = "opensearch"
        self.index_name, self.engine, self.space_type = index, engine, space_type
        self.text_field, self.vector_field, self.shards = text_field, vector_field, shards
        self.verify_certs, self.bulk_size = verify_certs, bulk_size
        if knn_candidates < 1:
            raise ConfigError(f"knn_candidates must be at least 1, got {knn_candidates}")
        self.knn_candidates = knn_candidates
        if ca_certs is not None:  # a named pipe would hold the first TLS handshake forever
            try:
                check_regular(ca_certs, what="ca_certs")
            except DataError as exc:
                raise ConfigError(str(exc)) from None
        self._user, self._password = user, Secret(password)
        self._client_options: dict[str, Any] = {
            "verify_certs": verify_certs, "ca_certs": ca_certs, "timeout": timeout,
            "max_retries": max_retries, "retry_on_timeout": max_retries > 0}
        self._client, self._own_client = client, client is None
        self._aclient = async_client
        self._loop: LoopThread | None = None
        self._lock = threading.Lock()
        self.capabilities = Capabilities()
        self.fallbacks: dict[str, str] = {}  # fusion -> why it ran client-side instead
        self._dimension, self._dimension_known = None, False
        self._pipelines: set[str] = set()
        if not verify_certs:
            logger.warning("TLS certificate verification is off for %s (test clusters only)", redact(self.url))
        if user and self.url.startswith("http://") and client is None:
            logger.warning("credentials for %s are sent without TLS; use an https:// URL", redact(self.url))

    def __repr__(self) -> str:
        return (f"OpenSearchBackend(url={redact(self.url)!r}, index={self.index_name!r}, "
                f"auth={'basic' if self._user else None!r}, verify_certs={self.verify_certs})")

    # -- clients and drivers ------------------------------------------------------------------

    def _options(self) -> dict[str, Any]:
        options = {k: v for k, v in self._client_options.items() if v is not None}
        if self._user:
            options["http_auth"] = (self._user, self._password.get())
        return options

    def _sync_client(self) -> Any:
        with self._lock:
            if self._client is None:
                from opensearchpy import OpenSearch
                self._client = OpenSearch(hosts=[self.url], **self._options())
            return self._client

    def _async_client(self) -> Any:
        if self._aclient is not None:  # injected
            return self._aclient
        assert self._loop is not None
        if self._loop.resource is None:  # created on the backend's loop, closed with it
            try:
                from opensearchpy import AsyncOpenSearch
            except ImportError:
                raise ConfigError("the async OpenSearch client needs aiohttp: "
                                  "pip install 'langrag-eval[opensearch]'") from None
            self._loop.resource = AsyncOpenSearch(hosts=[self.url], **self._options())
        return self._loop.resource

    def _run(self, plan: Plan[T]) -> T:
        client = self._sync_client()
        return drive_sync(plan, lambda call: method(client, call.api)(**call.kwargs), self._error)

    async def _arun(self, plan: Plan[T]) -> T:
        if self._aclient is not None:  # an injected client is used on the caller's loop
            return await drive_async(plan, self._acall, self._error)
        if not self._own_client and self.url.startswith("("):  # only a sync client was given
            return await asyncio.to_thread(self._run, plan)
        with self._lock:
            if self._loop is None:
                self._loop = LoopThread()
                weakref.finalize(self, self._loop.stop)
            loop = self._loop
        return await loop.run(drive_async(plan, self._acall, self._error))

    async def _acall(self, call: Call) -> Any:
        return await method(self._async_client(), call.api)(**call.kwargs)

    def close(self) -> None:
        """Close the connection pools this backend opened."""
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None
        if self._loop is not None:
            self._loop.stop()
            self._loop = None

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    def __enter__(self) -> OpenSearchBackend:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the SearchBackend API: async first, sync on the sync client --------------------------

    async def aindex(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> IngestReport:
        """Bulk-index chunks (and their vectors); failed items come back with id and reason."""
        return await self._arun(self._index_plan(chunks, vectors))

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> IngestReport:
        return self._run(self._index_plan(chunks, vectors))

    async def asearch(self, *, text: str | None = None, vector: Sequence[float] | None = None,
                      mode: Mode = "bm25", k: int = 10,
                      hybrid: HybridSettings | None = None) -> list[Document]:
        """The top ``k`` documents, best first, with the server's scores (or the fused score)."""
        return await self._arun(self._search_plan(text, vector, mode, k, hybrid))

    def search(self, *, text: str | None = None, vector: Sequence[float] | None = None,
               mode: Mode = "bm25", k: int = 10, hybrid: HybridSettings | None = None) -> list[Document]:
        return self._run(self._search_plan(text, vector, mode, k, hybrid))

    async def acount(self) -> int:
        """Documents in the index (0 when it does not exist yet)."""
        return await self._arun(self._count_plan())

    def count(self) -> int:
        return self._run(self._count_plan())

    async def aids(self) -> list[str]:
        """The ids of every chunk in the index (for re-indexing: see ``ingest``)."""
        return await self._arun(ids_plan(self.index_name))

    async def adelete(self, ids: Sequence[str]) -> int:
        """Remove the chunks ``ids``; returns how many the cluster removed."""
        return await self._arun(remove_plan(self.index_name, list(ids), self.bulk_size))

    def delete_index(self) -> bool:
        """Delete the index; True when it existed."""
        return self._run(self._delete_plan())

    def probe(self) -> Capabilities:
        """Read the server version (``GET /``) and what it rules out; raises if unreachable."""
        return self._run(self._caps_plan())

    # -- plans ------------------------------------------------------------------------------

    def _caps_plan(self) -> Plan[Capabilities]:
        caps = self.capabilities
        if not caps.probed:
            info = yield Call("info", {}, "read the server version")
            caps.version, caps.probed = osr.parse_version(info), True
            for feature, reason in osr.version_limits(caps.version).items():
                caps.unavailable.setdefault(feature, reason)
        return caps

    def _dimension_plan(self) -> Plan[int | None]:
        if not self._dimension_known:
            reply = yield Call("indices.get_mapping", {"index": self.index_name}, "read the index mapping")
            self._dimension = osr.mapped_dimension(reply, vector_field=self.vector_field)
            self._dimension_known = True
        return self._dimension

    def _ensure_index_plan(self, dimension: int | None) -> Plan[None]:
        exists = yield Call("indices.exists", {"index": self.index_name}, "check the index")
        if not exists:
            if dimension is not None and (self.engine, self.space_type) == ("faiss", "cosinesimil"):
                caps = yield from self._caps_plan()
                if "faiss_cosinesimil" in caps.unavailable:
                    raise RetrievalError(f"{caps.unavailable['faiss_cosinesimil']}: pass engine='lucene' "
                                         f"(--engine lucene) or upgrade the cluster")
            body = osr.index_body(dimension=dimension, engine=self.engine, space_type=self.space_type,
                              text_field=self.text_field, vector_field=self.vector_field,
                              shards=self.shards)
            try:
                yield Call("indices.create", {"index": self.index_name, "body": body}, "create the index")
                self._dimension, self._dimension_known = dimension, True
                return
            except Exception as exc:  # created meanwhile by another writer: check it like any other
                if getattr(exc, "error", None) != "resource_already_exists_exception":
                    raise
        reply = yield Call("indices.get_mapping", {"index": self.index_name}, "read the index mapping")
        field = osr.mapped_vector(reply, vector_field=self.vector_field)
        self._dimension = None if field is None else field["dimension"]
        self._dimension_known = True
        if dimension is not None:
            self._check_dimension(self._dimension, dimension, "the vectors given")
            self._check_method(field)  # type: ignore[arg-type]

    def _check_method(self, field: dict) -> None:
        """Refuse to add vectors to an index whose knn field uses another engine or space: the
        scores of one index would not compare with what this backend was asked for."""
        for key, want in (("engine", self.engine), ("space_type", self.space_type)):
            have = field.get(key)
            if have is not None and have != want:
                option = "--engine" if key == "engine" else "--space"
                raise RetrievalError(
                    f"{key.replace('_', ' ')} mismatch: index {self.index_name!r} was built with "
                    f"{key} {have!r} but {want!r} was asked for; pass {option} {have} to reuse it, "
                    f"or index into a new index")

    def _check_dimension(self, have: int | None, got: int, what: str) -> None:
        if have is None:
            raise RetrievalError(
                f"index {self.index_name!r} has no knn_vector field {self.vector_field!r} (it was built "
                f"without embeddings): search it with mode='bm25', or index into a new index with "
                f"embeddings")
        if have != got:
            raise RetrievalError(
                f"dimension mismatch: index {self.index_name!r} stores {have}-dimension vectors but "
                f"{what} have {got}; use the embedding model the index was built with, or a new index")

    def _index_plan(self, chunks: Sequence[Chunk], vectors: np.ndarray | None) -> Plan[IngestReport]:
        chunks, vectors, failed = osr.checked_batch(chunks, vectors)
        dimension = None if vectors is None else int(vectors.shape[1])
        if not chunks:
            return IngestReport(indexed=0, failed=failed)
        yield from self._ensure_index_plan(dimension)
        sent = 0
        for start in range(0, len(chunks), self.bulk_size):
            batch = chunks[start:start + self.bulk_size]
            rows = None if vectors is None else vectors[start:start + self.bulk_size]
            body = osr.bulk_body(batch, rows, text_field=self.text_field, vector_field=self.vector_field)
            try:
                reply = yield Call("bulk", {"index": self.index_name, "body": body}, "bulk-index chunks")
            except Exception as exc:  # a refused batch (too large, overloaded): report, go on
                if getattr(exc, "status_code", None) not in (413, 429):
                    raise
                status = getattr(exc, "status_code", None)
                why = f"batch refused (HTTP {status}): {osr.error_summary(error_object(exc))}"
                failed += [(c.id, why) for c in batch]
                continue
            sent += len(batch)
            batch_failed = osr.bulk_failures(reply)
            sent -= len(batch_failed)
            failed += batch_failed
        yield Call("indices.refresh", {"index": self.index_name}, "refresh the index")
        return IngestReport(indexed=sent, failed=failed)

    def _count_plan(self) -> Plan[int]:
        exists = yield Call("indices.exists", {"index": self.index_name}, "check the index")
        if not exists:
            return 0
        reply = yield Call("count", {"index": self.index_name}, "count documents")
        return int(reply["count"])

    def _delete_plan(self) -> Plan[bool]:
        exists = yield Call("indices.exists", {"index": self.index_name}, "check the index")
        if exists:
            yield Call("indices.delete", {"index": self.index_name}, "delete the index")
        self._dimension_known = False
        return bool(exists)

    def _error(self, exc: Exception, call: Call | None) -> RetrievalError:
        return to_retrieval_error(exc, call, url=self.url, index=self.index_name)
