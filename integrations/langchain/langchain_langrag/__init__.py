"""LangChain adapters for langrag-eval. ``ragelo_comparative_evaluator`` is the deprecated name of
:func:`ragelo_langsmith_evaluator` (it still works, with a warning)."""

from .capture import RAGCapture, capturing
from .grading import VragStringEvaluator, vrag_langsmith_evaluator
from .models import LangChainJudge
from .pipelines import as_runnable, six_runnables
from .retrievers import LangragRetriever
from .thelma import LangChainEmbedder, ThelmaStringEvaluator, thelma_langsmith_evaluator
from .tournament import RAGEloPairwiseEvaluator, ragelo_langsmith_evaluator, tournament_from_runnables
from .tournament import ragelo_comparative_evaluator  # noqa: F401 - deprecated name, kept importable

__all__ = ["RAGCapture", "capturing", "LangChainEmbedder", "ThelmaStringEvaluator",
           "thelma_langsmith_evaluator", "LangChainJudge", "VragStringEvaluator", "vrag_langsmith_evaluator",
           "LangragRetriever", "as_runnable", "six_runnables", "RAGEloPairwiseEvaluator",
           "ragelo_langsmith_evaluator", "tournament_from_runnables"]
