"""Names a package exports but imports on first use, so importing the package stays cheap."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_getattr"]


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
