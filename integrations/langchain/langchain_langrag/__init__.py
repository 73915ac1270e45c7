"""LangChain adapters for langrag-eval."""

from .models import LangChainJudge

__all__ = ["LangChainJudge"]
