"""Start-up with the cyclic collector paused (``langrag_eval.cli._startup``): as the program, a
command freezes what loading its stack made and collects again afterwards, with fewer passes than
with the collector left on; called as ``main([...])`` from another program, it leaves that
program's objects unfrozen and its collector on, also when the command fails while loading."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from langrag_eval.cli import main

REPLY = "Score: [[4]], Reason: [[Close to the label.]]"
ITEMS = 2  # a run this small is nearly all start-up

_PROGRAM = """
import gc, json, sys
passes = [0]
gc.callbacks.append(lambda phase, info: passes.__setitem__(0, passes[0] + (phase == "start")))
if {paused!r} == "off":
    from contextlib import nullcontext
    import langrag_eval.cli as cli, langrag_eval.cli._common as common, langrag_eval.cli.grade as grade
    cli.loading = common.loading = grade.loading = nullcontext
sys.argv = ["langrag-eval", *{argv!r}]
from langrag_eval.cli import main
code = main()
print(json.dumps({{"code": code, "enabled": gc.isenabled(), "frozen": gc.get_freeze_count(), "passes": passes[0]}}))
"""


def _files(tmp_path: Path) -> list[str]:
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"": REPLY}), encoding="utf-8")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?", "answer": "A.", "reference": "A."}) + "\n"
                            for i in range(ITEMS)), encoding="utf-8")
    return ["grade", str(data), "--judge", f"scripted:{judge}", "--store", str(tmp_path / "r.sqlite")]


def _program(tmp_path: Path, paused: str) -> dict[str, int | bool]:
    argv = _files(tmp_path) + ["--out", str(tmp_path / f"out-{paused}.jsonl")]
    done = subprocess.run([sys.executable, "-c", _PROGRAM.format(argv=argv, paused=paused)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_program_freezes_its_start_up_after_a_fraction_of_the_passes(tmp_path: Path) -> None:
    paused, on = _program(tmp_path, "paused"), _program(tmp_path, "off")
    assert paused["code"] == on["code"] == 0
    assert paused["enabled"] and on["enabled"]
    assert paused["frozen"] > 10_000 and on["frozen"] == 0
    assert paused["passes"] < on["passes"] / 3, (paused, on)


def test_a_command_called_from_a_program_leaves_its_objects_alone(tmp_path: Path) -> None:
    before = gc.get_freeze_count()
    assert main(_files(tmp_path) + ["--out", str(tmp_path / "out.jsonl")]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == before


def test_a_command_that_fails_while_loading_its_judge_turns_the_collector_back_on(tmp_path: Path, capsys) -> None:
    argv = _files(tmp_path)
    argv[argv.index("--judge") + 1] = "nosuchprovider:model"
    assert main(argv + ["--out", str(tmp_path / "out.jsonl")]) != 0
    assert "nosuchprovider" in capsys.readouterr().err
    assert gc.isenabled()
