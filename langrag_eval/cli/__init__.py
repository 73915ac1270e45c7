"""The ``langrag-eval`` command. Each subcommand lives in its own module in this package and
exposes ``register(subparsers)``; modules are discovered, so a capability adds its command by adding
a file. User errors print one line and exit with status 2; no traceback.

Only the module of the command being run is imported: ``langrag-eval --help`` and every other
command's entry in it come from :data:`COMMANDS`, one line per command, so starting the program
costs a few milliseconds whatever the capabilities weigh. A module missing from :data:`COMMANDS`
still works; it is imported to be listed.

Before any handler runs, the files the command declared (:mod:`._files`) are checked, and every
number option is checked to be finite: ``nan`` or ``inf`` given as a threshold would compare false
with everything and pass every check made of comparisons."""

from __future__ import annotations

import argparse
import importlib
import math
import pkgutil
import sys
from typing import Any, Sequence

from ..errors import ConfigError, LangragError, redact
from ._files import check_files

__all__ = ["main", "build_parser"]


# The one-line help of each command, as its module registers it (a test keeps the two equal).
COMMANDS = {
    "agents": "run the RAG and RAG-Fusion agents (BM25, KNN, hybrid) and write their answers",
    "agreement": "agreement statistics between two score files (exact, binary, kappa, tau)",
    "compare": "compare two runs item by item, with paired tests and intervals",
    "conversations": "simulate conversations with a chat app, and judge them",
    "gate": "fail (exit 1) when a run falls below a baseline run by more than allowed",
    "grade": "grade answers against labels with the vRAG-Eval 5-level rubric",
    "grammar": "GRAMMAR: grounded test data from a database, modular evaluation",
    "index": "chunk, embed and index documents (embedded or OpenSearch backend)",
    "judge": "judge qualification: audit a judge and print its card",
    "quickstart": "run every capability end to end on a shipped corpus and write the report",
    "report": "write the HTML report of a run",
    "search": "search an index (bm25, knn or hybrid) and print the ranked chunks",
    "store": "copy runs between stores; progress of workers on a shared run",
    "synth": "synthetic test data for a RAG app",
    "thelma": "reference-free THELMA metrics of (query, sources, response), with a diagnosis",
    "tournament": "rank RAG agents by pairwise LLM-judged games (RAGElo)",
}


def _command_names() -> list[str]:
    # pkgutil lists the files without importing them
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, only that command's module is imported and registered in
    full, the others are listed by name and help (all are registered in full without one)."""
    parser = argparse.ArgumentParser(
        prog="langrag-eval",
        description="Grade RAG apps with LLM judges: vRAG-Eval, THELMA, RAGElo tournaments, GRAMMAR.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _command_names():
        if command is not None and name != command and name in COMMANDS:
            sub.add_parser(name, help=COMMANDS[name], add_help=False)
        else:
            importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def _command(argv: Sequence[str]) -> str:
    """The command ``argv`` names (its first word not an option); "" for none (``--help``)."""
    return next((a for a in argv if not a.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command(argv))
    args = parser.parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]  # what --executor ray's workers run
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    # Batches draw progress bars for the command line only; a library call draws none.
    from ..runtime.progress import show_progress
    try:
        _check_numbers(parser, args)
        check_files(args)
        with show_progress():
            return int(args.handler(args) or 0)
    except LangragError as exc:
        # One line, even when the message quotes a library's multi-line text.
        message = " ".join(part.strip() for part in redact(str(exc)).splitlines() if part.strip())
        sub = getattr(args, f"{args.command}_command", None) or getattr(args, "action", None)
        print(f"langrag-eval {args.command}{' ' + sub if sub else ''}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"langrag-eval {args.command}: interrupted; run the same command again to resume",
              file=sys.stderr)
        return 130


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """``{dest: option}`` over the parser and its subcommands' parsers."""
    out: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                for dest, flag in _flags(sub).items():
                    out.setdefault(dest, flag)
        elif action.option_strings:
            out.setdefault(action.dest, action.option_strings[0])
    return out


def _check_numbers(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    def finite(value: Any) -> bool:
        if isinstance(value, float):
            return math.isfinite(value)
        if isinstance(value, (tuple, list)):
            return all(finite(v) for v in value)
        return True
    for dest, value in vars(args).items():
        if not finite(value):
            flag = _flags(parser).get(dest, "--" + dest.replace("_", "-"))
            raise ConfigError(f"{flag} {value}: not a finite number")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
