"""LangChain adapters for langrag-eval."""

from .capture import RAGCapture, capturing
from .grading import VragStringEvaluator, vrag_langsmith_evaluator
from .models import LangChainJudge
from .pipelines import as_runnable, six_runnables
from .retrievers import LangragRetriever
from .thelma import LangChainEmbedder, ThelmaStringEvaluator, thelma_langsmith_evaluator
from .tournament import RAGEloPairwiseEvaluator, ragelo_comparative_evaluator, tournament_from_runnables

__all__ = ["RAGCapture", "capturing", "LangChainEmbedder", "ThelmaStringEvaluator",
           "thelma_langsmith_evaluator", "LangChainJudge", "VragStringEvaluator", "vrag_langsmith_evaluator",
           "LangragRetriever", "as_runnable", "six_runnables", "RAGEloPairwiseEvaluator",
           "ragelo_comparative_evaluator", "tournament_from_runnables"]
