"""OpenSearch request bodies and reply parsing as pure functions (no client, no I/O).

Every body here follows the shapes documented for OpenSearch 2.10-3.x (index with a ``knn_vector``
field, ``match``, ``knn``, ``hybrid``, score-ranker and normalization-processor search pipelines),
so they can be checked without a server. :mod:`langrag_eval.retrieval.opensearch` sends them.

>>> match_body("capital of france", size=3)["query"]
{'match': {'text': {'query': 'capital of france'}}}
>>> rrf_pipeline_body(rank_constant=60)["phase_results_processors"][0]["score-ranker-processor"]
{'combination': {'technique': 'rrf', 'rank_constant': 60}}
>>> parse_version({"version": {"number": "2.19.1", "distribution": "opensearch"}})
(2, 19, 1)
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConfigError, RetrievalError
from ..types import Document
from .base import Chunk

__all__ = [
    "ENGINES",
    "MAX_KNN_K",
    "SPACES",
    "Capabilities",
    "bulk_body",
    "bulk_failures",
    "check_engine",
    "checked_batch",
    "error_summary",
    "hits_to_documents",
    "hybrid_body",
    "index_body",
    "knn_body",
    "mapped_dimension",
    "mapped_vector",
    "match_body",
    "normalization_pipeline_body",
    "parse_version",
    "pipeline_id",
    "rrf_pipeline_body",
    "says_unsupported",
    "sum_to_one",
    "version_limits",
]

ENGINES = ("faiss", "lucene")
SPACES = ("cosinesimil", "l2", "innerproduct")
MAX_KNN_K = 10_000  # the k-NN query accepts k in 1..10000


def check_engine(engine: str, space_type: str) -> None:
    """Refuse what OpenSearch 3 refuses (nmslib) and unknown engines or spaces, before any request."""
    if engine == "nmslib":
        raise ConfigError("engine 'nmslib' cannot create new indexes on OpenSearch 3.0+; "
                          "use engine='faiss' (default) or 'lucene'")
    if engine not in ENGINES:
        raise ConfigError(f"knn engine {engine!r} is unknown; use one of {ENGINES}")
    if space_type not in SPACES:
        raise ConfigError(f"knn space {space_type!r} is unknown; use one of {SPACES}")


def index_body(*, dimension: int | None, engine: str = "faiss", space_type: str = "cosinesimil",
               text_field: str = "text", vector_field: str = "embedding", shards: int | None = None,
               ef_construction: int = 128, m: int = 16) -> dict[str, Any]:
    """``PUT /<index>`` body: a BM25 ``text`` field, and a ``knn_vector`` field when ``dimension``
    is given (HNSW, engine and space as chosen).

    >>> b = index_body(dimension=3)
    >>> b["mappings"]["properties"]["embedding"]["method"]["engine"], b["settings"]["index"]["knn"]
    ('faiss', True)
    >>> "embedding" in index_body(dimension=None)["mappings"]["properties"]
    False
    """
    check_engine(engine, space_type)
    settings: dict[str, Any] = {}
    properties: dict[str, Any] = {text_field: {"type": "text"}, "metadata": {"type": "object"}}
    if dimension is not None:
        if dimension < 1:
            raise ConfigError(f"vector dimension must be at least 1, got {dimension}")
        settings["knn"] = True
        properties[vector_field] = {
            "type": "knn_vector", "dimension": int(dimension), "space_type": space_type,
            "method": {"name": "hnsw", "engine": engine,
                       "parameters": {"ef_construction": ef_construction, "m": m}}}
    if shards is not None:
        settings["number_of_shards"] = int(shards)
    body: dict[str, Any] = {"mappings": {"properties": properties}}
    if settings:
        body = {"settings": {"index": settings}, **body}
    return body


def _source_filter(vector_field: str) -> dict[str, Any]:
    # Vectors are large and no caller needs them back.
    return {"excludes": [vector_field]}


def match_body(text: str, *, size: int, text_field: str = "text",
               vector_field: str = "embedding") -> dict[str, Any]:
    """BM25 ``match`` query body (BM25 is the default similarity of a ``text`` field)."""
    return {"size": size, "query": {"match": {text_field: {"query": text}}},
            "_source": _source_filter(vector_field)}


def _check_k(k: int, what: str) -> int:
    if not 1 <= k <= MAX_KNN_K:
        raise ConfigError(f"{what} must be between 1 and {MAX_KNN_K} for an OpenSearch knn query, got {k}")
    return int(k)


def _vector(vector: Sequence[float]) -> list[float]:
    values = [float(x) for x in vector]
    if not values or not all(math.isfinite(x) for x in values):
        raise ConfigError("the query vector is empty or holds NaN/infinity; check the embedding model")
    return values


def knn_body(vector: Sequence[float], *, k: int, size: int | None = None,
             vector_field: str = "embedding") -> dict[str, Any]:
    """``knn`` query body: exactly one of k / max_distance / min_score, here ``k`` (1..10000).

    >>> knn_body([0.1, 0.2], k=5)["query"]
    {'knn': {'embedding': {'vector': [0.1, 0.2], 'k': 5}}}
    """
    k = _check_k(k, "k")
    return {"size": size or k, "query": {"knn": {vector_field: {"vector": _vector(vector), "k": k}}},
            "_source": _source_filter(vector_field)}


def hybrid_body(text: str, vector: Sequence[float], *, size: int, depth: int, text_field: str = "text",
                vector_field: str = "embedding", knn_k: int | None = None) -> dict[str, Any]:
    """Top-level ``hybrid`` query with a ``match`` and a ``knn`` sub-query (at most 5 are allowed).

    It must be sent with a search pipeline; without one OpenSearch returns uncombined hits. Each
    sub-query contributes its best ``size`` hits; the knn one visits ``knn_k`` (default ``depth``)
    candidates, as a plain knn search of the same backend does.
    """
    return {"size": size,
            "query": {"hybrid": {"queries": [
                {"match": {text_field: {"query": text}}},
                {"knn": {vector_field: {"vector": _vector(vector), "k": _check_k(knn_k or depth, "depth")}}}]}},
            "_source": _source_filter(vector_field)}


def sum_to_one(weights: Sequence[float]) -> list[float]:
    """Scale weights to sum to 1, as the normalization processor requires. A weighted mean is
    unchanged by the scaling, so ``(1, 1)`` and ``(0.5, 0.5)`` mean the same combination.

    >>> sum_to_one((1.0, 3.0))
    [0.25, 0.75]
    """
    total = float(sum(weights))
    if total <= 0 or any(w < 0 for w in weights):
        raise ConfigError(f"weights must be non-negative with a positive sum, got {list(weights)}")
    return [float(w) / total for w in weights]


def rrf_pipeline_body(*, rank_constant: int = 60,
                      weights: Sequence[float] | None = None) -> dict[str, Any]:
    """Search pipeline with the score-ranker processor doing RRF (OpenSearch 2.19+).

    Weights are sent only when they differ (scaled to sum to 1); equal weights are plain RRF.
    """
    if not 1 <= rank_constant <= 10_000:
        raise ConfigError(f"rank_constant must be between 1 and 10000, got {rank_constant}")
    combination: dict[str, Any] = {"technique": "rrf", "rank_constant": int(rank_constant)}
    if weights is not None and len({float(w) for w in weights}) > 1:
        combination["parameters"] = {"weights": sum_to_one(weights)}
    return {"description": "langrag-eval hybrid search fused with reciprocal rank fusion",
            "phase_results_processors": [{"score-ranker-processor": {"combination": combination}}]}


def normalization_pipeline_body(*, technique: str = "min_max",
                                weights: Sequence[float] = (0.5, 0.5)) -> dict[str, Any]:
    """Search pipeline with the normalization processor: min_max or l2, weighted arithmetic mean."""
    if technique not in ("min_max", "l2"):
        raise ConfigError(f"normalization {technique!r} is unknown; use 'min_max' or 'l2'")
    return {"description": "langrag-eval hybrid search with normalized, weighted scores",
            "phase_results_processors": [{"normalization-processor": {
                "normalization": {"technique": technique},
                "combination": {"technique": "arithmetic_mean",
                                "parameters": {"weights": sum_to_one(weights)}}}}]}


def pipeline_id(body: Mapping[str, Any]) -> str:
    """A stable pipeline id derived from the body, so equal settings share one pipeline.

    >>> pipeline_id(rrf_pipeline_body(rank_constant=60))
    'langrag-rrf-k60'
    """
    proc = body["phase_results_processors"][0]
    if "score-ranker-processor" in proc:
        comb = proc["score-ranker-processor"]["combination"]
        name = f"langrag-rrf-k{comb['rank_constant']}"
    else:
        norm = proc["normalization-processor"]
        comb = norm["combination"]
        name = f"langrag-norm-{norm['normalization']['technique']}"
    weights = comb.get("parameters", {}).get("weights")
    if weights:
        name += "-w" + "-".join(f"{w:.6g}" for w in weights)
    return re.sub(r"[^a-z0-9_-]", "_", name.lower())


def checked_batch(chunks: Sequence[Chunk], vectors: np.ndarray | None
                  ) -> tuple[list[Chunk], np.ndarray | None, list[tuple[str, str]]]:
    """Check a batch before sending it: a chunk without text, or whose vector holds NaN/infinity,
    fails on its own (reported with its id, the rest go on); a vector array of the wrong shape
    refuses the whole batch with a RetrievalError.

    >>> kept, rows, failed = checked_batch(
    ...     [Chunk(id="a", text="x"), Chunk(id="b", text="y"), Chunk(id="c", text=" ")],
    ...     np.array([[1.0, 0.0], [np.nan, 1.0], [0.0, 1.0]]))
    >>> [c.id for c in kept], rows.shape, [i for i, _ in failed]
    (['a'], (1, 2), ['c', 'b'])
    """
    chunks = list(chunks)
    if vectors is not None:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(chunks):
            raise RetrievalError(f"dimension mismatch: got vectors of shape {tuple(vectors.shape)} for "
                                 f"{len(chunks)} chunks; give one row per chunk, all of one length")
    has_text = np.array([bool(c.text and c.text.strip()) for c in chunks], dtype=bool)
    failed = [(c.id, "chunk has no text: give it non-empty text or leave it out")
              for c, ok in zip(chunks, has_text) if not ok]
    keep = has_text
    if vectors is not None:
        finite = np.isfinite(vectors).all(axis=1) if len(chunks) else has_text
        failed += [(c.id, "vector holds NaN or infinity: check the embedding model")
                   for c, ok, t in zip(chunks, finite, has_text) if t and not ok]
        keep = has_text & finite
        vectors = vectors[keep]
    return [c for c, ok in zip(chunks, keep) if ok], vectors, failed


def bulk_body(chunks: Sequence[Chunk], vectors: np.ndarray | None, *, text_field: str = "text",
              vector_field: str = "embedding") -> list[dict[str, Any]]:
    """``_bulk`` lines (action, source, action, source, ...) for the chunks, vectors optional."""
    lines: list[dict[str, Any]] = []
    for i, chunk in enumerate(chunks):
        source: dict[str, Any] = {text_field: chunk.text, "metadata": dict(chunk.metadata)}
        if vectors is not None:
            source[vector_field] = [float(x) for x in vectors[i]]
        lines += [{"index": {"_id": chunk.id}}, source]
    return lines


def bulk_failures(reply: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(id, reason)`` for every item of a ``_bulk`` reply that failed.

    >>> bulk_failures({"errors": True, "items": [{"index": {"_id": "a", "status": 201}},
    ...     {"index": {"_id": "b", "status": 400, "error": {"type": "mapper_parsing_exception",
    ...                                                      "reason": "bad field"}}}]})
    [('b', 'mapper_parsing_exception: bad field')]
    """
    failed = []
    for item in reply.get("items", []):
        (result,) = item.values()
        if "error" in result or int(result.get("status", 200)) >= 300:
            failed.append((str(result.get("_id")), error_summary(result.get("error"))))
    return failed


