"""Old names kept working for a while, with a warning that names the new one.

A renamed function stays importable under its old name (:func:`renamed`); a renamed keyword is
read by the callee, which calls :func:`warn_renamed` when the old one was given.

>>> import warnings
>>> def ragelo_langsmith_evaluator(x):
...     return x + 1
>>> old = renamed(ragelo_langsmith_evaluator, "ragelo_comparative_evaluator")
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("always")
...     old(1), str(seen[0].message)
(2, 'ragelo_comparative_evaluator is deprecated; use ragelo_langsmith_evaluator')
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import TypeVar

__all__ = ["renamed", "warn_renamed"]

F = TypeVar("F", bound=Callable[..., object])


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """A ``DeprecationWarning``: ``old`` is deprecated, ``new`` replaces it. The default
    ``stacklevel`` points at the caller of the function that calls this."""
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=stacklevel)


def renamed(function: F, old_name: str) -> F:
    """``function`` under its old name: the same call, with a warning naming the new one."""
    @functools.wraps(function)
    def alias(*args: object, **kwargs: object) -> object:
        warn_renamed(old_name, function.__name__)
        return function(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old_name
    alias.__doc__ = f"Deprecated: use :func:`{function.__name__}`."
    return alias  # type: ignore[return-value]
