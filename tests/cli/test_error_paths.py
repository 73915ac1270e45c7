"""Every command's error paths, as a user meets them: exit status 2 for a usage or input error
(1 is kept for a failed gate), and a first line on stderr that names the command and says what is
wrong in the user's terms: the file, the option, what was expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.runtime import open_store


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.csv").write_text("question,answer,label\n", encoding="utf-8")
    (tmp_path / "rejected.jsonl").write_text('{"qid": "q1"}\n{"query": 3}\n', encoding="utf-8")
    (tmp_path / "sources-text.jsonl").write_text(
        json.dumps({"query": "Who?", "sources": "text", "response": "Ada."}) + "\n", encoding="utf-8")
    (tmp_path / "judge.json").write_text('["Score: [[4]], Reason: [[ok]]"]', encoding="utf-8")
    open_store(str(tmp_path / "runs.sqlite")).close()  # a store with no run: the reading commands' cases
    return tmp_path


# (argv, exit status, words the first stderr line holds, in order)
CASES = [
    (["conversations", "judge", "missing.jsonl"], 2, ["conversations judge: error:", "missing.jsonl", "not found"]),
    (["grade", "missing.csv"], 2, ["grade: error:", "missing.csv", "not found"]),
    (["trajectories", "missing.jsonl"], 2, ["trajectories: error:", "missing.jsonl", "not found"]),
    (["grade", "empty.csv", "--judge", "scripted:judge.json"], 2, ["grade: error:", "empty.csv", "no row could be read"]),
    (["grade", "empty.csv", "--threshold", "7"], 2, ["grade: error:", "--threshold", "1 to 5"]),
    (["thelma", "sources-text.jsonl", "--judge", "scripted:judge.json", "--metrics", "gr"], 2,
     ["warning:", "sources-text.jsonl:1", 'field "sources"', 'expected a list of source texts such as ["first passage"',
      "got the text 'text'"]),
    (["thelma", "missing.jsonl"], 2, ["thelma: error:", "missing.jsonl"]),
    (["tournament"], 2, ["tournament: error:", "expected queries.csv", "--answers run.jsonl"]),
    (["tournament", "--answers", "rejected.jsonl", "--judge", "scripted:judge.json"], 2, ["warning:", "rejected.jsonl"]),
    (["report"], 2, ["report: error:", "give a run id", "report --list"]),
    (["report", "--run", "nope"], 2, ["report: error:", "no run 'nope'"]),
    (["report", "a", "--run", "b"], 2, ["report: error:", "two runs named"]),
    (["compare", "a", "b"], 2, ["compare: error:", "no run 'a'"]),
    (["compare", "a", "b", "--level", "2"], 2, ["compare: error:", "--level 2", "between 0 and 1"]),
    (["gate", "a", "--baseline", "b"], 2, ["gate: error:", "--max-drop METRIC=DROP", "accept_rate=0.02"]),
    (["gate", "a", "--baseline", "b", "--max-drop", "accept_rate=0.02", "--min-n", "-1"], 2,
     ["gate: error:", "--min-n -1", "--min-n 30"]),
    # metric names are the runs' score names, so the runs are read first (an unknown metric of two
    # existing runs: tests/compare/test_gate_cli.py)
    (["gate", "a", "--baseline", "b", "--max-drop", "nonsense=1"], 2, ["gate: error:", "no run 'b'"]),
    (["judge", "audit", "--max-items", "0"], 2, ["judge audit: error:", "--max-items must be at least 1"]),
    (["judge", "audit", "--batteries", "nope"], 2, ["judge audit: error:", "--batteries", "choose from"]),
    (["agreement", "missing.csv", "other.csv"], 2, ["agreement: error:", "missing.csv", "not found"]),
    (["index", "no-such-folder"], 2, ["index: error:", "no-such-folder"]),
    (["search", "question", "--store-dir", "no-index"], 2, ["search: error:", "no embedded index in no-index",
                                                           "langrag-eval index"]),
    (["quickstart", "--questions", "9"], 2, ["quickstart: error:", "--questions must be 1..8"]),
    (["store", "status", "--run", "nope"], 2, ["store status: error:", "no run 'nope'"]),
    (["run", "qa.jsonl", "--evaluator", "nopkg/nope"], 2, ["run: error:", "unknown evaluator 'nopkg/nope'",
                                                          "vrag, thelma, grammar"]),
    (["agents", "--queries", "q.jsonl", "--out", "a.jsonl", "--agents", "nope"], 2,
     ["agents: error:", "--agents", "unknown agent", "choose from"]),
    (["grammar", "analyze"], 2, ["usage: langrag-eval grammar analyze"]),
    (["synth", "queries"], 2, ["usage: langrag-eval synth queries"]),
    (["no-such-command"], 2, ["usage: langrag-eval"]),
]


@pytest.mark.parametrize("argv, status, words", CASES, ids=[" ".join(c[0][:3]) for c in CASES])
def test_error_path(files: Path, capsys: pytest.CaptureFixture[str], argv: list[str], status: int,
                    words: list[str]) -> None:
    store = ["--store", str(files / "runs.sqlite")] if argv[0] in ("report", "compare", "gate") or argv[:2] == \
        ["store", "status"] else []
    try:
        code = main(argv + store)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    assert code == status
    err = capsys.readouterr().err
    first = next(line for line in err.splitlines() if line.strip())
    position = 0
    for word in words:
        found = first.find(word, position)
        assert found >= 0, f"{word!r} not in the first line: {first!r}"
        position = found + len(word)
    assert "Traceback" not in err


def test_a_tournament_with_every_row_rejected_exits_2_saying_nothing_to_rank(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "--answers", "rejected.jsonl", "--judge", "scripted:judge.json",
                 "--store", str(files / "runs.sqlite")]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("langrag-eval tournament: error:") and "nothing to rank" in last


def test_every_command_has_an_error_path_here() -> None:
    from langrag_eval.cli import COMMANDS

    assert {c[0][0] for c in CASES} >= set(COMMANDS)


def test_help_texts_read_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["judge", "audit", "--help"], ["gate", "--help"], ["report", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        assert "%%" not in out and "%(" not in out
    with pytest.raises(SystemExit):
        main(["judge", "audit", "--help"])
    assert "95 % interval" in " ".join(capsys.readouterr().out.split())
    for command in ("report", "compare", "gate"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert "--continue" not in out and "--no-wait" not in out and "--store" in out


def test_quickstart_folder_is_announced_and_kept_out_of_version_control(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil
    import subprocess

    from langrag_eval.cli.quickstart import _prepare_folder

    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
    _prepare_folder(tmp_path / "langrag-quickstart")
    assert "writing into" in capsys.readouterr().err
    (tmp_path / "langrag-quickstart" / "report.html").write_text("<!DOCTYPE html>", encoding="utf-8")
    status = subprocess.run([git, "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""  # git itself sees nothing to track
    # an existing folder of the user's is written into, never given a .gitignore
    mine = tmp_path / "mine"
    mine.mkdir()
    _prepare_folder(mine)
    assert not (mine / ".gitignore").exists()