def hits_to_documents(reply: Mapping[str, Any], *, text_field: str = "text") -> list[Document]:
    """Search reply -> documents, best first, with the server's own ``_score``."""
    docs = []
    for hit in reply.get("hits", {}).get("hits", []):
        source = hit.get("_source") or {}
        score = hit.get("_score")
        docs.append(Document(id=str(hit["_id"]), text=str(source.get(text_field, "")),
                             score=None if score is None else float(score),
                             metadata=dict(source.get("metadata") or {})))
    return docs


def mapped_dimension(mapping_reply: Mapping[str, Any], *, vector_field: str = "embedding") -> int | None:
    """The ``knn_vector`` dimension in a ``GET /<index>/_mapping`` reply; None without that field.

    >>> mapped_dimension({"i": {"mappings": {"properties": {"embedding": {"type": "knn_vector",
    ...                                                                   "dimension": 384}}}}})
    384
    """
    for index_mapping in mapping_reply.values():
        field = index_mapping.get("mappings", {}).get("properties", {}).get(vector_field)
        if field and field.get("type") == "knn_vector":
            return int(field["dimension"])
    return None


def mapped_vector(mapping_reply: Mapping[str, Any], *, vector_field: str = "embedding") -> dict[str, Any] | None:
    """The ``knn_vector`` field's ``dimension``, ``engine`` and ``space_type`` (None where the
    mapping does not say) in a ``GET /<index>/_mapping`` reply; None without that field.

    >>> mapped_vector({"i": {"mappings": {"properties": {"embedding": {"type": "knn_vector",
    ...     "dimension": 3, "method": {"engine": "lucene", "space_type": "l2"}}}}}})
    {'dimension': 3, 'engine': 'lucene', 'space_type': 'l2'}
    """
    for index_mapping in mapping_reply.values():
        field = index_mapping.get("mappings", {}).get("properties", {}).get(vector_field)
        if field and field.get("type") == "knn_vector":
            method = field.get("method") or {}
            return {"dimension": int(field["dimension"]), "engine": method.get("engine"),
                    "space_type": field.get("space_type") or method.get("space_type")}
    return None


