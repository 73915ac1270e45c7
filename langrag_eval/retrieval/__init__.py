"""Retrieval: one interface, an embedded backend (default) and an OpenSearch backend, RRF fusion,
ingestion and retrieval metrics.

>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend, Retriever
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="1", text="The cat sat on the mat."), Chunk(id="2", text="Dogs bark.")])
>>> Retriever(backend, mode="bm25", k=1).retrieve("cat")[0].id
'1'
"""

from __future__ import annotations

from .. import lazy_getattr
from .base import (
    Chunk, Fusion, HybridSettings, IngestReport, Mode, Normalization, Retriever, SearchBackend,
    SyncSearchMixin, run_sync,
)
from .chunking import Source, chunk_sources, chunk_text
from .fusion import combine_documents, combine_normalized, normalize, rrf, rrf_documents

# Imported eagerly: the function `ingest` shares its name with its module, and a lazy import
# would leave the module, not the function, as the package attribute.
from .ingest import aingest, ingest, load_path  # noqa: E402

__all__ = [
    "Chunk",
    "EmbeddedBackend",
    "OpenSearchBackend",
    "Fusion",
    "HybridSettings",
    "IngestReport",
    "Mode",
    "Normalization",
    "Retriever",
    "SearchBackend",
    "Source",
    "SyncSearchMixin",
    "aingest",
    "chunk_sources",
    "chunk_text",
    "combine_documents",
    "combine_normalized",
    "evaluate_run",
    "ingest",
    "load_path",
    "normalize",
    "paper_mrr",
    "rrf",
    "rrf_documents",
    "run_sync",
]

# Heavier modules load on first use so `import langrag_eval.retrieval` stays cheap.
_LAZY = {
    "EmbeddedBackend": ".embedded",
    "OpenSearchBackend": ".opensearch",
    "evaluate_run": ".metrics",
    "paper_mrr": ".metrics",
}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
