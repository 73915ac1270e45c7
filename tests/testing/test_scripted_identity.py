"""A scripted judge file is the judge it holds: runs and cached replies are keyed by the digest of
its content, as a GGUF judge's are. A file edited in place, even to the same size and with its old
modification time put back, is a new judge whose judgments are made again; the same replies in a
file of the same name in another folder are the same judge, whose judgments are reused."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from langrag_eval.cli import main


def _grade(qa: Path, judge: Path, store: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    out = qa.with_suffix(".out.jsonl")
    assert main(["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(store), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    [record] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return record["score"], text


def test_an_edited_scripted_judge_judges_again_and_a_copy_elsewhere_is_reused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "q1", "question": "How long?", "answer": "Two years.", "label": "Two years."})
                  + "\n", encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"": "Score: [[5]], Reason: [[Matches.]]"}), encoding="utf-8")
    before = os.stat(judge)

    score, text = _grade(qa, judge, store, capsys)
    assert score == 5 and "judged 1" in text

    # edited in place: same size, and the old times put back, so only the content tells
    judge.write_text(json.dumps({"": "Score: [[1]], Reason: [[Differs.]]"}), encoding="utf-8")
    os.utime(judge, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(judge).st_size == before.st_size
    score, text = _grade(qa, judge, store, capsys)
    assert score == 1 and "reused 0 finished judgment(s), judged 1" in text
    assert "model calls now: 1 (cached 0" in text  # asked, not read from the reply cache

    # the same replies under the same name in another folder: the same judge, nothing asked
    elsewhere = tmp_path / "other" / "judge.json"
    elsewhere.parent.mkdir()
    shutil.copy(judge, elsewhere)
    score, text = _grade(qa, elsewhere, store, capsys)
    assert score == 1 and "reused 1 finished judgment(s), judged 0" in text and "model calls now: 0" in text

    # other replies under that name in that folder: another judge again
    elsewhere.write_text(json.dumps({"": "Score: [[3]], Reason: [[Partly.]]"}), encoding="utf-8")
    score, text = _grade(qa, elsewhere, store, capsys)
    assert score == 3 and "judged 1" in text
