"""The ``langrag-eval`` command. Each subcommand lives in its own module in this package and
exposes ``register(subparsers)``; modules are discovered, so a capability adds its command by adding
a file. User errors print one line and exit with status 2; no traceback.

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="langrag-eval",
        description="Grade RAG apps with LLM judges: vRAG-Eval, THELMA, RAGElo tournaments, GRAMMAR.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        _check_numbers(parser, args)
        check_files(args)
        return int(args.handler(args) or 0)
    except LangragError as exc:
        # One line, even when the message quotes a library's multi-line text.
        message = " ".join(part.strip() for part in redact(str(exc)).splitlines() if part.strip())
        print(f"langrag-eval {args.command}: error: {message}", file=sys.stderr)
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
