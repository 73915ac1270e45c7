"""The README's API table, rendered from the packages' ``__all__``: one row per public module, its names
sorted into evaluators, data (samples, results, settings), functions (a coroutine beside its
synchronous twin, ``aname / name``) and the rest. ``python tests/docs/api_table.py --write``
rewrites the table in README.md; tests/docs/test_api_table.py checks it is current."""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- api-table:start -->", "<!-- api-table:end -->"

MODULES = {
    "langrag_eval": "the names most code needs",
    "langrag_eval.evaluator": "the evaluator contract every capability implements",
    "langrag_eval.run": "one way to run a dataset through evaluators",
    "langrag_eval.grading": "vRAG-Eval: rubric grades against a label",
    "langrag_eval.thelma": "THELMA: reference-free metrics and diagnosis",
    "langrag_eval.tournament": "RAGElo: relevance judgments, games, Elo and Bradley-Terry",
    "langrag_eval.grammar": "GRAMMAR: grounded Q/A from a database, modular evaluation",
    "langrag_eval.retrieval": "indexes, BM25, KNN, hybrid, OpenSearch",
    "langrag_eval.pipelines": "RAG and RAG-Fusion agents",
    "langrag_eval.synth": "synthetic test queries",
    "langrag_eval.trajectories": "agents' trajectories and their matches against a reference",
    "langrag_eval.conversations": "multi-turn samples, conversation judges, a simulated user",
    "langrag_eval.traces": "production traces (OTLP with OpenInference or GenAI, LangSmith, Langfuse) read into samples, in time windows",
    "langrag_eval.audit": "judge audit against human labels",
    "langrag_eval.compare": "run comparison and regression gate",
    "langrag_eval.stats": "agreement, intervals, paired tests, ranking metrics",
    "langrag_eval.concurrency": "the one concurrency helper: bounded gather, limiter, sync forms",
    "langrag_eval.runtime": "judge, run store, batches, concurrency",
    "langrag_eval.report": "HTML report: figures, and every item's scores by name",
    "langrag_eval.models": "judges by name, the local llama.cpp judge",
    "langrag_eval.testing": "scripted model and contract suites for your tests",
    "langrag_eval.models.embeddings": "sentence embeddings",
    "langrag_eval.verdicts": "verdict formats and parsers",
    "langrag_eval.prompting": "prompt files and templates, delimiters, echoes",
    "langrag_eval.adapters.contexts": "what reached the answer's prompt: the contexts a capture keeps",
    "langrag_eval.adapters.adapting": "what both framework adapters share: app inputs read, scores as their results",
    "langrag_eval.adapters.capturing": "what both frameworks' captures share: call trees, captured samples",
    "langrag_eval.adapters.passages": "documents an app cut, windowed or re-wrapped, matched back to what it retrieved",
    "langrag_eval.adapters.recorder": "a capture's bookkeeping for both frameworks, apps called per query",
    "langrag_eval.adapters.outcomes": "any evaluator's result read through its scores as each framework reports it",
    "langrag_eval.model": "the one LLM seam",
    "langrag_eval.results": "the one score record (Score on its ScoreScale), Unscored and its causes, the typed Summary",
    "langrag_eval.types": "documents, samples, answers; apps' values read as documents and text",
    "langrag_eval.errors": "typed errors",
    "langrag_eval.files": "users' files: tables, strict JSON, safe reading and writing",
}


def _kind(name: str, obj: object) -> str:
    from langrag_eval.evaluator import Evaluator

    if inspect.isclass(obj):
        if issubclass(obj, Evaluator):
            return "evaluators"
        if issubclass(obj, Exception):
            return "other"
        return "types" if hasattr(obj, "model_fields") or hasattr(obj, "__dataclass_fields__") else "other"
    if callable(obj):
        return "functions"
    return "other"


def _row(module: str) -> dict[str, list[str]]:
    mod = importlib.import_module(module)
    names = list(getattr(mod, "__all__", []))
    groups: dict[str, list[str]] = {"evaluators": [], "types": [], "functions": [], "other": []}
    listed = set()
    for name in sorted(names, key=str.lower):
        if name in listed:
            continue
        kind = _kind(name, getattr(mod, name))
        twin = name[1:] if name.startswith("a") else None
        if kind == "functions" and twin in names and inspect.iscoroutinefunction(getattr(mod, name)):
            groups[kind].append(f"`{name}` / `{twin}`")
            listed |= {name, twin}
            continue
        if kind == "functions" and f"a{name}" in names and inspect.iscoroutinefunction(getattr(mod, f"a{name}")):
            continue  # listed with its coroutine
        groups[kind].append(f"`{name}`")
        listed.add(name)
    return groups


def render() -> str:
    lines = ["| module | what | evaluators | types | functions | other |", "|---|---|---|---|---|---|"]
    for module, what in MODULES.items():
        g = _row(module)
        lines.append(f"| `{module}` | {what} | " + " | ".join(", ".join(g[k]) for k in
                                                             ("evaluators", "types", "functions", "other")) + " |")
    return "\n".join(lines)


def current() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(re.escape(START) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    return found.group(1) if found else ""


def write() -> None:
    text = README.read_text(encoding="utf-8")
    block = f"{START}\n{render()}\n{END}"
    if START in text:
        text = re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        raise SystemExit(f"README.md has no {START} marker")
    README.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the table in README.md")
    args = parser.parse_args()
    if args.write:
        write()
    else:
        sys.stdout.write(render() + "\n")
