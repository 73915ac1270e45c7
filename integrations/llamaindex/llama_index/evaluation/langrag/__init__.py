"""LlamaIndex adapters for langrag-eval (PEP 420 namespace package ``llama_index.evaluation``).

The per-metric THELMA classes of earlier versions (``GroundednessEvaluator`` ...,
``ThelmaMetricEvaluator``) are deprecated aliases of ``ThelmaEvaluator(judge, metric=...)``: they
still import and work, with a warning."""

from .capture import RAGCapture, capturing
from .grading import VragEvaluator, VragResult
from .models import LlamaIndexJudge
from .query_engines import LangragQueryEngine, six_query_engines
from .retrievers import LangragRetriever
from .thelma import LlamaIndexEmbedder, ThelmaEvaluator
from .thelma import (GroundednessEvaluator, ResponsePrecisionEvaluator,  # noqa: F401 - deprecated names,
                     ResponseQueryCoverageEvaluator, SelfDistinctnessEvaluator,  # kept importable
                     SourcePrecisionEvaluator, SourceQueryCoverageEvaluator, ThelmaMetricEvaluator)
from .tournament import RAGEloPairwiseEvaluator, tournament_from_query_engines

__all__ = ["RAGCapture", "capturing", "LlamaIndexEmbedder", "ThelmaEvaluator", "LlamaIndexJudge",
           "VragEvaluator", "VragResult", "LangragRetriever", "LangragQueryEngine", "six_query_engines",
           "RAGEloPairwiseEvaluator", "tournament_from_query_engines"]
