"""Options derived from the core's settings classes, and the shape of the command package."""

from __future__ import annotations

import argparse
import ast
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import langrag_eval
from langrag_eval.cli import build_parser, main
from langrag_eval.cli._options import SettingsOptions, add_settings_options
from langrag_eval.errors import ConfigError
from langrag_eval.retrieval import HybridSettings
from langrag_eval.thelma import Thresholds
from langrag_eval.tournament import TournamentConfig

PACKAGE = Path(langrag_eval.__file__).parent


def subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_every_tournament_setting_is_an_option_and_the_defaults_are_the_configs() -> None:
    p = subparser("tournament")
    dests = {a.dest for a in p._actions}
    assert set(TournamentConfig.model_fields) <= dests
    options = SettingsOptions(TournamentConfig, flags={"n_games_per_query": "--games-per-query",
                                                       "n_boot": "--bootstrap"})
    assert options.build(p.parse_args([])) == TournamentConfig()
    # the names users know stay as they were
    flags = {s for a in p._actions for s in a.option_strings}
    assert {"--games-per-query", "--bootstrap", "-k", "--ndcg-gain", "--orders", "--schedule", "--threshold",
            "--max-games", "--relevance-prompt", "--pairwise-prompt", "--pointwise"} <= flags


def _field_values() -> st.SearchStrategy[dict[str, Any]]:
    """Valid values of some TournamentConfig fields, drawn from the fields' own types and bounds."""
    text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=20)
    strategies: dict[str, st.SearchStrategy[Any]] = {
        "schedule": st.sampled_from(typing.get_args(TournamentConfig.model_fields["schedule"].annotation)),
        "orders": st.sampled_from((1, 2)),
        "ndcg_gain": st.sampled_from(("linear", "exponential")),
        "threshold": st.integers(0, 2), "k": st.integers(1, 10**6), "n_boot": st.integers(0, 10**6),
        "n_games_per_query": st.integers(1, 10**6), "max_games": st.none() | st.integers(1, 10**6),
        "pointwise": st.booleans(), "elo_k": st.floats(-1e6, 1e6), "level": st.floats(0.001, 0.999),
        "adaptive_z": st.floats(0.001, 10.0), "seed": st.integers(-10**9, 10**9), "factors": text,
        "pairwise_prompt": text,
    }
    return st.fixed_dictionaries({}, optional=strategies)


@settings(max_examples=150, deadline=None)
@given(values=_field_values())
def test_tournament_options_give_the_config_the_values_typed(values: dict[str, Any]) -> None:
    p = argparse.ArgumentParser()
    options = add_settings_options(p, TournamentConfig)
    argv = []
    for name, value in values.items():
        flag = options.flag(name)
        if isinstance(value, bool):
            argv += [flag] if value else []
        elif value is not None:
            argv.append(f"{flag}={value!r}" if isinstance(value, float) else f"{flag}={value}")
    assert options.build(p.parse_args(argv)) == TournamentConfig(**values)


@pytest.mark.parametrize("argv,start", [
    (["-k", "0"], "-k 0: "), (["--bootstrap", "-1"], "--bootstrap -1: "),
    (["--threshold", "5"], "--threshold 5: "), (["--level", "1.5"], "--level 1.5: "),
    (["--max-games", "0"], "--max-games 0: "), (["--factors", ""], "--factors '': "),
])
def test_a_value_the_config_refuses_is_one_line_naming_the_option(argv: list[str], start: str) -> None:
    p = subparser("tournament")
    options = SettingsOptions(TournamentConfig, flags={"n_boot": "--bootstrap"})
    with pytest.raises(ConfigError) as caught:
        options.build(p.parse_args(argv))
    assert str(caught.value).startswith(start) and "\n" not in str(caught.value)


