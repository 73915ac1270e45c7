"""The command starts fast: ``--help`` loads a handful of the package's modules, each command's
module is imported only when that command runs, and the help each module registers is the one
the top-level help lists."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from langrag_eval.cli import COMMANDS, _command_names, build_parser, main

_COUNT = ("import sys, contextlib, io\nfrom langrag_eval.cli import main\nout = io.StringIO()\n"
          "with contextlib.redirect_stdout(out):\n    code = main(ARGV)\n"
          "mods = sorted(m for m in sys.modules if m == 'langrag_eval' or m.startswith('langrag_eval.'))\n"
          "print(code, len(mods), ' '.join(mods)); print(out.getvalue())")


def _run(argv: list[str]) -> tuple[int, list[str], str]:
    done = subprocess.run([sys.executable, "-c", _COUNT.replace("ARGV", repr(argv))],
                          capture_output=True, text=True, timeout=120)
    first, _, rest = done.stdout.partition("\n")
    code, count, names = first.split(" ", 2)
    assert int(count) == len(names.split())
    return int(code), names.split(), rest


def test_help_loads_at_most_twenty_of_the_package_modules() -> None:
    # `--help` exits through argparse; a bare command prints the same help and returns 2
    code, modules, text = _run([])
    assert code == 2 and len(modules) <= 20, modules
    assert not any(m.startswith(("langrag_eval.runtime", "langrag_eval.grading", "langrag_eval.models"))
                   for m in modules)
    for name, line in COMMANDS.items():
        assert name in text and line[:40] in " ".join(text.split())


def test_a_command_loads_its_own_module_and_no_other_command() -> None:
    code, modules, _ = _run(["report", "--list", "--store", ":memory:"])
    assert code == 0
    # the shared option helpers (private modules, named with a leading underscore) are not commands
    commands = {name for m in modules if m.startswith("langrag_eval.cli.")
                if not (name := m.rsplit(".", 1)[1]).startswith("_")}
    assert commands == {"report"}


def test_every_command_module_is_listed_with_the_help_it_registers() -> None:
    assert sorted(COMMANDS) == _command_names()
    parser = build_parser()  # every module registered in full
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    registered = {c.dest: c.help for c in sub._choices_actions}
    assert registered == COMMANDS


def test_help_of_a_command_still_comes_from_its_module(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["grade", "--help"])
    assert exit_.value.code == 0
    assert "--human-cols" in capsys.readouterr().out
