"""LlamaIndex adapters for langrag-eval (PEP 420 namespace package ``llama_index.evaluation``)."""

from .models import LlamaIndexJudge

__all__ = ["LlamaIndexJudge"]
