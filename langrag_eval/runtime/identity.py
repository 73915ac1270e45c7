"""Content identity, where the runtime's modules and earlier releases import it from; it lives in
:mod:`langrag_eval.files.identity`, below the evaluator contract that uses it too."""

from ..files.identity import canonical, content_hash, file_digest

__all__ = ["canonical", "content_hash", "file_digest"]
