"""LangChain adapters for langrag-eval: any langrag evaluator as a LangChain string, pairwise or
LangSmith evaluator, chat models as judges, the capture of an unmodified app, retrievers and runnables."""

from typing import TYPE_CHECKING

from langrag_eval._lazy import lazy_getattr

if TYPE_CHECKING:
    from .capture import RAGCapture, capturing
    from .evaluators import (LangragStringEvaluator, RAGEloPairwiseEvaluator, ThelmaStringEvaluator,
                             VragStringEvaluator, langsmith_evaluator, ragelo_langsmith_evaluator,
                             thelma_langsmith_evaluator, vrag_langsmith_evaluator)
    from .models import LangChainEmbedder, LangChainJudge
    from .pipelines import as_runnable, six_runnables
    from .retrievers import LangragRetriever
    from .tournament import tournament_from_runnables

# Each name is imported on first use: the judge entry point (``langchain_langrag.models``) must not
# pay for LangSmith, the retrievers and the evaluators when a command only needs a chat model.
_LAZY = {"RAGCapture": "capture", "capturing": "capture", "LangChainEmbedder": "models", "LangChainJudge": "models",
         "as_runnable": "pipelines", "six_runnables": "pipelines", "LangragRetriever": "retrievers",
         "tournament_from_runnables": "tournament",
         **{name: "evaluators" for name in ("LangragStringEvaluator", "RAGEloPairwiseEvaluator", "ThelmaStringEvaluator",
                                            "VragStringEvaluator", "langsmith_evaluator", "ragelo_langsmith_evaluator",
                                            "thelma_langsmith_evaluator", "vrag_langsmith_evaluator")}}

__getattr__ = lazy_getattr(__name__, {name: f".{module}" for name, module in _LAZY.items()}, globals())

__all__ = sorted(_LAZY)
