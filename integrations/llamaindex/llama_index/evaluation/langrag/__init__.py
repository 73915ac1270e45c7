"""LlamaIndex adapters for langrag-eval (PEP 420 namespace package ``llama_index.evaluation``): any
langrag evaluator as a ``BaseEvaluator``, LLMs as judges, the capture of an unmodified app,
retrievers and query engines."""

from .capture import RAGCapture, capturing
from .evaluators import LangragEvaluator, RAGEloPairwiseEvaluator, ThelmaEvaluator, VragEvaluator, VragResult
from .models import LlamaIndexEmbedder, LlamaIndexJudge
from .query_engines import LangragQueryEngine, six_query_engines
from .retrievers import LangragRetriever
from .tournament import tournament_from_query_engines

__all__ = ["LangragEvaluator", "LangragQueryEngine", "LangragRetriever", "LlamaIndexEmbedder", "LlamaIndexJudge",
           "RAGCapture", "RAGEloPairwiseEvaluator", "ThelmaEvaluator", "VragEvaluator", "VragResult", "capturing",
           "six_query_engines", "tournament_from_query_engines"]