def test_dataclass_settings_name_the_option_at_fault() -> None:
    p = argparse.ArgumentParser()
    hybrid = add_settings_options(p, HybridSettings)
    assert hybrid.build(p.parse_args(["--weights", "0.3,0.7", "--fusion", "server_rrf"])) == \
        HybridSettings(weights=(0.3, 0.7), fusion="server_rrf")
    with pytest.raises(ConfigError, match=r"^--rank-constant 0: rank_constant must be at least 1"):
        hybrid.build(p.parse_args(["--rank-constant", "0", "--depth", "5"]))
    for bad in ("1", "a,b", "1,2,3", "1,"):
        with pytest.raises(ConfigError, match=r"^--weights takes two numbers separated by commas"):
            hybrid.build(p.parse_args(["--weights", bad]))
    with pytest.raises(SystemExit):  # a choice argparse itself refuses
        p.parse_args(["--fusion", "nosuch"])

    q = argparse.ArgumentParser()
    thresholds = add_settings_options(q, Thresholds, flags={"default_low": "--low", "default_high": "--high"},
                                      exclude=("low", "high"))
    assert thresholds.build(q.parse_args(["--low", "0.2"]), low={"gr": 0.9}, high={"gr": 0.95}) == \
        Thresholds(default_low=0.2, low={"gr": 0.9}, high={"gr": 0.95})
    # each value alone is acceptable to neither default: both options are named
    with pytest.raises(ConfigError, match=r"^--low 0.9, --high 0.1: "):
        thresholds.build(q.parse_args(["--low", "0.9", "--high", "0.1"]))
    with pytest.raises(ConfigError, match=r"^--high 0.1: "):  # --low 0.2 alone is acceptable
        thresholds.build(q.parse_args(["--low", "0.2", "--high", "0.1"]))


def test_a_field_without_a_command_line_form_must_be_excluded() -> None:
    @dataclass(frozen=True)
    class Settings:
        mode: Literal["a", "b"] = "a"
        weights: dict[str, float] = field(default_factory=dict)
        verbose: bool = True

    with pytest.raises(TypeError, match="Settings.weights"):
        SettingsOptions(Settings)
    p = argparse.ArgumentParser()
    options = add_settings_options(p, Settings, exclude=("weights",))
    assert options.build(p.parse_args(["--no-verbose", "--mode", "b"])) == Settings(mode="b", verbose=False)


def test_tournament_command_reports_a_refused_setting_before_any_file_is_written(tmp_path: Path, capsys) -> None:
    (tmp_path / "q.csv").write_text("qid,query\nq1,Q?\n", encoding="utf-8")
    (tmp_path / "a.csv").write_text("qid,agent,answer\nq1,x,A\n", encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    assert main(["tournament", str(tmp_path / "q.csv"), str(tmp_path / "a.csv"), "--judge", "scripted:none.json",
                 "--store", str(store), "--adaptive-z", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("langrag-eval tournament: error: --adaptive-z 0.0: ") and err.count("\n") == 1
    assert not store.exists()


def _imports(path: Path) -> list[str]:
    """The modules ``path`` imports, relative imports resolved against the package."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(p for p in (base, node.module or "") if p)
            names.append(target)
            names += [f"{target}.{a.name}" for a in node.names]  # from . import x
    return names


def test_the_core_never_imports_the_command_line_and_commands_share_only_private_modules() -> None:
    for path in PACKAGE.rglob("*.py"):
        inside = path.parent == PACKAGE / "cli"
        for name in _imports(path):
            if not name.startswith("langrag_eval.cli"):
                continue
            assert inside, f"{path.relative_to(PACKAGE)} imports {name}: the core must not depend on the CLI"
            tail = name.removeprefix("langrag_eval.cli").lstrip(".").split(".")[0]
            # a command module importing another command module for a helper: the helper belongs
            # in a shared _module or in the capability
            assert tail == "" or tail.startswith("_") or path.name == "__init__.py", \
                f"cli/{path.name} imports the command module cli.{tail}"
