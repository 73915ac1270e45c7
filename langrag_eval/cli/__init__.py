"""The ``langrag-eval`` command. Each subcommand lives in its own module in this package and
exposes ``register(subparsers)``; modules are discovered, so a capability adds its command by adding
a file. User errors print one line and exit with status 2; no traceback. A judge that cannot be
reached or refuses the key (:class:`~langrag_eval.errors.JudgeUnavailableError`) stops the command
at once with one line naming the cause and the fix, and exit status 3.

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
from typing import Any, NoReturn, Sequence

from ..errors import ConfigError, JudgeUnavailableError, LangragError, redact
from ..files.terminal import shown, shown_lines
from ._files import check_files
from ._startup import as_program, loading

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
    "run": "run any evaluators (built-in or installed) over a sample file as one run",
    "search": "search an index (bm25, knn or hybrid) and print the ranked chunks",
    "store": "copy runs between stores; progress of workers on a shared run",
    "synth": "synthetic test data for a RAG app",
    "thelma": "reference-free THELMA metrics of (query, sources, response), with a diagnosis",
    "tournament": "rank RAG agents by pairwise LLM-judged games (RAGElo)",
    "trajectories": "match agents' trajectories against references, or judge them, as one run",
}


def _command_names() -> list[str]:
    # pkgutil lists the files without importing them
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors suggest the nearest command or option ("did you mean")."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        import difflib
        import re

        hint = ""
        if m := re.search(r"invalid choice: '([^']*)'", message):
            names = [c for a in self._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices]
            near = difflib.get_close_matches(m.group(1), names or [str(c) for a in self._actions
                                                                    for c in (a.choices or [])], n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
        elif m := re.search(r"unrecognized arguments: (\S+)", message):
            wrong = m.group(1).split("=")[0]
            options = list(_all_options(self))  # the command's own too: the top parser reports them
            near = difflib.get_close_matches(wrong, options, n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]}?)" if near else ""
        super().error(message + hint)

    def _print_message(self, message: str, file: Any = None) -> None:  # type: ignore[override]
        # An error quotes what was typed (a file name, a value): its controls shown, not obeyed.
        super()._print_message(shown_lines(message), file)


def _all_options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of the subcommands' parsers registered in it."""
    out: set[str] = set()
    for action in parser._actions:
        out.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out |= _all_options(sub)
    return out


def _version() -> str:
    from .. import __version__

    return f"langrag-eval {__version__}"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, only that command's module is imported and registered in
    full, the others are listed by name and help (all are registered in full without one)."""
    parser = _Parser(
        prog="langrag-eval",
        description="Grade RAG apps with LLM judges: vRAG-Eval, THELMA, RAGElo tournaments, GRAMMAR.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _command_names():
        if command is not None and name != command and name in COMMANDS:
            sub.add_parser(name, help=COMMANDS[name], add_help=False)
        else:
            importlib.import_module(f"{__name__}.{name}").register(sub)
    _arrange(parser)
    return parser


def _arrange(parser: argparse.ArgumentParser) -> None:
    """Every command's help in one order of groups: input, the command's own options, judge, run and
    store, batch and Ray, output (the groups of :mod:`._options`)."""
    from ._options import BATCH_AND_RAY, INPUT, JUDGE, OUTPUT, RUN_AND_STORE

    order = {INPUT: 1, JUDGE: 3, RUN_AND_STORE: 4, BATCH_AND_RAY: 5, OUTPUT: 6}
    inputs = next((g for g in parser._action_groups if g.title == INPUT), None)
    if inputs is not None:  # the input files named as arguments are input too
        files = [a for a in parser._positionals._group_actions if not isinstance(a, argparse._SubParsersAction)]
        inputs._group_actions[:0] = [a for a in files if a not in inputs._group_actions]
        parser._positionals._group_actions[:] = [a for a in parser._positionals._group_actions if a not in files]
    parser._action_groups.sort(key=lambda g: order.get(g.title or "", 0 if g is parser._positionals else 2))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _arrange(child)


def _command(argv: Sequence[str]) -> str:
    """The command ``argv`` names (its first word not an option); "" for none (``--help``)."""
    return next((a for a in argv if not a.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    with as_program(argv is None):
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    with loading():
        parser = build_parser(_command(argv))
        args = parser.parse_args(argv)
        if not getattr(args, "handler", None):
            parser.print_help()
            return 2
        # Batches draw progress bars for the command line only; a library call draws none.
        from ..runtime.progress import show_progress
        from ..files.writing import REPLACE_CHECKS
    args.argv = list(argv) if argv is not None else sys.argv[1:]  # what --executor ray's workers run

    def nothing_scored() -> str | None:
        # the judging commands' module, only where one was loaded (not for --help, nor report)
        common = sys.modules.get(f"{__name__}._common")
        return common.nothing_scored() if common is not None else None

    def keep_results(target: Any) -> None:
        if (why := nothing_scored()) is not None:
            raise JudgeUnavailableError(f"{why}; {target} was left as it was")

    if (common := sys.modules.get(f"{__name__}._common")) is not None:
        common.JUDGES.clear()  # another command's judges, in a process that ran one before
    REPLACE_CHECKS.append(keep_results)
    try:
        _check_numbers(parser, args)
        check_files(args)
        if getattr(args, "dry_run", False):
            return _dry_run(args)
        with show_progress():
            status = int(args.handler(args) or 0)
        if status == 0 and (why := nothing_scored()) is not None:
            print(f"langrag-eval {args.command}: {shown(why)}", file=sys.stderr)
            return 3
        return status
    except JudgeUnavailableError as exc:
        message = _one_line(str(exc))
        print(f"langrag-eval {args.command}: judge unavailable: {message}. Nothing more was sent; finished "
              "items are kept: run the same command again once fixed, to resume", file=sys.stderr)
        return 3
    except LangragError as exc:
        message = _one_line(str(exc))
        sub = getattr(args, f"{args.command}_command", None) or getattr(args, "action", None)
        print(f"langrag-eval {args.command}{' ' + sub if sub else ''}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"langrag-eval {args.command}: interrupted; run the same command again to resume",
              file=sys.stderr)
        return 130
    finally:
        REPLACE_CHECKS.remove(keep_results)


def _one_line(message: str) -> str:
    """An error as one line, even when it quotes a library's multi-line text (its lines joined by a
    space), its secrets masked, and the file names, ids and providers' words in it shown with any
    other control or bidi character escaped (a lone ``\\r`` in a file name is shown as ``\\r``)."""
    lines = (line.strip(" \t") for line in redact(message).replace("\r\n", "\n").split("\n"))
    return shown(" ".join(line for line in lines if line))


def _dry_run(args: argparse.Namespace) -> int:
    """Run the command with ``--dry-run``'s judge (see :mod:`._dryrun`): its own output hidden,
    stopped at its first file to write, then the one line of what it would have sent."""
    import contextlib
    import io

    from ..files.writing import WRITE_CHECKS
    from ._dryrun import DryRunStop, dry_run_line

    def stop(target: Any) -> None:
        raise DryRunStop(str(target))

    WRITE_CHECKS.append(stop)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            args.handler(args)
    except DryRunStop:
        pass
    finally:
        WRITE_CHECKS.remove(stop)
    common = sys.modules[f"{__name__}._common"]
    prices = None
    if getattr(args, "prices", None):
        from ..runtime import PriceTable
        prices = PriceTable.read(args.prices)
    print(redact(dry_run_line(args.command, list(common.JUDGES), prices, batch=bool(getattr(args, "batch", False)))))
    return 0


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
