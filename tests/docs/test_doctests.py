"""Every docstring example in the core and both adapters runs, as part of the test command: an
example that no longer matches the code fails here, not in a user's notebook."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

PACKAGES = ["langrag_eval", "langchain_langrag", "llama_index.evaluation.langrag"]


def _modules() -> list[str]:
    names: list[str] = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        names.append(package)
        names += [info.name for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}.")]
    return sorted(names)


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module: ModuleType = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"


def test_the_examples_are_many() -> None:
    finder = doctest.DocTestFinder()
    examples = sum(len(t.examples) for n in MODULES for t in finder.find(importlib.import_module(n)))
    assert examples >= 300
