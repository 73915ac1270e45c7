"""langrag-eval: LLM-judge evaluation for RAG apps, framework-free at its core.

The judge runtime (:mod:`langrag_eval.runtime`), the one LLM seam (:mod:`langrag_eval.model`),
verdict parsers (:mod:`langrag_eval.verdicts`), prompt files (:mod:`langrag_eval.prompting.templates`) and test
doubles (:mod:`langrag_eval.testing`) are shared by every capability.
"""

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import DataError, JudgeOutputError, LangragError

if TYPE_CHECKING:  # imported on first use below: `import langrag_eval.cli` must stay cheap
    from .evaluator import Evaluator
    from .model import ChatModel, GenerationParams, Reply, TokenUsage
    from .results import Unscored
    from .runtime import Judge, RunStore
    from .types import AgentAnswer, Document, Sample

def lazy_getattr(package: str, names: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: ``names`` maps each lazy name to the relative
    module that defines it; a name, once imported, is kept in ``namespace`` (the package's globals).

    >>> getattr_ = lazy_getattr("langrag_eval", {"Sample": ".types"}, {})
    >>> getattr_("Sample").__name__
    'Sample'
    """
    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = import_module(names[name], package)
        # Importing a submodule binds its name in the package: where the submodule is named like one
        # of the names it defines (testing.overlap defines overlap), the name is bound back to it.
        for other, where in names.items():
            if where == names[name] and namespace.get(other) is module:
                namespace[other] = getattr(module, other)
        value = namespace[name] = getattr(module, name)
        return value
    return __getattr__


_LAZY = {"ChatModel": "model", "GenerationParams": "model", "Reply": "model", "TokenUsage": "model",
         "Unscored": "results", "Judge": "runtime", "RunStore": "runtime", "Evaluator": "evaluator",
         "AgentAnswer": "types", "Document": "types", "Sample": "types"}


__getattr__ = lazy_getattr(__name__, {name: f".{module}" for name, module in _LAZY.items()}, globals())


__version__ = "0.1.0"

__all__ = ["ChatModel", "GenerationParams", "Reply", "TokenUsage", "Judge", "RunStore", "Unscored",
           "Document", "Sample", "AgentAnswer", "Evaluator", "LangragError", "DataError", "JudgeOutputError", "__version__"]
