"""The house drawn from imports: langrag_eval's modules form layers, each importing only its own layer
or lower ones, with no cycle between packages, and the core imports no framework.

Layers, lowest first, each a subpackage (or one of the contract's few root modules): typed errors;
pure statistics beside the one concurrency helper; the contract (results and summaries, samples and
documents, the model seam, the evaluator) beside files (tables, safe reading and writing, strict
JSON, content identity); prompting (templates, delimiters, echoes: the untrusted-text boundary);
verdicts (reading a judge's reply); the runtime (judge, stores, batches, models); the run layer (one way to run a dataset); the capabilities
(retrieval, pipelines, grading, THELMA, tournaments, GRAMMAR, synthetic queries, run comparison, test
doubles); composites (judge audit, HTML report, and the framework-free half of the adapters used by
``integrations/``); the applications (quickstart, command line). The graph is read from the source
(imports under ``if TYPE_CHECKING`` are only for annotations and do not count).
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import langrag_eval

ROOT = Path(langrag_eval.__file__).parent

LAYERS = [
    {"errors"},
    {"stats", "concurrency"},
    {"results", "types", "files", "model", "evaluator"},
    {"prompting"},
    {"verdicts"},
    {"runtime", "models"},
    {"run"},
    {"retrieval", "pipelines", "grading", "thelma", "tournament", "grammar", "synth", "compare", "testing",
     "trajectories", "conversations"},
    {"audit", "report", "adapters", "traces"},
    {"quickstart", "cli"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}
# The one import allowed to point up, each with its reason. The contract's batch forms
# (``Evaluator.evaluate_many`` ...) hand the batch to the run layer, imported when called: the
# contract holds no batching, and the run layer imports the contract only for annotations.
UPWARD = {("evaluator", "run")}
FRAMEWORKS = ("langchain", "langchain_core", "langchain_classic", "langgraph", "langsmith", "llama_index")


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports() -> dict[str, set[tuple[str, str]]]:
    """module -> {(imported module, where)} for every runtime import in langrag_eval."""
    found: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        module = ".".join(rel.parts)
        package = module[: -len(".__init__")] if module.endswith(".__init__") else module.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            where = f"{path.relative_to(ROOT.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                found[module] |= {(a.name, where) for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                    names = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
                else:
                    names = [node.module or ""]
                found[module] |= {(n, where) for n in names}
    return found


def _package_graph() -> dict[str, dict[str, str]]:
    graph: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for module, targets in _imports().items():
        for target, where in targets:
            if target.startswith("langrag_eval"):
                a, b = _part(module), _part(target)
                if a != b and b != "__init__":
                    graph[a].setdefault(b, where)
    return graph


def test_every_package_has_a_layer() -> None:
    parts = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert parts - set(RANK) == set(), "place new modules in a layer of this test"


def test_no_import_points_up_a_layer() -> None:
    upward = [f"{a} -> {b} ({where})" for a, targets in _package_graph().items() if a in RANK
              for b, where in targets.items() if RANK.get(b, -1) > RANK[a] and (a, b) not in UPWARD]
    assert upward == []


def test_no_cycle_between_packages() -> None:
    graph = _package_graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph.get(node, {}):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_the_core_imports_no_framework() -> None:
    offenders = sorted(f"{where} imports {target}" for targets in _imports().values()
                       for target, where in targets if target.split(".")[0] in FRAMEWORKS)
    assert offenders == []


def test_the_root_holds_only_the_contract() -> None:
    # Everything else lives in the subpackage of its layer, so the architecture shows in `ls`.
    modules = sorted(p.stem for p in ROOT.glob("*.py") if p.stem != "__init__")
    assert modules == ["errors", "evaluator", "model", "results", "types"]


def test_the_readme_draws_every_layer() -> None:
    # the README's Architecture section is where a reader finds the layers: each package of every
    # layer appears in its drawing (a folder as ``name/``, a root module as ``name.py``)
    text = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    drawing = text.split("## Architecture", 1)[1].split("```", 2)[1]
    missing = sorted(name for name in RANK
                     if f"{name}/" not in drawing and f"{name}.py" not in drawing)
    assert missing == []
