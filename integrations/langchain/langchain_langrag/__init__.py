"""LangChain adapters for langrag-eval: any langrag evaluator as a LangChain string or pairwise
evaluator or a LangSmith evaluator, chat models as judges, the capture of an unmodified app,
retrievers and runnables."""

from typing import TYPE_CHECKING

from langrag_eval import lazy_getattr

if TYPE_CHECKING:
    from .capture import RAGCapture, capturing, tournament_from_runnables
    from .evaluators import LangragPairwiseEvaluator, LangragStringEvaluator, langsmith_evaluator
    from .models import LangChainEmbedder, LangChainJudge, LangChainModel, as_judge
    from .retrievers import LangragRetriever, as_runnable, six_runnables

# Each name is imported on first use: the judge entry point (``langchain_langrag.models``) must not
# pay for LangSmith, the retrievers and the evaluators when a command only needs a chat model.
_LAZY = {**dict.fromkeys(("RAGCapture", "capturing", "tournament_from_runnables"), "capture"),
         **dict.fromkeys(("LangragPairwiseEvaluator", "LangragStringEvaluator", "langsmith_evaluator"), "evaluators"),
         **dict.fromkeys(("LangChainEmbedder", "LangChainJudge", "LangChainModel", "as_judge"), "models"),
         **dict.fromkeys(("LangragRetriever", "as_runnable", "six_runnables"), "retrievers")}

__getattr__ = lazy_getattr(__name__, {name: f".{module}" for name, module in _LAZY.items()}, globals())

__all__ = sorted(_LAZY)
