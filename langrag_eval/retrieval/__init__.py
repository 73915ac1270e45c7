"""Retrieval: one interface, an embedded backend (default) and an OpenSearch backend, RRF fusion,
ingestion and retrieval metrics.

>>> from langrag_eval.retrieval import Chunk, EmbeddedBackend, Retriever
>>> backend = EmbeddedBackend()
>>> _ = backend.index([Chunk(id="1", text="The cat sat on the mat."), Chunk(id="2", text="Dogs bark.")])
>>> Retriever(backend, mode="bm25", k=1).retrieve("cat")[0].id
'1'
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .. import lazy_getattr
from .settings import Fusion, HybridSettings, Mode, Normalization

if TYPE_CHECKING:
    from .base import Chunk, IngestReport, Retriever, SearchBackend, SyncSearchMixin, run_sync
    from .chunking import Source, chunk_sources, chunk_text
    from .embedded import EmbeddedBackend
    from .fusion import combine_documents, combine_normalized, normalize, rrf, rrf_documents
    from .ingest import aingest, ingest, load_path
    from .metrics import evaluate_run, paper_mrr
    from .opensearch import OpenSearchBackend

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

# Everything but the settings loads on first use: `import langrag_eval.retrieval` stays cheap (no
# numpy, no pydantic), so `langrag-eval search --help` makes its options from HybridSettings quickly.
_LAZY = {
    **dict.fromkeys(("Chunk", "IngestReport", "Retriever", "SearchBackend", "SyncSearchMixin", "run_sync"),
                    ".base"),
    **dict.fromkeys(("Source", "chunk_sources", "chunk_text"), ".chunking"),
    **dict.fromkeys(("combine_documents", "combine_normalized", "normalize", "rrf", "rrf_documents"),
                    ".fusion"),
    **dict.fromkeys(("aingest", "ingest", "load_path"), ".ingest"),
    "EmbeddedBackend": ".embedded",
    "OpenSearchBackend": ".opensearch",
    "evaluate_run": ".metrics",
    "paper_mrr": ".metrics",
}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


class _Package(ModuleType):
    """The package's ``ingest`` is the function, also once its submodule ``ingest`` is imported
    directly (``from langrag_eval.retrieval.ingest import load_path``): the import binds the submodule
    on the package by its name, and this keeps the function there instead."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "ingest" and isinstance(value, ModuleType):
            value = value.ingest
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
