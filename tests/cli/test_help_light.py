"""``langrag-eval COMMAND --help`` is printed without importing the judging stack: the command's
module imports its capability when it runs, not when it registers its options. Checked for every
command and subcommand, found by walking the parser, by the modules a fresh interpreter holds after
printing the help (a wall-clock limit would be flaky on a loaded machine; ``benchmarks/cli_startup.py``
reports the times). The help is arranged in the same groups, in the same order, for every command."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import pytest

from langrag_eval.cli import build_parser

# Never loaded to print a help, whatever the command.
NEVER = ("numpy", "scipy", "openai", "anthropic", "httpx", "aiohttp", "sqlalchemy", "jinja2", "rich",
         "pandas", "torch", "onnxruntime", "tokenizers", "opensearchpy", "ray", "sqlite3")
# Of the package, the help loads its root, the typed errors, the file helpers and the command line;
# a command whose options are made from a settings class loads that class's light module.
LIGHT = ("langrag_eval.errors", "langrag_eval.files", "langrag_eval.cli")
SETTINGS = {"search": {"langrag_eval.retrieval", "langrag_eval.retrieval.settings"},
            "thelma": {"langrag_eval.thelma", "langrag_eval.thelma.thresholds"},
            "tournament": {"langrag_eval.tournament", "langrag_eval.tournament.config"}}
# TournamentConfig is a pydantic model (its validator built on first use, not for the help).
THIRD_PARTY = {"tournament": {"pydantic", "pydantic_core", "annotated_types", "typing_extensions",
                              "typing_inspection"}}


def _walk(parser: argparse.ArgumentParser, path: list[str]) -> list[list[str]]:
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _walk(sub, path + [name])
    return found


# Every command and subcommand, and the bare `langrag-eval --help` ([]).
COMMANDS = _walk(build_parser(), [])
LEAVES = [c for c in COMMANDS if c and not any(o[:len(c)] == c and o != c for o in COMMANDS)]

_PROBE = ("import sys, contextlib, io, json\nfrom langrag_eval.cli import main\nout = io.StringIO()\n"
          "with contextlib.redirect_stdout(out):\n    try:\n        main(ARGV)\n    except SystemExit as e:\n"
          "        code = e.code\nprint(json.dumps({'code': code, 'modules': sorted(sys.modules), "
          "'help': out.getvalue()}))")
_BARE = "import sys, json\nprint(json.dumps(sorted(sys.modules)))"


def _help(argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE.replace("ARGV", repr(argv + ["--help"]))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def interpreter_modules() -> set[str]:
    """What an interpreter holds before importing anything (site's own imports)."""
    done = subprocess.run([sys.executable, "-c", _BARE], capture_output=True, text=True, timeout=120,
                          check=True)
    return set(json.loads(done.stdout))


def test_the_walk_finds_the_commands_and_their_subcommands() -> None:
    assert [] in COMMANDS and ["grade"] in COMMANDS and ["store", "status"] in COMMANDS
    assert ["conversations", "judge"] in COMMANDS and len(COMMANDS) >= 25


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a) or "(top)")
def test_help_imports_none_of_the_judging_stack(argv: list[str], interpreter_modules: set[str]) -> None:
    shown = _help(argv)
    assert shown["code"] == 0 and "usage: langrag-eval" + "".join(" " + a for a in argv) in shown["help"]
    modules = set(shown["modules"])
    assert not {m for m in modules if m.split(".")[0] in NEVER}
    command = argv[0] if argv else ""
    third_party = {top for m in modules - interpreter_modules if (top := m.split(".")[0])
                   not in sys.stdlib_module_names and not top.startswith(("langrag_eval", "_"))}
    assert third_party <= THIRD_PARTY.get(command, set()), sorted(third_party)
    ours = {m for m in modules if m.startswith("langrag_eval.")}
    heavy = {m for m in ours if not m.startswith(LIGHT)} - SETTINGS.get(command, set())
    assert heavy == set(), sorted(heavy)
    # of the command modules, the command's own only (the others are listed by name and help)
    commands = {m for m in ours if re.fullmatch(r"langrag_eval\.cli\.[a-z]\w*", m)}
    assert commands == ({f"langrag_eval.cli.{command}"} if command else set())


def test_the_settings_packages_load_their_capability_on_first_use() -> None:
    # The help imports HybridSettings through langrag_eval.retrieval; the package's other names, the
    # retrieval stack (numpy, pydantic), load when asked for, and its `ingest` stays the function
    # even when its submodule of that name is imported directly first.
    code = ("import sys\nimport langrag_eval.retrieval as r\n"
            "light = not {'numpy', 'pydantic'} & set(sys.modules)\n"
            "from langrag_eval.retrieval.ingest import load_path\n"
            "from langrag_eval.retrieval import ingest, Chunk\n"
            "from langrag_eval.retrieval.base import HybridSettings\n"
            "from langrag_eval.thelma import Thresholds\n"
            "from langrag_eval.thelma.diagnosis import Thresholds as T\n"
            "print(light, callable(ingest), r.ingest is ingest, HybridSettings is r.HybridSettings, "
            "T is Thresholds, 'numpy' in sys.modules, Chunk.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True", "True", "True", "True", "True", "True", "Chunk"], done.stderr


@pytest.mark.parametrize("argv", [c for c in LEAVES if c[0] in ("grade", "thelma", "tournament", "run",
                                                                "quickstart", "agents", "grammar", "judge",
                                                                "synth") and c[-1] != "schema"],
                         ids=" ".join)
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
