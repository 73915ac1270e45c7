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


def test_grade_with_a_scripted_judge_loads_no_statistics_report_builder_or_thelma(tmp_path) -> None:
    # storing the items for the report and a scripted judge once loaded scipy.stats and numpy
    data, judge = tmp_path / "qa.csv", tmp_path / "judge.json"
    data.write_text("id,question,answer,label\nq1,Why?,Because.,Because\n", encoding="utf-8")
    judge.write_text('{"": "Score: [[4]], Reason: [[Matches.]]"}', encoding="utf-8")
    code = ("import sys\nfrom langrag_eval.cli import main\n"
            f"code = main(['grade', {str(data)!r}, '--judge', 'scripted:' + {str(judge)!r}, "
            f"'--store', {str(tmp_path / 'runs.sqlite')!r}, '--out', {str(tmp_path / 'out.jsonl')!r}])\n"
            "print(code, ' '.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    code_, modules = done.stdout.splitlines()[-1].split(" ", 1)
    assert code_ == "0", done.stderr
    loaded = set(modules.split())
    assert not loaded & {"numpy", "scipy", "langrag_eval.report.build", "langrag_eval.thelma",
                         "langrag_eval.tournament", "langrag_eval.audit"}, sorted(loaded)
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8").count("\n") == 1


def test_the_test_doubles_load_on_first_use_and_name_what_they_did() -> None:
    # testing.overlap is a module and the function it defines: the name stays the function's
    code = ("import sys, langrag_eval.testing as t\n"
            "before = 'langrag_eval.testing.overlap' in sys.modules\n"
            "t.overlap_model\n"
            "print(before, callable(t.overlap) and t.overlap.__module__, t.ScriptedModel.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "langrag_eval.testing.overlap", "ScriptedModel"], done.stderr
