"""LangChain adapters for langrag-eval."""

from .grading import VragStringEvaluator, vrag_langsmith_evaluator
from .models import LangChainJudge

__all__ = ["LangChainJudge", "VragStringEvaluator", "vrag_langsmith_evaluator"]
