"""Every Python example in the README runs as written (offline, with its scripted stand-ins), each in
a fresh namespace; a failing assertion in an example fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_examples() -> None:
    assert len(EXAMPLES) >= 2
    assert any("create_agent" in e and "capturing" in e for e in EXAMPLES)


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_runs(index: int, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # whatever an example writes stays out of the repository
    exec(compile(EXAMPLES[index], f"README.md example {index + 1}", "exec"), {"__name__": "readme"})
