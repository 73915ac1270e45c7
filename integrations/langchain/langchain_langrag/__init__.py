"""LangChain adapters for langrag-eval. ``ragelo_comparative_evaluator`` is the deprecated name of
:func:`ragelo_langsmith_evaluator` (it still works, with a warning)."""

from typing import TYPE_CHECKING

from langrag_eval._lazy import lazy_getattr

if TYPE_CHECKING:
    from .capture import RAGCapture, capturing
    from .grading import VragStringEvaluator, vrag_langsmith_evaluator
    from .models import LangChainJudge
    from .pipelines import as_runnable, six_runnables
    from .retrievers import LangragRetriever
    from .thelma import LangChainEmbedder, ThelmaStringEvaluator, thelma_langsmith_evaluator
    from .tournament import RAGEloPairwiseEvaluator, ragelo_langsmith_evaluator, tournament_from_runnables

# Each name is imported on first use: the judge entry point (``langchain_langrag.models``) must not
# pay for LangSmith, the retrievers and the evaluators when a command only needs a chat model.
_LAZY = {"RAGCapture": "capture", "capturing": "capture", "VragStringEvaluator": "grading",
         "vrag_langsmith_evaluator": "grading", "LangChainJudge": "models", "as_runnable": "pipelines",
         "six_runnables": "pipelines", "LangragRetriever": "retrievers", "LangChainEmbedder": "thelma",
         "ThelmaStringEvaluator": "thelma", "thelma_langsmith_evaluator": "thelma",
         "RAGEloPairwiseEvaluator": "tournament", "ragelo_langsmith_evaluator": "tournament",
         "tournament_from_runnables": "tournament",
         "ragelo_comparative_evaluator": "tournament"}  # deprecated name, kept importable


__getattr__ = lazy_getattr(__name__, {name: f".{module}" for name, module in _LAZY.items()}, globals())


__all__ = ["RAGCapture", "capturing", "LangChainEmbedder", "ThelmaStringEvaluator",
           "thelma_langsmith_evaluator", "LangChainJudge", "VragStringEvaluator", "vrag_langsmith_evaluator",
           "LangragRetriever", "as_runnable", "six_runnables", "RAGEloPairwiseEvaluator",
           "ragelo_langsmith_evaluator", "tournament_from_runnables"]
