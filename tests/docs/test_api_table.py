"""The README's API table lists every public name of every module it covers (their ``__all__``), and
no name that is gone: it is rendered from the code, and this test fails when the two drift apart."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import api_table  # noqa: E402


def test_readme_api_table_is_current() -> None:
    assert api_table.current() == api_table.render(), (
        "the README's API table is stale: run `python tests/docs/api_table.py --write`")


def test_every_public_name_is_in_the_table() -> None:
    table = api_table.current()
    missing = [f"{module}.{name}" for module in api_table.MODULES
               for name in getattr(importlib.import_module(module), "__all__", [])
               if f"`{name}`" not in table]
    assert missing == []


def test_every_module_with_public_names_is_covered() -> None:
    import langrag_eval

    root = Path(langrag_eval.__file__).parent
    packages = {f"langrag_eval.{p.name}" for p in root.iterdir() if (p / "__init__.py").exists()
                and p.name not in ("cli", "quickstart")}
    # a package whose modules are each listed (adapters) is covered by them
    listed = {m.rsplit('.', 1)[0] for m in api_table.MODULES} | set(api_table.MODULES)
    assert packages - listed == set()
