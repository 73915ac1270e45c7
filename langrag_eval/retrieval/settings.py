"""How a hybrid search fuses its two lists (:class:`HybridSettings`) and the names of the search
modes, in a module of their own: ``langrag-eval search --help`` makes its options from them without
loading the retrieval stack (numpy, pydantic). :mod:`.base` re-exports them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from ..errors import ConfigError

__all__ = ["Fusion", "HybridSettings", "Mode", "Normalization"]

Mode = Literal["bm25", "knn", "hybrid"]
# rrf: client-side RRF over the two sub-results; server_rrf: OpenSearch hybrid query + score-ranker
# RRF pipeline; normalization: hybrid query + normalization-processor pipeline.
Fusion = Literal["rrf", "server_rrf", "normalization"]
Normalization = Literal["min_max", "l2"]


@dataclass(frozen=True)
class HybridSettings:
    """How a hybrid search combines its BM25 and KNN sub-results (each field's description says
    what it sets; ``langrag-eval search`` offers each as an option)."""

    fusion: Fusion = field(default="rrf", metadata={
        "description": "hybrid fusion: rrf (client-side RRF), server_rrf (OpenSearch's score-ranker RRF) "
                       "or normalization (OpenSearch's score normalization); the embedded backend "
                       "computes all three itself"})
    rank_constant: int = field(default=60, metadata={"description": "RRF rank constant"})
    weights: tuple[float, float] = field(default=(1.0, 1.0),
                                         metadata={"description": "hybrid weights bm25,knn"})
    normalization: Normalization = field(default="min_max", metadata={
        "description": "score normalization for the normalization fusion"})
    depth: int = field(default=50, metadata={"description": "candidates per hybrid sub-query"})

    def __post_init__(self) -> None:
        if self.fusion not in get_args(Fusion):
            raise ConfigError(f"hybrid fusion {self.fusion!r} is unknown; use one of {get_args(Fusion)}")
        if self.normalization not in get_args(Normalization):
            raise ConfigError(f"normalization {self.normalization!r} is unknown; "
                              f"use one of {get_args(Normalization)}")
        if self.rank_constant < 1:
            raise ConfigError(f"rank_constant must be at least 1, got {self.rank_constant}")
        if len(self.weights) != 2 or any(w < 0 for w in self.weights) or sum(self.weights) <= 0:
            raise ConfigError(f"weights must be two non-negative numbers (bm25, knn) with a positive "
                              f"sum, got {self.weights!r}")
        if self.depth < 1:
            raise ConfigError(f"depth must be at least 1, got {self.depth}")