def parse_version(info: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """``GET /`` reply -> OpenSearch version; None for another distribution or no version."""
    version = info.get("version") or {}
    if version.get("distribution") != "opensearch":  # Elasticsearch has no such field
        return None
    found = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", str(version.get("number", "")))
    if not found:
        return None
    major, minor, patch = found.groups()
    return int(major), int(minor), int(patch or 0)


@dataclass
class Capabilities:
    """What the cluster was found to support. ``unavailable`` maps a feature (``knn``, ``hybrid``,
    ``server_rrf``, ``normalization``) to the reason it is off, from the version or from a reply."""

    version: tuple[int, int, int] | None = None
    probed: bool = False
    unavailable: dict[str, str] = field(default_factory=dict)


def version_limits(version: tuple[int, int, int] | None) -> dict[str, str]:
    """Features a server version rules out, each with the reason (nothing when unknown: then the
    server's replies decide).

    >>> sorted(version_limits((2, 15, 0)))
    ['faiss_cosinesimil', 'server_rrf']
    >>> sorted(version_limits((3, 0, 0)))
    ['server_rrf_weights']
    """
    if version is None:
        return {}
    text = ".".join(map(str, version))
    limits = {}
    if version < (2, 10):
        limits["hybrid"] = f"the hybrid query needs OpenSearch 2.10+, the cluster is {text}"
    if version < (2, 19):
        limits["server_rrf"] = (f"the score-ranker (RRF) processor needs OpenSearch 2.19+, "
                                f"the cluster is {text}")
        limits["faiss_cosinesimil"] = f"faiss with cosinesimil needs OpenSearch 2.19+, the cluster is {text}"
    elif version < (3, 1):
        # neural-search 2.19.x refuses RRF weights and 3.0.x reads them and ranks without them
        # ("Not currently using weights for RRF"); they apply from 3.1.
        limits["server_rrf_weights"] = (f"the score-ranker processor of OpenSearch {text} does not "
                                        f"apply RRF weights (they apply from 3.1)")
    return limits


def error_summary(error: Any) -> str:
    """One line from an OpenSearch error object: ``type: reason`` (+ the cause's reason).

    >>> error_summary({"type": "x", "reason": "bad", "caused_by": {"reason": "why"}})
    'x: bad (why)'
    """
    if isinstance(error, Mapping):
        text = f"{error.get('type', 'error')}: {error.get('reason', '')}".strip()
        cause = error.get("caused_by")
        if isinstance(cause, Mapping) and cause.get("reason"):
            text += f" ({cause['reason']})"
        return text
    return str(error) if error else "unknown error"


_UNSUPPORTED = re.compile(r"not supported|unsupported|unknown query|no \[query\] registered|"
                          r"no handler found|invalid processor type|unknown processor|"
                          r"no processor type exists", re.IGNORECASE)


def says_unsupported(status: Any, info: Any) -> bool:
    """Whether an error reply means the server lacks a feature (as opposed to a bad request)."""
    if status not in (400, 404, 405, 501):
        return False
    texts: Iterable[Any] = [info]
    if isinstance(info, Mapping):
        error = info.get("error", info)
        texts = [error] if not isinstance(error, Mapping) else [
            error.get("type"), error.get("reason"),
            *[c.get("reason") for c in error.get("root_cause", []) if isinstance(c, Mapping)]]
    return any(_UNSUPPORTED.search(str(t)) for t in texts if t)
