"""LlamaIndex adapters for langrag-eval (PEP 420 namespace package ``llama_index.evaluation``): any
langrag evaluator as a ``BaseEvaluator``, LLMs as judges, the capture of an unmodified app,
retrievers, query engines and tournaments over apps."""

from .capture import RAGCapture, capturing
from .evaluators import LangragEvaluator, LangragResult
from .models import LlamaIndexEmbedder, LlamaIndexJudge, LlamaIndexModel, as_embedder, as_judge
from .retrievers import LangragQueryEngine, LangragRetriever, six_query_engines
from .tournament import atournament_from_query_engines, tournament_from_query_engines

__all__ = ["LangragEvaluator", "LangragQueryEngine", "LangragResult", "LangragRetriever", "LlamaIndexEmbedder",
           "LlamaIndexJudge", "LlamaIndexModel", "RAGCapture", "as_embedder", "as_judge", "atournament_from_query_engines", "capturing",
           "six_query_engines", "tournament_from_query_engines"]
