"""langrag-eval: LLM-judge evaluation for RAG apps, framework-free at its core.

The judge runtime (:mod:`langrag_eval.runtime`), the one LLM seam (:mod:`langrag_eval.model`),
verdict parsers (:mod:`langrag_eval.verdicts`), prompt files (:mod:`langrag_eval.prompts`) and test
doubles (:mod:`langrag_eval.testing`) are shared by every capability.
"""

from typing import TYPE_CHECKING

from ._lazy import lazy_getattr
from .errors import DataError, JudgeOutputError, LangragError

if TYPE_CHECKING:  # imported on first use below: `import langrag_eval.cli` must stay cheap
    from .evaluator import Evaluator
    from .model import ChatModel, GenerationParams, Reply, TokenUsage
    from .results import Unscored
    from .runtime import Judge, RunStore
    from .types import AgentAnswer, Document, Sample

_LAZY = {"ChatModel": "model", "GenerationParams": "model", "Reply": "model", "TokenUsage": "model",
         "Unscored": "results", "Judge": "runtime", "RunStore": "runtime", "Evaluator": "evaluator",
         "AgentAnswer": "types", "Document": "types", "Sample": "types"}


__getattr__ = lazy_getattr(__name__, {name: f".{module}" for name, module in _LAZY.items()}, globals())


__version__ = "0.1.0"

__all__ = ["ChatModel", "GenerationParams", "Reply", "TokenUsage", "Judge", "RunStore", "Unscored",
           "Document", "Sample", "AgentAnswer", "Evaluator", "LangragError", "DataError", "JudgeOutputError", "__version__"]
