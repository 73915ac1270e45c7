"""One input vocabulary: the names of ``Sample`` (id, question, answer, contexts, reference) in
every file every command reads, the older names (qid, query, response, sources, documents, label)
still read with one note per run, and a missing column named with the nearest one the file has
and the option that maps it. Plain-text documents are taken by the tournament as THELMA takes
them. Through the real entry point, with the shipped scripted judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GRADE = '{"": "Score: [[4]], Reason: [[Matches.]]"}'


def _cli(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LANGRAG_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                           *argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _rows(names: dict[str, str]) -> list[dict[str, object]]:
    return [{names["id"]: f"s{i}", names["question"]: f"Who wrote part {i}?", names["answer"]: f"Ada, part {i}.",
             names["contexts"]: [f"Ada wrote part {i}."], names["reference"]: f"Ada wrote part {i}"} for i in range(2)]


SAMPLE = {n: n for n in ("id", "question", "answer", "contexts", "reference")}
OLDER = {"id": "qid", "question": "query", "answer": "response", "contexts": "sources", "reference": "label"}


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        import csv
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t" if path.suffix == ".tsv" else ",")
            w.writeheader()
            w.writerows([{k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows])
    return path


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
@pytest.mark.parametrize("names", [SAMPLE, OLDER], ids=["sample-names", "older-names"])
@pytest.mark.parametrize("command", ["grade", "thelma", "run"])
def test_every_command_reads_the_sample_names_and_the_older_ones(tmp_path: Path, suffix: str,
                                                                 names: dict[str, str], command: str) -> None:
    data = _write(tmp_path / f"data{suffix}", _rows(names))
    (tmp_path / "judge.json").write_text(GRADE, encoding="utf-8")
    extra = {"grade": [], "thelma": ["--embedder", "none", "--metrics", "sqc"], "run": ["--evaluator", "vrag"]}
    done = _cli(tmp_path, command, data.name, "--judge", "scripted:judge.json", *extra[command])
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stdout.splitlines() if "older column names" in line]
    if names is OLDER:
        assert len(notes) == 1 and "'query' as question" in notes[0]  # one note for the run
    else:
        assert notes == []
    if command == "grade":
        results = [json.loads(x) for x in (tmp_path / f"data{suffix}.vrag.jsonl").read_text().splitlines()]
        assert [r["id"] for r in results] == ["s0", "s1"] and all(r["score"] == 4 for r in results)


@pytest.mark.parametrize("header, argv, hint", [
    ("question,answer,ref_answer", [], "missing column 'reference' (or its older name 'label'): columns found: "
                                       "question, answer, ref_answer; the nearest is 'ref_answer': give "
                                       "--reference-col ref_answer"),
    ("question,answer,ground_truth", [], "the nearest is 'ground_truth': give --reference-col ground_truth"),
    ("Question,answer,reference", [], "the nearest is 'Question': give --question-col Question"),
    ("question,answer,reference", ["--label-col", "truth"], "missing column 'truth'"),
])
def test_a_missing_column_names_the_nearest_and_the_option(tmp_path: Path, header: str, argv: list[str],
                                                           hint: str) -> None:
    (tmp_path / "qa.csv").write_text(f"{header}\nWho?,Ada.,Ada\n", encoding="utf-8")
    done = _cli(tmp_path, "grade", "qa.csv", "--judge", "scripted:none.json", *argv)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "qa.csv:1:" in done.stderr and hint in done.stderr


def test_the_tournament_takes_plain_text_documents_and_the_sample_names(tmp_path: Path) -> None:
    rows = [{"id": "q1", "question": "Who wrote it?", "agent": "a", "answer": "Ada.", "contexts": ["Ada wrote it."]},
            {"qid": "q1", "query": "Who wrote it?", "agent": "b", "answer": "Bob.", "documents": "Ada wrote it."}]
    _write(tmp_path / "answers.jsonl", rows)
    (tmp_path / "judge.json").write_text(json.dumps({"<document>": '{"reason": "It names her.", "relevance": 2}',
                                                     "": "[[A]]"}), encoding="utf-8")
    done = _cli(tmp_path, "tournament", "--answers", "answers.jsonl", "--judge", "scripted:judge.json",
                "--json", "summary.json")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert sorted(r["agent"] for r in summary["ranking"]) == ["a", "b"]
    assert "warning" not in done.stderr  # both lines read; one pooled document (same text, same id)


def test_a_tournament_with_no_readable_answer_does_not_say_it_still_judges(tmp_path: Path) -> None:
    _write(tmp_path / "answers.jsonl", [{"qid": "q1", "query": "Who?", "agent": "a", "documents": []}])
    done = _cli(tmp_path, "tournament", "--answers", "answers.jsonl", "--judge", "scripted:none.json")
    assert done.returncode == 2 and "nothing to rank" in done.stderr and "still judged" not in done.stderr
