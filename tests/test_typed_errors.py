"""Every error langrag_eval raises on purpose is a LangragError, so the command line's one-line
handler catches it and a caller can catch the package's errors by one base class.

The source is scanned for ``raise`` of a Python built-in exception; the few left are listed here,
each with the reason it must stay a built-in.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

import langrag_eval
from langrag_eval.errors import ArgumentError, ConfigError, LangragError

ROOT = Path(langrag_eval.__file__).parent
BUILTIN_ERRORS = {name for name in dir(builtins)
                  if isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), BaseException)}

# (file, function, exception): why it stays a built-in
ALLOWED = {
    ("runtime/store_base.py", "_exec", "NotImplementedError"): "an abstract hook a store subclass defines",
    ("runtime/store_base.py", "_exec_grouped", "NotImplementedError"): "an abstract hook a store subclass defines",
    ("runtime/store_base.py", "_rows", "NotImplementedError"): "an abstract hook a store subclass defines",
    ("runtime/store_base.py", "close", "NotImplementedError"): "an abstract hook a store subclass defines",
    ("runtime/lease.py", "renew_leases", "RuntimeError"):
        "raised to the lease thread of a garbage-collected store, which stops on it; never reaches a caller",
    ("retrieval/contract.py", "backend", "NotImplementedError"): "a fixture a contract-suite subclass defines",
    ("testing/contract.py", "make_model", "NotImplementedError"): "a hook a contract-suite subclass defines",
    ("testing/contract.py", "_expect", "AssertionError"): "a failed contract check, reported by pytest",
    ("testing/contract.py", "test_a_schema_is_accepted_and_a_constrained_reply_fits_it", "AssertionError"):
        "a failed contract check, reported by pytest",
    ("testing/contract.py", "test_a_backend_failure_is_raised_and_classified", "AssertionError"):
        "a failed contract check, reported by pytest",
    ("testing/regression.py", "assert_no_regression", "AssertionError"): "a failed regression gate, reported by pytest",
    ("__init__.py", "__getattr__", "AttributeError"): "the import system's protocol for a missing name",
    ("run/evaluation.py", "__getattr__", "AttributeError"): "the import system's protocol for a missing name (RayExecutor on first use)",
    ("cli/_executor.py", "__call__", "RuntimeError"): "raised inside a Ray actor: Ray hands it to the "
                                                      "driver, which reports the worker's one line",
    ("files/jsontext.py", "_finite_float", "ValueError"): "json's parse_float hook; parse_json turns it into a "
                                              "DataError naming the file and line",
    ("files/jsontext.py", "finite_number", "ValueError"): "caught in the same function",
    ("tournament/apps.py", "call", "TimeoutError"): "an app's own time limit, read by calling_error as "
                                                    "the query's failure",
    ("cli/_options.py", "convert", "ValueError"): "caught in the same function and turned into argparse's message",
    ("cli/_options.py", "_fields", "TypeError"):
        "a command's settings class declared wrong: a programming error met while the parser is built",
    ("cli/_options.py", "_form", "TypeError"):
        "a command's settings class declared wrong: a programming error met while the parser is built",
    ("runtime/judge.py", "read", "TypeError"): "caught in the same function and raised again as ConfigError",
    ("files/jsontext.py", "_no_constant", "ValueError"): "json's parse_constant hook; parse_json turns it into its own error",
    ("tournament/orders.py", "step_blocks", "OSError"): "a short read of a temporary file is an I/O failure",
    ("models/_greedy_grammar.py", "__init__", "ValueError"):
        "llama-cpp-python's own grammar loader raises ValueError for a rejected grammar; kept alike",
}


def _raises() -> list[tuple[str, str, str, int]]:
    """(file, innermost function, exception, line) for every raise of a built-in exception."""
    found = []

    def visit(node: ast.AST, function: str, rel: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name, rel)
                continue
            if isinstance(child, ast.Raise) and child.exc is not None:
                target = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
                if isinstance(target, ast.Name) and target.id in BUILTIN_ERRORS:
                    found.append((rel, function, target.id, child.lineno))
            visit(child, function, rel)

    for path in sorted(ROOT.rglob("*.py")):
        visit(ast.parse(path.read_text(encoding="utf-8")), "<module>", path.relative_to(ROOT).as_posix())
    return found


def test_no_builtin_error_is_raised_outside_the_allowed_list() -> None:
    stray = [f"langrag_eval/{rel}:{line} raises {name} in {fn}()" for rel, fn, name, line in _raises()
             if (rel, fn, name) not in ALLOWED]
    assert stray == [], "raise a LangragError subclass (errors.py), or allow it here with the reason:\n" + "\n".join(stray)


def test_the_allowed_list_holds_no_stale_entry() -> None:
    present = {(rel, fn, name) for rel, fn, name, _ in _raises()}
    assert set(ALLOWED) - present == set()


def test_argument_errors_are_langrag_errors_and_value_errors() -> None:
    from langrag_eval.runtime import gather_bounded
    from langrag_eval.stats import cohen_kappa

    with pytest.raises(ArgumentError) as info:
        cohen_kappa([1, 2], [1])
    assert isinstance(info.value, LangragError) and isinstance(info.value, ValueError)
    assert isinstance(info.value, ConfigError)
    import asyncio

    async def same(x: int) -> int:
        return x

    with pytest.raises(LangragError, match="at least 1"):
        asyncio.run(gather_bounded([1], same, concurrency=0))
