"""``langrag-eval COMMAND --help`` is printed without importing the judging stack: the command's
module imports its capability when it runs, not when it registers its options. Checked by the
modules a fresh interpreter holds after printing the help (a wall-clock limit would be flaky on a
loaded machine). The help is arranged in the same groups, in the same order, for every command."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

HEAVY = ("langrag_eval.runtime", "langrag_eval.run", "langrag_eval.models", "langrag_eval.prompting",
         "langrag_eval.verdicts", "langrag_eval.grading", "langrag_eval.thelma", "langrag_eval.tournament",
         "langrag_eval.grammar", "langrag_eval.pipelines", "langrag_eval.report", "langrag_eval.audit",
         "langrag_eval.quickstart", "langrag_eval.synth", "langrag_eval.retrieval", "langrag_eval.compare",
         "langrag_eval.stats", "langrag_eval.conversations", "langrag_eval.types", "langrag_eval.model",
         "jinja2", "numpy", "scipy", "pydantic", "sqlite3", "httpx", "openai", "anthropic", "sqlalchemy")

# Its options are made from HybridSettings, whose module imports the retrieval stack.
FROM_SETTINGS = {"search"}
# THELMA's and the tournament's are made from a settings class, a pydantic model in a module of its own.
ALLOWED = {"thelma": ("langrag_eval.thelma", "langrag_eval.thelma.diagnosis", "langrag_eval.results", "pydantic"),
           "tournament": ("langrag_eval.tournament", "langrag_eval.tournament.config", "pydantic")}

COMMANDS = [["agents"], ["agreement"], ["compare"], ["conversations", "simulate"], ["conversations", "judge"],
            ["gate"], ["grade"], ["grammar", "schema"], ["grammar", "generate"], ["grammar", "analyze"],
            ["index"], ["judge", "audit"], ["quickstart"], ["report"], ["run"], ["store", "copy"],
            ["store", "status"], ["synth", "queries"], ["thelma"], ["tournament"], ["trajectories"], ["search"]]

_PROBE = ("import sys, contextlib, io, json\nfrom langrag_eval.cli import main\nout = io.StringIO()\n"
          "with contextlib.redirect_stdout(out):\n    try:\n        main(ARGV)\n    except SystemExit as e:\n"
          "        code = e.code\nprint(json.dumps({'code': code, 'modules': sorted(sys.modules), "
          "'help': out.getvalue()}))")


def _help(argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE.replace("ARGV", repr(argv + ["--help"]))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_help_imports_none_of_the_judging_stack(argv: list[str]) -> None:
    shown = _help(argv)
    assert shown["code"] == 0 and "usage: langrag-eval " + " ".join(argv) in shown["help"]
    loaded = [m for m in shown["modules"] if m.startswith(HEAVY) and m.split(".")[0:2] != ["langrag_eval", "cli"]
              and not (m in ALLOWED.get(argv[0], ()) or m.startswith("pydantic") and argv[0] in ALLOWED)]
    if argv[0] in FROM_SETTINGS:
        loaded = [m for m in loaded if not m.startswith(f"langrag_eval.{argv[0]}")]
        other_commands = {m for m in shown["modules"] if re.fullmatch(r"langrag_eval\.cli\.[a-z]\w*", m)}
        assert other_commands == {f"langrag_eval.cli.{argv[0]}"}
        return
    assert loaded == [], loaded


@pytest.mark.parametrize("argv", [c for c in COMMANDS if c[0] in ("grade", "thelma", "tournament", "run",
                                                                  "quickstart", "agents", "grammar",
                                                                  "judge", "synth") and c[-1] != "schema"], ids=" ".join)
def test_help_groups_come_in_one_order(argv: list[str]) -> None:
    text = _help(argv)["help"]
    titles = [line[:-1] for line in text.splitlines() if re.fullmatch(r"[a-z][a-zA-Z ()]*:", line)]
    expected = ["input", "options", "judge", "run and store", "batch and Ray", "output"]
    assert [t for t in titles if t in expected] == [t for t in expected if t in titles]
    assert {"judge", "run and store"} <= set(titles), titles
    assert argv == ["quickstart"] or "input" in titles  # the quickstart reads its shipped corpus
    assert "positional arguments" not in titles  # the input files are listed under input


def test_the_copies_the_help_shows_equal_the_core() -> None:
    from langrag_eval.audit import BATTERIES
    from langrag_eval.cli import _options
    from langrag_eval.pipelines import AGENT_NAMES
    from langrag_eval.retrieval.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE
    from langrag_eval.runtime import DEFAULT_STORE

    assert _options.DEFAULT_STORE == DEFAULT_STORE.as_posix()
    assert (_options.CHUNK_SIZE, _options.CHUNK_OVERLAP) == (DEFAULT_SIZE, DEFAULT_OVERLAP)
    assert _options.AGENT_NAMES == AGENT_NAMES and _options.AUDIT_BATTERIES == BATTERIES


def test_the_settings_modules_copies_equal_the_core() -> None:
    import typing

    from langrag_eval.stats.ranking_metrics import Gain
    from langrag_eval.thelma import DEFAULT_SD_THRESHOLD, METRICS
    from langrag_eval.tournament import config
    from langrag_eval.cli import _options

    assert set(typing.get_args(config.Gain)) == set(typing.get_args(Gain))
    assert (_options.THELMA_METRICS, _options.THELMA_SD_THRESHOLD) == (METRICS, DEFAULT_SD_THRESHOLD)
