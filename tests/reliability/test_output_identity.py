"""No output is ever written over anything else the command reads or writes.

Generated, not hand-picked: every command x every file it reads (inputs, judge file, price table,
prompt templates, examples, labelled data, documents, queries, the run store, the database) x every
output option x five spellings of the same file (the same path, ``./``, ``../``, a symbolic link, a
hard link). Each is refused through ``langrag-eval`` itself in one line naming both options, exit
status 2, with every byte of the file unchanged. Hypothesis then spells paths through chains of
``.``, ``..`` and linked folders, and checks that the rule refuses exactly the spellings of the
same file and lets every other name through.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.cli import build_parser, main
from langrag_eval.cli._files import check_files
from langrag_eval.errors import ConfigError
from langrag_eval.runtime import RunStore

JUDGE = ["--judge", "scripted:judge.json", "--prices", "prices.json", "--store", "runs.sqlite"]

# command -> (its arguments, naming every file it can read, and its output options)
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "grade": (["grade", "qa.csv", "--prompt", "prompt.txt", "--rubric", "rubric.txt",
               "--examples", "examples.jsonl", *JUDGE], ["--out"]),
    "thelma": (["thelma", "traffic.jsonl", "--prompt", "match_essential=prompt.txt", *JUDGE], ["--out"]),
    "judge audit": (["judge", "audit", "--data", "data.csv", *JUDGE], ["--json", "--report"]),
    "tournament": (["tournament", "--answers", "answers.jsonl", "--factors-file", "factors.txt", *JUDGE],
                   ["--json"]),
    "tournament csv": (["tournament", "queries.csv", "documents.csv", "answers.csv", *JUDGE], ["--json"]),
    "agents": (["agents", "--corpus", "corpus.txt", "--queries", "queries.jsonl", *JUDGE], ["--out"]),
    "synth queries": (["synth", "queries", "--corpus", "corpus.json", "--examples", "examples.txt",
                       "--generator", "scripted:judge.json", "--prompt", "prompt.txt",
                       "--store", "runs.sqlite"], ["--out", "--pool-out"]),
    "grammar generate": (["grammar", "generate", "--db", "db.sqlite", "--templates", "templates.json", *JUDGE],
                         ["--out"]),
    "grammar analyze": (["grammar", "analyze", "--dataset", "dataset.jsonl", "--answers", "answers.jsonl",
                         "--verdicts", "verdicts.jsonl", *JUDGE], ["--out"]),
    "report": (["report", "some-run", "--store", "runs.sqlite"], ["--out"]),
    "compare": (["compare", "run-a", "run-b", "--store", "runs.sqlite"], ["--json"]),
    "gate": (["gate", "run-a", "--baseline", "run-b", "--max-drop", "grade=0.1", "--store", "runs.sqlite"],
             ["--junit"]),
    "agreement": (["agreement", "a.csv", "b.csv"], ["--json"]),
}

_OPTIONS_WITH_FILES = {"--prompt", "--rubric", "--examples", "--data", "--answers", "--factors-file",
                       "--corpus", "--queries", "--db", "--templates", "--dataset", "--verdicts", "--store",
                       "--judge", "--prices", "--generator"}


def _files_of(argv: list[str]) -> list[str]:
    """Every file name the arguments give (positionals ending in a suffix, and option values)."""
    out = []
    for i, arg in enumerate(argv):
        previous = argv[i - 1] if i else ""
        name = arg.split(":", 1)[-1].split("=", 1)[-1]
        if previous in _OPTIONS_WITH_FILES or ("." in arg and not arg.startswith("-")
                                               and previous not in ("--max-drop",)):
            if "." in name:
                out.append(name)
    return list(dict.fromkeys(out))


def _populate(work: Path) -> None:
    """Every file the commands name, with plausible content; the run store a real one."""
    texts = {
        "qa.csv": "id,question,answer,label\nq1,Who?,Ada,Ada\n",
        "judge.json": json.dumps(["Score: [[4]]"]), "prices.json": json.dumps({"scripted": [1.0, 2.0]}),
        "prompt.txt": "{#\ntask: x\nvariables: question\noutput: text\n#}\n{{ question }}\n",
        "rubric.txt": "5: right\n1: wrong\n", "examples.jsonl": "",
        "traffic.jsonl": json.dumps({"query": "q", "sources": ["s"], "response": "r"}) + "\n",
        "data.csv": "question,answer,label,score\nWho?,Ada,Ada,5\n",
        "answers.jsonl": "", "factors.txt": "be brief\n", "queries.csv": "qid,query\nq1,Who?\n",
        "documents.csv": "qid,did,document\nq1,d1,text\n", "answers.csv": "qid,agent,answer\nq1,a,Ada\n",
        "corpus.txt": "A document.\n", "queries.jsonl": json.dumps({"qid": "q1", "query": "Who?"}) + "\n",
        "corpus.json": json.dumps({"d1": "A document."}), "examples.txt": "Who?\n",
        "templates.json": "[]", "dataset.jsonl": "", "verdicts.jsonl": "",
        "a.csv": "id,score\n1,4\n", "b.csv": "id,score\n1,5\n",
    }
    for name, text in texts.items():
        (work / name).write_text(text, encoding="utf-8")
    RunStore(work / "runs.sqlite").close()
    with sqlite3.connect(work / "db.sqlite") as db:
        db.execute("CREATE TABLE t (x INTEGER)")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _spell(work: Path, name: str, how: str) -> str:
    """``name`` (a file in ``work``, the current folder) spelled another way."""
    if how == "same":
        return name
    if how == "dot":
        return f"./{name}"
    if how == "dotdot":
        return f"../{work.name}/{name}"
    link = work / f"{how}-{name}"
    if how == "symlink":
        link.symlink_to(name)
    else:
        os.link(work / name, link)
    return link.name


CASES = [(command, output, victim) for command, (argv, outputs) in COMMANDS.items()
         for output in outputs for victim in _files_of(argv)]


@pytest.mark.parametrize("how", ["same", "dot", "dotdot", "symlink", "hardlink"])
@pytest.mark.parametrize(("command", "output", "victim"), CASES, ids=[" ".join(c) for c in CASES])
def test_an_output_naming_a_file_the_command_reads_is_refused(tmp_path: Path, monkeypatch, capsys,
                                                              command: str, output: str, victim: str,
                                                              how: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    _populate(work)
    monkeypatch.chdir(work)
    before = {p.name: _digest(p) for p in work.iterdir() if p.is_file()}
    argv, _ = COMMANDS[command]
    spelled = _spell(work, victim, how)
    code = main([*argv, output, spelled])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert output in lines[0] and victim in lines[0] and "same file" in lines[0], lines[0]
    after = {p.name: _digest(p) for p in work.iterdir() if p.is_file() and p.name in before}
    assert after == before  # not one byte of any file changed, the victim's included
    assert sorted(p.name for p in work.iterdir()) == sorted([*before, *([spelled] if how in (
        "symlink", "hardlink") else [])])  # and nothing was left beside them


@pytest.mark.parametrize("victim", ["qa.csv", "judge.json", "prices.json", "prompt.txt", "examples.jsonl"])
def test_the_run_store_naming_an_input_is_refused(tmp_path: Path, monkeypatch, capsys, victim: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    _populate(work)
    monkeypatch.chdir(work)
    before = _digest(work / victim)
    argv = [a if a != "runs.sqlite" else f"./{victim}" for a in COMMANDS["grade"][0]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--store" in err and victim in err and len(err.strip().splitlines()) == 1
    assert _digest(work / victim) == before


def test_the_run_store_as_an_output_of_grade_is_refused_and_keeps_its_runs(tmp_path: Path, monkeypatch,
                                                                          capsys) -> None:
    work = tmp_path / "work"
    work.mkdir()
    _populate(work)
    monkeypatch.chdir(work)
    store = RunStore(work / "runs.sqlite")
    store.open_run("grade", {"x": 1}, "kept-run")
    store.close()
    assert main([*COMMANDS["grade"][0], "--out", "runs.sqlite"]) == 2
    assert "the run store" in capsys.readouterr().err
    assert [r["id"] for r in RunStore(work / "runs.sqlite", read_only=True).runs()] == ["kept-run"]


# ---- hypothesis: spellings through ., .. and linked folders ---------------------------------------

_SEGMENT = st.sampled_from([".", "sub", "sub/..", "linked", "linked/..", "sub/../sub/.."])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.lists(_SEGMENT, max_size=4), target=st.sampled_from(["qa.csv", "judge.json", "runs.sqlite",
                                                                        "elsewhere.jsonl", "sub/qa.csv"]))
def test_the_rule_refuses_exactly_the_spellings_of_a_file_the_command_uses(tmp_path_factory, prefix: list[str],
                                                                            target: str) -> None:
    work = tmp_path_factory.mktemp("spell")
    _populate(work)
    (work / "sub").mkdir()
    (work / "linked").symlink_to(work / "sub")
    relative = "/".join([*prefix, target])
    # "linked/.." is the folder above where the link points (work itself), as the system reads it
    resolved = Path(os.path.realpath(work / relative))
    used = {Path(os.path.realpath(work / n)) for n in ("qa.csv", "judge.json", "prices.json", "prompt.txt",
                                                      "rubric.txt", "examples.jsonl", "runs.sqlite")}
    argv = [a if a in ("grade",) or a.startswith("-") or "." not in a else str(work / a.split(":", 1)[-1])
            if not a.startswith("scripted:") else f"scripted:{work / a.split(':', 1)[1]}"
            for a in COMMANDS["grade"][0]]
    args = build_parser().parse_args([*argv, "--out", str(work / relative)])
    if resolved in used:
        with pytest.raises(ConfigError, match="same file"):
            check_files(args)
    else:
        check_files(args)  # another file: let through
