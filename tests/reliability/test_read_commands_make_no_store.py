"""The commands that only read a store (report, compare, gate, store status) refuse a store path
that holds none in one line naming it, and no file appears there: every spelling of the path,
with or without an existing folder, and through $LANGRAG_STORE."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.cli import main

COMMANDS = {
    "report": lambda store, out: ["report", "--store", store, "--out", str(out / "r.html")],
    "compare": lambda store, out: ["compare", "run-a", "run-b", "--store", store],
    "gate": lambda store, out: ["gate", "run-a", "--baseline", "run-b", "--max-drop", "grade=0.1", "--store", store,
                                "--junit", str(out / "gate.xml")],
    "store status": lambda store, out: ["store", "status", "--store", store],
}
NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=12).filter(
    lambda n: n not in (".", ".."))


@pytest.mark.parametrize("command", sorted(COMMANDS))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES, nested=st.booleans(), spelling=st.sampled_from(["plain", "dot", "dotdot"]))
def test_a_store_path_holding_no_store_is_refused_and_not_made(tmp_path: Path, capsys, command: str,
                                                                name: str, nested: bool, spelling: str) -> None:
    base = Path(tempfile.mkdtemp(dir=tmp_path))
    target = (base / "sub" / f"{name}.sqlite") if nested else (base / f"{name}.sqlite")
    spelled = {"plain": str(target), "dot": str(target.parent / "." / target.name),
               "dotdot": str(target.parent / ".." / target.parent.name / target.name)}[spelling]
    before = sorted(p.relative_to(base) for p in base.rglob("*"))
    assert main(COMMANDS[command](spelled, base)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and target.name in err, err
    after = sorted(p.relative_to(base) for p in base.rglob("*") if p.name != "gate.xml")  # gate's CI report of the refusal
    assert after == before


@pytest.mark.parametrize("command", ["report", "store status"])
def test_a_missing_store_from_the_environment_is_refused_and_not_made(tmp_path: Path, capsys, monkeypatch,
                                                                      command: str) -> None:
    target = tmp_path / "env.sqlite"
    monkeypatch.setenv("LANGRAG_STORE", str(target))
    argv = [a for a in COMMANDS[command]("X", tmp_path) if a not in ("--store", "X")]
    assert main(argv) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not os.path.lexists(target)
