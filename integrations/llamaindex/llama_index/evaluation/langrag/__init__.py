"""LlamaIndex adapters for langrag-eval (PEP 420 namespace package ``llama_index.evaluation``)."""

from .capture import RAGCapture, capturing
from .grading import VragEvaluator
from .models import LlamaIndexJudge
from .query_engines import LangragQueryEngine, six_query_engines
from .retrievers import LangragRetriever
from .thelma import (GroundednessEvaluator, LlamaIndexEmbedder, ResponsePrecisionEvaluator,
                     ResponseQueryCoverageEvaluator, SelfDistinctnessEvaluator, SourcePrecisionEvaluator,
                     SourceQueryCoverageEvaluator, ThelmaEvaluator, ThelmaMetricEvaluator)
from .tournament import RAGEloPairwiseEvaluator, tournament_from_query_engines

__all__ = ["RAGCapture", "capturing", "LlamaIndexEmbedder", "ThelmaEvaluator", "ThelmaMetricEvaluator",
           "SourcePrecisionEvaluator", "SourceQueryCoverageEvaluator", "ResponsePrecisionEvaluator",
           "ResponseQueryCoverageEvaluator", "SelfDistinctnessEvaluator", "GroundednessEvaluator",
           "LlamaIndexJudge", "VragEvaluator", "LangragRetriever", "LangragQueryEngine", "six_query_engines",
           "RAGEloPairwiseEvaluator", "tournament_from_query_engines"]
