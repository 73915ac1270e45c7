"""What a newcomer meets in the first hour: a judge named by LANGRAG_JUDGE is named so when it is
wrong; ``store status`` and ``report --list`` say which input and command made each run; the run
store's folder stays out of version control. Through the real entry point; git is the oracle of
what version control sees."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cli(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LANGRAG_"))}
    base.update(PYTHONPATH=os.pathsep.join([str(ROOT), base.get("PYTHONPATH", "")]), **(env or {}))
    return subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                           *argv], env=base, cwd=cwd, capture_output=True, text=True, timeout=120)


def _qa(tmp: Path) -> None:
    (tmp / "qa.csv").write_text("question,answer,label\nWho?,Ada.,Ada\n", encoding="utf-8")
    (tmp / "judge.json").write_text('{"": "Score: [[4]], Reason: [[Matches.]]"}', encoding="utf-8")


@pytest.mark.parametrize("value, words", [
    ("nonsense", "unknown judge 'nonsense'"),
    ("scripted:missing.json", "missing.json"),
])
def test_a_wrong_langrag_judge_is_named_as_the_variable(tmp_path: Path, value: str, words: str) -> None:
    _qa(tmp_path)
    done = _cli(tmp_path, "grade", "qa.csv", env={"LANGRAG_JUDGE": value})
    assert done.returncode == 2
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and f"LANGRAG_JUDGE={value!r} (from the environment)" in line
    assert words in line and "unset LANGRAG_JUDGE, or give --judge" in line
    # the same mistake on the command line is not blamed on the environment
    given = _cli(tmp_path, "grade", "qa.csv", "--judge", value)
    assert given.returncode == 2 and "LANGRAG_JUDGE" not in given.stderr


def test_store_status_and_report_list_show_each_runs_input_and_command(tmp_path: Path) -> None:
    _qa(tmp_path)
    assert _cli(tmp_path, "grade", "qa.csv", "--judge", "scripted:judge.json").returncode == 0
    made = "    input: qa.csv; command: langrag-eval grade qa.csv --judge scripted:judge.json"
    for argv in (["store", "status"], ["report", "--list"]):
        done = _cli(tmp_path, *argv)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith("grade-") and lines[1] == made
    one = _cli(tmp_path, "store", "status", lines[0].split()[0])
    assert one.stdout.splitlines()[1] == made


@pytest.mark.skipif(shutil.which("git") is None, reason="git is the oracle")
def test_the_store_folder_it_makes_is_kept_out_of_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _qa(tmp_path)
    assert _cli(tmp_path, "grade", "qa.csv", "--judge", "scripted:judge.json", "--out", "out.jsonl").returncode == 0
    assert (tmp_path / ".langrag" / "runs.sqlite").is_file()
    seen = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path,
                          capture_output=True, text=True, check=True).stdout
    assert ".langrag" not in seen and "out.jsonl" in seen
