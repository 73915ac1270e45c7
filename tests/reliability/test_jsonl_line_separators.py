"""JSON lines end at line feeds only. ``str.splitlines`` also splits at U+2028, U+2029, U+0085 and
other characters a JSON string holds as plain text, so a record holding one was cut in two and
refused (or, for the shipped data, the package failed to load it). Each reader below is fed a
record whose strings hold every such separator, and must return the string whole."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from langrag_eval.cli import main

# every character str.splitlines breaks at that is not a line feed
SEPARATORS = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"
TEXT = f"first part{SEPARATORS}second part"
assert len(TEXT.splitlines()) > 1 and len(TEXT.split("\n")) == 1


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"  # the separators written raw, as editors save them


def test_personas_keep_a_goal_that_holds_line_separators(tmp_path: Path) -> None:
    from langrag_eval.conversations import read_personas

    path = tmp_path / "personas.jsonl"
    path.write_text(_line({"id": "p1", "persona": "A plumber", "goal": TEXT}), encoding="utf-8")
    [persona] = read_personas(path)
    assert persona.goal == TEXT


def test_conversations_judge_reads_a_turn_that_holds_line_separators(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langrag_eval.conversations import Conversation

    conversation = Conversation.of_turns([(TEXT, f"Answer: {TEXT}")], id="c1", goal="Warranty")
    (tmp_path / "c.jsonl").write_text(_line(conversation.model_dump(mode="json")), encoding="utf-8")
    (tmp_path / "judge.json").write_text(json.dumps({"": "Score: [[4]], Reason: [[Fine.]]"}), encoding="utf-8")
    assert main(["conversations", "judge", str(tmp_path / "c.jsonl"), "--judge", f"scripted:{tmp_path / 'judge.json'}",
                 "--store", str(tmp_path / "runs.sqlite")]) == 0
    assert "goal_met: pass rate 1.00, mean grade 4.00" in capsys.readouterr().out


def test_a_markdown_title_is_the_whole_first_heading_line(tmp_path: Path) -> None:
    from langrag_eval.retrieval.ingest import load_text

    path = tmp_path / "guide.md"
    path.write_text(f"# {TEXT}\n\nBody.\n", encoding="utf-8")
    [source] = load_text(path).sources
    assert source.metadata["title"] == TEXT


@pytest.fixture
def shipped_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped data read from ``tmp_path/data`` instead of the package's folder."""
    real = resources.files
    monkeypatch.setattr(resources, "files", lambda package: tmp_path if package in (
        "langrag_eval.audit", "langrag_eval.quickstart") else real(package))
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


def test_the_shipped_corpus_keeps_a_text_that_holds_line_separators(shipped_folder: Path) -> None:
    from langrag_eval.quickstart import load_corpus

    record = {"id": "d1", "text": TEXT, "metadata": {}}
    (shipped_folder / "corpus.jsonl").write_text(_line(record), encoding="utf-8")
    assert load_corpus() == [record]


def test_the_shipped_audit_pairs_keep_a_response_that_holds_line_separators(shipped_folder: Path) -> None:
    from langrag_eval.audit.data import load_pairs

    record = {"id": "p1", "instruction": "Say it.", "input": "", "response1": TEXT, "response2": "No.",
              "annotators": [1, 1, 2]}
    (shipped_folder / "pandalm_pairs.jsonl").write_text(_line(record), encoding="utf-8")
    [pair] = load_pairs()
    assert pair.response1 == TEXT
