"""Nothing stale, nothing lost: a changed input never reuses a judgment made for other content, and
a user's file is never overwritten or emptied by accident. Each test reproduces a reported failure
through the command line, with scripted judges whose replies depend on the prompt."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
from pydantic import BaseModel

from langrag_eval.cli import main
from langrag_eval.runtime import RunStore, run_batch

# Pairwise verdicts follow the answers' text, wherever it sits in the prompt: the answer that says
# "right" wins, whatever its agent's name.
PAIRWISE = {"<answer_a>\nright": "A is right.\n[[A]]", "<answer_a>\nwrong": "B is right.\n[[B]]",
            "<document>": '{"reason": "on topic", "relevance": 2}'}


def _answers(path: Path, winner: str) -> Path:
    rows = []
    for qid in ("q1", "q2", "q3"):
        for agent in ("alpha", "beta"):
            text = "right" if agent == winner else "wrong"
            rows.append({"qid": qid, "query": f"question {qid}?", "agent": agent, "answer": f"{text}: {qid}",
                         "documents": [{"id": f"d-{qid}", "text": f"passage for {qid}"}]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _ranking(out: Path) -> list[str]:
    return [r["agent"] for r in json.loads(out.read_text(encoding="utf-8"))["ranking"]]


def test_tournament_on_an_edited_answers_file_judges_the_new_content(tmp_path: Path, capsys) -> None:
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(PAIRWISE), encoding="utf-8")
    answers, store, out = tmp_path / "answers.jsonl", tmp_path / "runs.sqlite", tmp_path / "summary.json"
    def argv(store: Path, out: Path) -> list[str]:
        return ["tournament", "--answers", str(answers), "--judge", f"scripted:{judge}", "--store", str(store),
                "--tournaments", "20", "--bootstrap", "0", "--json", str(out)]
    _answers(answers, winner="alpha")
    assert main(argv(store, out)) == 0
    assert _ranking(out)[0] == "alpha"
    _answers(answers, winner="beta")  # same path, other content
    assert main(argv(store, out)) == 0
    assert _ranking(out)[0] == "beta"
    fresh = tmp_path / "fresh.json"
    assert main(argv(tmp_path / "fresh.sqlite", fresh)) == 0
    edited, clean = json.loads(out.read_text()), json.loads(fresh.read_text())
    assert edited["ranking"] == clean["ranking"] and edited["games"] == clean["games"]


def _qa(path: Path, answers: list[str]) -> Path:
    lines = ["id,question,answer,label"] + [f"q{i},Question {i}?,{a},label {i}" for i, a in enumerate(answers)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GRADER = {"answer good": "Score: [[5]], Reason: [[matches]]", "answer poor": "Score: [[1]], Reason: [[wrong]]"}


def _model_calls(store: Path) -> int:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT COUNT(*) FROM calls WHERE cached=0").fetchone()[0]


def test_named_grade_run_with_changed_input_is_refused_then_continued(tmp_path: Path, capsys) -> None:
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(GRADER), encoding="utf-8")
    qa, store, out = tmp_path / "qa.csv", tmp_path / "runs.sqlite", tmp_path / "out.jsonl"
    argv = ["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(store), "--run", "nightly",
            "--out", str(out)]
    _qa(qa, ["answer good"] * 4)
    assert main(argv) == 0
    assert _model_calls(store) == 4
    capsys.readouterr()
    _qa(qa, ["answer good", "answer poor", "answer good", "answer good"])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "run nightly was made from other contents of file" in err and "--continue" in err
    assert err.count("\n") == 1 and _model_calls(store) == 4
    assert main([*argv, "--continue"]) == 0
    text = capsys.readouterr().out
    assert "reused 3 finished judgment(s), judged 1 (1 of them because their content changed)" in text
    assert _model_calls(store) == 5
    scores = [json.loads(line)["score"] for line in out.read_text().splitlines()]
    assert scores == [5, 1, 5, 5]


def test_a_run_continued_after_rows_left_its_input_no_longer_counts_them(tmp_path: Path, capsys) -> None:
    from langrag_eval.compare import load_observations

    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(GRADER), encoding="utf-8")
    qa, store = tmp_path / "qa.csv", tmp_path / "runs.sqlite"
    answers = ["answer good" if i % 2 else "answer poor" for i in range(10)]
    common = ["--judge", f"scripted:{judge}", "--store", str(store)]
    _qa(qa, answers)
    assert main(["grade", str(qa), *common, "--run", "base", "--out", str(tmp_path / "a.jsonl")]) == 0
    assert main(["grade", str(qa), *common, "--run", "nightly", "--out", str(tmp_path / "b.jsonl")]) == 0
    _qa(qa, answers[:6])                               # four rows removed, the run continued
    assert main(["grade", str(qa), *common, "--run", "nightly", "--continue",
                 "--out", str(tmp_path / "b.jsonl")]) == 0
    assert "reused 6 finished judgment(s), judged 0" in capsys.readouterr().out
    assert [o.id for o in load_observations(RunStore(str(store)), "nightly")["vrag"]] == [f"q{i}" for i in range(6)]
    assert main(["compare", "base", "nightly", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "vrag: 6 items paired by content; 4 only in A, 0 only in B" in out
    assert re.search(r"accept_rate\s+6\s", out)
    assert main(["gate", "nightly", "--baseline", "base", "--store", str(store), "--max-drop", "accept_rate=0.5",
                 "--junit", str(tmp_path / "gate.xml")]) == 0
    assert 'tests="' in (tmp_path / "gate.xml").read_text(encoding="utf-8")
    assert re.search(r"accept_rate .* n=6\n", capsys.readouterr().out)


class Length(BaseModel):
    n: int


def test_batch_rejudges_only_items_whose_content_changed(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s.sqlite")
    run = store.open_run("demo", {})
    seen: list[str] = []

    async def measure(item: dict) -> Length:
        seen.append(item["text"])
        return Length(n=len(item["text"]))

    def batch(items: list[dict]) -> list[Length]:
        return asyncio.run(run_batch(items, measure, key=lambda i: i["id"], task="len", result_type=Length,
                                     store=store, run_id=run))

    assert [r.n for r in batch([{"id": "a", "text": "xx"}, {"id": "b", "text": "yyy"}])] == [2, 3]
    assert [r.n for r in batch([{"id": "a", "text": "xx"}, {"id": "b", "text": "yyyy"}])] == [2, 4]
    assert seen == ["xx", "yyy", "yyyy"]


# ---- files ------------------------------------------------------------------------------------

def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("command", ["grade", "thelma"])
def test_out_equal_to_the_input_is_refused_before_any_work(tmp_path: Path, capsys, command: str) -> None:
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(GRADER), encoding="utf-8")
    if command == "grade":
        data = _qa(tmp_path / "qa.csv", ["answer good"])
    else:
        data = tmp_path / "t.jsonl"
        data.write_text(json.dumps({"query": "q?", "sources": ["s"], "response": "r"}) + "\n")
    before = _digest(data)
    store = tmp_path / "runs.sqlite"
    # the same file under another spelling of its path
    same = tmp_path / "sub" / ".." / data.name
    (tmp_path / "sub").mkdir()
    assert main([command, str(data), "--judge", f"scripted:{judge}", "--store", str(store),
                 "--out", str(same)]) == 2
    assert "is also an input of this command" in capsys.readouterr().err
    assert _digest(data) == before and not store.exists()  # refused before the store was made


def test_grammar_generate_with_every_template_broken_keeps_the_dataset(tmp_path: Path, capsys) -> None:
    out = tmp_path / "dataset.jsonl"
    assert main(["grammar", "generate", "--db", "demo", "--out", str(out)]) == 0
    rows = out.read_text(encoding="utf-8").count("\n")
    assert rows > 50
    before = _digest(out)
    from langrag_eval.grammar import demo_templates_path
    templates = json.loads(demo_templates_path().read_text(encoding="utf-8"))
    for t in templates["templates"]:
        t["sql"] = "SELECT nothing FROM no_such_table WHERE x = {a}"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(templates), encoding="utf-8")
    capsys.readouterr()
    assert main(["grammar", "generate", "--db", "demo", "--templates", str(broken), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "nothing written to" in err and "left as it was" in err
    assert _digest(out) == before


def test_a_killed_write_leaves_the_old_file(tmp_path: Path) -> None:
    from langrag_eval.files.writing import atomic_write
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(target) as fh:
        fh.write("half of the new")
        raise RuntimeError("killed")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_output_folder_that_cannot_exist_fails_before_judging(tmp_path: Path, capsys) -> None:
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(GRADER), encoding="utf-8")
    qa = _qa(tmp_path / "qa.csv", ["answer good"])
    (tmp_path / "plain").write_text("a file, not a folder")
    store = tmp_path / "runs.sqlite"
    assert main(["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(store),
                 "--out", str(tmp_path / "plain" / "out.jsonl")]) == 2
    assert "cannot create its folder" in capsys.readouterr().err and not store.exists()


# ---- races ------------------------------------------------------------------------------------

@pytest.mark.parametrize("processes", [2, 4])
def test_processes_racing_on_one_run_make_no_duplicate_call(tmp_path: Path, processes: int) -> None:
    """The same command started at once in several processes on one store: the first takes the run's
    lease and judges; the others wait, then read the finished run back. Every output equals a
    single-process run's, and every prompt reached the model once."""
    import subprocess
    import sys
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(GRADER), encoding="utf-8")
    qa = _qa(tmp_path / "qa.csv", ["answer good" if i % 3 else "answer poor" for i in range(60)])
    worker = Path(__file__).with_name("race_worker.py")

    def command(store: Path, out: Path, log: Path) -> list[str]:
        return [sys.executable, str(worker), str(log), "--", "grade", str(qa), "--judge", f"scripted:{judge}",
                "--store", str(store), "--out", str(out), "--concurrency", "4"]

    single_log = tmp_path / "single.log"
    subprocess.run(command(tmp_path / "single.sqlite", tmp_path / "single.jsonl", single_log), check=True,
                   capture_output=True, timeout=300)
    store, log = tmp_path / "shared.sqlite", tmp_path / "shared.log"
    procs = [subprocess.Popen(command(store, tmp_path / f"out{i}.jsonl", log), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(processes)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * processes, results
    prompts = [json.loads(line)["prompt"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(prompts) == len(set(prompts)) == 60          # no prompt paid for twice
    assert len(single_log.read_text().splitlines()) == 60
    expected = (tmp_path / "single.jsonl").read_text(encoding="utf-8")
    for i in range(processes):
        assert (tmp_path / f"out{i}.jsonl").read_text(encoding="utf-8") == expected
    rs = RunStore(store)
    (run,) = rs.runs()
    stored = rs.get_artifact(run["id"], "vrag")
    assert stored["accepted"] == 40 and stored["items"] == 60
    assert sum(1 for j in rs.judgments(run["id"]) if j["scored"]) == 60


def test_an_edited_prompt_file_is_not_served_old_judgments(tmp_path: Path) -> None:
    from langrag_eval.prompting.templates import prompts_root
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(PAIRWISE), encoding="utf-8")
    prompt = tmp_path / "pairwise.txt"
    prompt.write_text((prompts_root() / "tournament" / "pairwise.txt").read_text(encoding="utf-8"))
    answers, out = _answers(tmp_path / "answers.jsonl", winner="alpha"), tmp_path / "s.json"
    argv = ["tournament", "--answers", str(answers), "--judge", f"scripted:{judge}",
            "--store", str(tmp_path / "runs.sqlite"), "--tournaments", "5", "--bootstrap", "0",
            "--pairwise-prompt", str(prompt), "--json", str(out)]
    assert main(argv) == 0 and json.loads(out.read_text())["judge_calls"] == 3 + 6
    assert main(argv) == 0 and json.loads(out.read_text())["judge_calls"] == 0
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nBe strict.\n", encoding="utf-8")
    assert main(argv) == 0 and json.loads(out.read_text())["judge_calls"] == 6  # the games, again
