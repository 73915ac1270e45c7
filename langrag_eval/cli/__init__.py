"""The ``langrag-eval`` command. Each subcommand lives in its own module in this package and
exposes ``register(subparsers)``; modules are discovered, so a capability adds its command by adding
a file. User errors print one line and exit with status 2; no traceback."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from ..errors import LangragError, redact

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
    # Batches draw progress bars for the command line only; a library call draws none.
    from ..runtime.progress import show_progress
    try:
        with show_progress():
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
