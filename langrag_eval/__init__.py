"""langrag-eval: LLM-judge evaluation for RAG apps, framework-free at its core.

The judge runtime (:mod:`langrag_eval.runtime`), the one LLM seam (:mod:`langrag_eval.model`),
verdict parsers (:mod:`langrag_eval.verdicts`), prompt files (:mod:`langrag_eval.prompts`) and test
doubles (:mod:`langrag_eval.testing`) are shared by every capability.
"""

from .errors import DataError, JudgeOutputError, LangragError
from .model import ChatModel, GenerationParams, Reply, TokenUsage
from .results import Unscored
from .runtime import Judge, RunStore
from .evaluator import Evaluator
from .types import AgentAnswer, Document, RAGSample

__version__ = "0.1.0"

__all__ = ["ChatModel", "GenerationParams", "Reply", "TokenUsage", "Judge", "RunStore", "Unscored",
           "Document", "RAGSample", "AgentAnswer", "Evaluator", "LangragError", "DataError", "JudgeOutputError", "__version__"]
