"""The query half of :class:`~langrag_eval.retrieval.opensearch.OpenSearchBackend`: BM25
``match``, ``knn``, and hybrid search, as *plans* of calls (see :mod:`.opensearch_transport`) the
backend's drivers run.

Hybrid search is fused by the server where it can: its score-ranker RRF pipeline (2.19+) or its
normalization pipeline, each created once per backend. When the cluster lacks a feature (too old a
version, a refused pipeline or hybrid query), the same fusion runs client-side over a BM25 and a knn
search, and :attr:`OpenSearchQueries.fallbacks` says why; the first fallback for a reason is logged
as a warning. A cluster that cannot run knn at all refuses every mode but BM25.

>>> from langrag_eval.retrieval.opensearch import OpenSearchBackend
>>> backend = OpenSearchBackend(index="docs", client=object())  # no request is sent below
>>> backend.search(text="solar panels", mode="hybrid")
Traceback (most recent call last):
...
langrag_eval.errors.RetrievalError: hybrid search needs a query vector: embed the query (Retriever does this) or use mode='bm25'
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, get_args

from ..errors import ConfigError, RetrievalError
from ..types import Document
from . import opensearch_requests as osr
from .base import HybridSettings, Mode
from .fusion import combine_documents, rrf_documents
from .opensearch_requests import Capabilities
from .opensearch_transport import Call, Plan, error_object

__all__ = ["OpenSearchQueries"]

# The backend's logger: one name for all the backend says, which the command line turns down.
logger = logging.getLogger("langrag_eval.retrieval.opensearch")


class OpenSearchQueries:
    """The search plans :class:`~langrag_eval.retrieval.opensearch.OpenSearchBackend` inherits:
    checked arguments, BM25, knn, and hybrid fusion on the server or, failing that, client-side.
    The index's name, fields and capabilities, and its vector dimension, come from the backend."""

    url: str
    index_name: str
    text_field: str
    vector_field: str
    capabilities: Capabilities
    fallbacks: dict[str, str]  # fusion -> why it ran client-side instead
    knn_candidates: int  # candidates a knn search visits (at least k)
    _pipelines: set[str]  # ids of the search pipelines created on the cluster

    if TYPE_CHECKING:
        def _caps_plan(self) -> Plan[Capabilities]: ...
        def _dimension_plan(self) -> Plan[int | None]: ...
        def _check_dimension(self, have: int | None, got: int, what: str) -> None: ...

    def _search_plan(self, text: str | None, vector: Sequence[float] | None, mode: Mode, k: int,
                     hybrid: HybridSettings | None) -> Plan[list[Document]]:
        if mode not in get_args(Mode):
            raise ConfigError(f"retrieval mode {mode!r} is unknown; use one of {get_args(Mode)}")
        if not 1 <= k <= osr.MAX_KNN_K:
            raise ConfigError(f"k must be between 1 and {osr.MAX_KNN_K}, got {k}")
        if mode != "knn" and (not text or not text.strip()):
            raise RetrievalError("empty query: give a question or keywords to search for")
        if mode != "bm25" and (vector is None or len(vector) == 0):
            raise RetrievalError(f"{mode} search needs a query vector: embed the query "
                                 f"(Retriever does this) or use mode='bm25'")
        if mode == "bm25":
            return (yield from self._bm25_plan(text, k))  # type: ignore[arg-type]
        if mode == "knn":
            return (yield from self._knn_plan(vector, k))  # type: ignore[arg-type]
        return (yield from self._hybrid_plan(text, vector, k, hybrid or HybridSettings()))  # type: ignore

    def _bm25_plan(self, text: str, size: int) -> Plan[list[Document]]:
        body = osr.match_body(text, size=size, text_field=self.text_field, vector_field=self.vector_field)
        reply = yield Call("search", {"index": self.index_name, "body": body}, "run a BM25 search")
        return osr.hits_to_documents(reply, text_field=self.text_field)

    def _knn_plan(self, vector: Sequence[float], k: int) -> Plan[list[Document]]:
        if "knn" in self.capabilities.unavailable:
            raise self._no_knn(self.capabilities.unavailable["knn"])
        self._check_dimension((yield from self._dimension_plan()), len(vector), "the query vector")
        # The HNSW search visits ``k`` candidates per segment: asking for more than are returned
        # buys recall (at 100, recall@10 >= 0.99 on the live suite's corpus; at 10 it was 0.87).
        body = osr.knn_body(vector, k=min(max(k, self.knn_candidates), osr.MAX_KNN_K), size=k,
                            vector_field=self.vector_field)
        try:
            reply = yield Call("search", {"index": self.index_name, "body": body}, "run a knn search")
        except Exception as exc:
            if not osr.says_unsupported(getattr(exc, "status_code", None), getattr(exc, "info", None)):
                raise
            reason = osr.error_summary(error_object(exc))
            self.capabilities.unavailable["knn"] = reason
            raise self._no_knn(reason) from exc
        return osr.hits_to_documents(reply, text_field=self.text_field)

    def _no_knn(self, reason: str) -> RetrievalError:
        return RetrievalError(f"the cluster at {self.url} cannot run knn queries ({reason}): enable "
                              f"the k-NN plugin, or search with mode='bm25'")

    def _hybrid_plan(self, text: str, vector: Sequence[float], k: int,
                     settings: HybridSettings) -> Plan[list[Document]]:
        if "knn" in self.capabilities.unavailable:  # no fusion of any kind can help then
            raise self._no_knn(self.capabilities.unavailable["knn"])
        depth = max(settings.depth, k)
        if settings.fusion != "rrf":
            docs, reason = yield from self._server_hybrid_plan(text, vector, k, depth, settings)
            if docs is not None:
                return docs
            self._note_fallback(settings.fusion, reason)
        bm25 = yield from self._bm25_plan(text, depth)
        knn = yield from self._knn_plan(vector, depth)
        if settings.fusion == "normalization":
            return combine_documents([bm25, knn], method=settings.normalization,
                                     weights=settings.weights, top_k=k)
        return rrf_documents([bm25, knn], k=settings.rank_constant, weights=settings.weights, top_k=k)

    def _server_hybrid_plan(self, text: str, vector: Sequence[float], k: int, depth: int,
                            settings: HybridSettings) -> Plan[tuple[list[Document] | None, str]]:
        """The server-side fusion, or (None, why it is not available)."""
        caps = yield from self._caps_plan()
        features = ["knn", "hybrid", settings.fusion]
        if settings.fusion == "server_rrf" and len(set(settings.weights)) > 1:
            features.append("server_rrf_weights")  # never silently unweighted
        for feature in features:
            if feature in caps.unavailable:
                return None, caps.unavailable[feature]
        self._check_dimension((yield from self._dimension_plan()), len(vector), "the query vector")
        if settings.fusion == "server_rrf":
            pipeline = osr.rrf_pipeline_body(rank_constant=settings.rank_constant, weights=settings.weights)
        else:
            pipeline = osr.normalization_pipeline_body(technique=settings.normalization,
                                                   weights=settings.weights)
        pid = osr.pipeline_id(pipeline)
        if pid not in self._pipelines:
            try:
                yield Call("search_pipeline.put", {"id": pid, "body": pipeline},
                            f"create search pipeline {pid}")
            except Exception as exc:
                if getattr(exc, "status_code", None) not in (400, 404, 405, 501):
                    raise
                reason = f"search pipeline refused: {osr.error_summary(error_object(exc))}"
                caps.unavailable[settings.fusion] = reason
                return None, reason
            self._pipelines.add(pid)
        body = osr.hybrid_body(text, vector, size=depth, depth=depth, text_field=self.text_field,
                               vector_field=self.vector_field,
                               knn_k=min(max(depth, self.knn_candidates), osr.MAX_KNN_K))
        try:
            reply = yield Call("search", {"index": self.index_name, "body": body, "search_pipeline": pid},
                                "run a hybrid search")
        except Exception as exc:
            if not osr.says_unsupported(getattr(exc, "status_code", None), getattr(exc, "info", None)):
                raise
            reason = f"hybrid query refused: {osr.error_summary(error_object(exc))}"
            caps.unavailable["hybrid"] = reason
            return None, reason
        return osr.hits_to_documents(reply, text_field=self.text_field)[:k], ""

    def _note_fallback(self, fusion: str, reason: str) -> None:
        first = self.fallbacks.get(fusion) != reason
        self.fallbacks[fusion] = reason
        how = "min_max/l2 normalization" if fusion == "normalization" else "RRF"
        (logger.warning if first else logger.debug)(
            "hybrid fusion %r is not available on %s (%s); fusing client-side with %s instead",
            fusion, self.url, reason, how)
