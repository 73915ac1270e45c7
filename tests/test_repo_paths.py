"""No test, module, cookbook or benchmark reads a path outside the repository.

A user's clone is the repository and nothing beside it: a test that reached into a folder next to
the checkout (a data folder, a sibling project) passed on the machine it was written on and failed
or skipped in every fresh clone. The data the tests need lives under tests/data.

Each Python file is parsed, and a path is outside when it climbs from ``__file__`` past the
repository root (``.parents[k]``, ``.parent`` chains, names bound to such paths and climbed
further), joins a ``".."`` segment onto one, or names a known outside place in a string literal.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["langrag_eval", "integrations", "tests", "cookbooks", "benchmarks", "scripts"]
# Literal spellings of places outside any clone: a sibling data folder, the absolute home of the
# project's own machines.
OUTSIDE_TEXT = re.compile(r"(^|[/\\])\.\.[/\\]shared\b|^/work/|(^|/)shared/data\b")


def _segments(text: str) -> list[str]:
    return [part for part in re.split(r"[/\\]", text) if part not in ("", ".")]


class _Climbs:
    """Levels of the paths a file derives from ``__file__``: how many folders above the file's own
    folder each points (``__file__`` itself is -1; one ``.parent`` up is its folder, 0). The file
    is ``depth`` folders below the repository root, so a level above ``depth`` is outside it."""

    def __init__(self, source: str, depth: int) -> None:
        self.source, self.depth = source, depth
        self.bound: dict[str, int] = {}
        self.found: set[tuple[int, str]] = set()

    def report(self, node: ast.AST) -> None:
        self.found.add((node.lineno, ast.get_source_segment(self.source, node) or ast.dump(node)))

    def down(self, level: int, part: ast.AST, node: ast.AST) -> int:
        """``level`` joined with ``part``: a name goes one folder down, ``..`` one up."""
        if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
            return level - 1  # a name computed at run time: somewhere below
        for segment in _segments(part.value):
            level += 1 if segment == ".." else -1
            if level > self.depth:
                self.report(node)
        return level

    def level(self, node: ast.AST) -> int | None:
        if isinstance(node, ast.Name):
            return -1 if node.id == "__file__" else self.bound.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return self.up(self.level(node.value), 1, node)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "parents" and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, int):
            return self.up(self.level(node.value.value), 1 + node.slice.value, node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            inner = self.level(node.left)
            return None if inner is None else self.down(inner, node.right, node)
        if not isinstance(node, ast.Call):
            return None
        func, args = node.func, node.args
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("resolve", "absolute", "expanduser") and isinstance(func, ast.Attribute) and not args:
            return self.level(func.value)
        if name in ("Path", "PurePath", "abspath", "realpath", "normpath") and len(args) == 1:
            return self.level(args[0])
        if name == "dirname" and len(args) == 1:
            return self.up(self.level(args[0]), 1, node)
        if name in ("join", "joinpath") and args:
            base, rest = (self.level(args[0]), args[1:]) if name == "join" else (self.level(func.value), args)
            for part in rest:
                base = None if base is None else self.down(base, part, node)
            return base
        return None

    def up(self, level: int | None, steps: int, node: ast.AST) -> int | None:
        if level is None:
            return None
        if level + steps > self.depth:
            self.report(node)
        return level + steps


def _joined(node: ast.AST) -> str | None:
    """The literal path a chain of ``/`` joins of string constants (or ``Path("...")``) spells."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("Path", "PurePath") and len(node.args) == 1:
        return _joined(node.args[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _joined(node.left), _joined(node.right)
        return None if left is None or right is None else f"{left}/{right}"
    return None


def outside_paths(source: str, relative: Path) -> list[str]:
    """Each place in ``source`` (the file at ``relative`` in the repository) that names a path
    outside the repository, as ``line: text``."""
    tree = ast.parse(source)
    climbs = _Climbs(source, depth=len(relative.parts) - 1)
    # Bindings first, in source order, so a name bound to a path may be climbed further anywhere.
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))),
                       key=lambda n: n.lineno):
        if node.value is None:
            continue
        level = climbs.level(node.value)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and level is not None:
                climbs.bound[target.id] = level
    for node in ast.walk(tree):
        climbs.level(node)
        text = _joined(node)
        if text is not None and OUTSIDE_TEXT.search(text):
            climbs.report(node)
    # A climb is reported at each step past the root: one finding a line, its longest spelling.
    longest: dict[int, str] = {}
    for line, text in climbs.found:
        if len(text) > len(longest.get(line, "")):
            longest[line] = text
    return [f"{line}: {text}" for line, text in sorted(longest.items())]


def _python_files() -> list[Path]:
    """Every Python file checked: this one is left out, its examples go outside on purpose."""
    return sorted(p for top in CHECKED if (ROOT / top).is_dir() for p in (ROOT / top).rglob("*.py")
                  if p != Path(__file__).resolve()
                  and not any(part.startswith(".") or part in ("build", "dist", "__pycache__")
                              for part in p.relative_to(ROOT).parts))


def test_no_file_reads_a_path_outside_the_repository() -> None:
    files = _python_files()
    assert len(files) > 300, "the walk found too few files to mean anything"
    problems = [f"{path.relative_to(ROOT)}:{hit}" for path in files
                for hit in outside_paths(path.read_text(encoding="utf-8"), path.relative_to(ROOT))]
    assert not problems, ("paths outside the repository (copy the data under tests/data):\n"
                          + "\n".join(problems))


@pytest.mark.parametrize("relative,source", [
    ("tests/conftest.py", 'SHARED = Path(__file__).resolve().parents[2] / "shared"'),
    ("tests/grammar/test_x.py", 'DB = Path(__file__).resolve().parents[3] / "shared" / "data" / "x.sqlite"'),
    ("benchmarks/x.py", 'ROOT = Path(__file__).resolve().parents[1]\nDATA = ROOT.parent / "data"'),
    ("tests/x.py", 'HERE = Path(__file__).parent\nUP = HERE.parent.parent'),
    ("tests/x.py", 'p = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))'),
    ("tests/x.py", 'p = Path(__file__).parent / ".." / ".." / "x"'),
    ("tests/x.py", 'p = Path(__file__).parent / "../../x"'),
    ("benchmarks/x.py", 'DATA = Path("shared") / "data" / "halueval-qa" / "qa.json"'),
    ("tests/x.py", 'open("../shared/data/x.json")'),
    ("tests/x.py", 'open("/work/shared/data/x.json")'),
])
def test_each_way_out_is_caught(relative: str, source: str) -> None:
    assert outside_paths(source, Path(relative)), source


@pytest.mark.parametrize("relative,source", [
    ("tests/conftest.py", 'DATA = Path(__file__).resolve().parent / "data"'),
    ("tests/grammar/test_x.py", 'README = Path(__file__).resolve().parents[2] / "README.md"'),
    ("tests/grammar/test_x.py", 'DB = Path(__file__).resolve().parents[1] / "data" / "chinook" / "x.sqlite"'),
    ("benchmarks/judge_audit/x.py", 'OUT = Path(__file__).resolve().parents[2] / "langrag_eval" / "audit"'),
    ("tests/x.py", 'link = f"../{work.name}/{name}"'),  # a path inside a test's own temporary folder
    ("tests/x.py", 'p = tmp_path / "sub" / ".." / "x"'),
])
def test_paths_inside_the_repository_pass(relative: str, source: str) -> None:
    assert not outside_paths(source, Path(relative)), source
