"""Names from users' files and words from judges reach the terminal escaped: an id, an agent name, a
question, a judge's reason or a file name holding ANSI/VT escapes, other C0/C1 controls, bidi
overrides, isolates or marks, or line separators is printed with each such character written as
Python writes it (``\\x1b``, ``\\u202e``), so no byte of it acts on the terminal and the name stays
recognisable. What counts as such a character is read from Unicode's own tables (general category
Cc, Cs, Zl, Zp; the Bidi_Control characters by name), not from the package's pattern."""

from __future__ import annotations

import json
import string
import subprocess
import sys
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.cli import main

ROOT = Path(__file__).resolve().parents[2]

# PropList.txt's Bidi_Control, by name.
BIDI_CONTROL = {unicodedata.lookup(n) for n in (
    "ARABIC LETTER MARK", "LEFT-TO-RIGHT MARK", "RIGHT-TO-LEFT MARK", "LEFT-TO-RIGHT EMBEDDING",
    "RIGHT-TO-LEFT EMBEDDING", "POP DIRECTIONAL FORMATTING", "LEFT-TO-RIGHT OVERRIDE",
    "RIGHT-TO-LEFT OVERRIDE", "LEFT-TO-RIGHT ISOLATE", "RIGHT-TO-LEFT ISOLATE", "FIRST STRONG ISOLATE",
    "POP DIRECTIONAL ISOLATE")}


def unsafe(c: str) -> bool:
    """A character a terminal obeys or reorders by instead of showing it."""
    return unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in BIDI_CONTROL


def raw_in(text: str) -> list[str]:
    """The unsafe characters ``text`` holds, the newlines that end its lines apart."""
    return sorted({c for c in text if unsafe(c) and c != "\n"})


def escaped(name: str) -> str:
    """``name`` as it must be shown: each unsafe character as Python's repr writes it."""
    return "".join(repr(c)[1:-1] if unsafe(c) else c for c in name)


STEM = st.text(string.ascii_letters + string.digits, min_size=3, max_size=8)
# Sequences an attacker plants, and any control, bidi or separator character at all.
PLANT = st.one_of(
    st.sampled_from(["\x1b[2J\x1b[H", "\x1b]0;owned\x07", "\x1b[8m", "\x1b[1A\x1b[2K", "\r", "\x08\x08",
                     "\x9b2J", "\x1bP+q\x1b\\", "\n", "\u2028", "\x00", "\x7f"]),
    st.sampled_from(sorted(BIDI_CONTROL)),
    st.characters(categories=("Cc", "Zl", "Zp")),
)
# A name: a recognisable stem, the planted characters, more text after them (so none is at an end,
# where a reader may strip it as white space).
NAME = st.tuples(STEM, st.lists(PLANT, min_size=1, max_size=4), STEM).map(
    lambda t: t[0] + "".join(t[1]) + t[2])
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _printed(capsys) -> str:  # noqa: ANN001
    out = capsys.readouterr()
    return out.out + out.err


@SETTINGS
@given(good=NAME, bad=NAME, qid=NAME, reason=NAME)
def test_agent_names_ids_and_judge_reasons_of_a_tournament_are_printed_escaped(
        tmp_path_factory, capsys, good: str, bad: str, qid: str, reason: str) -> None:  # noqa: ANN001
    good, bad = "a" + good, "b" + bad  # two different agents
    work = tmp_path_factory.mktemp("tournament")
    rows = [{"qid": q, "query": "capital?", "agent": agent, "answer": f"{agent}: ans quality={quality}",
             "documents": [{"id": "d1", "text": "Paris is the capital", "score": 1.0}]}
            for q in (qid, "q2") for agent, quality in ((good, 3), (bad, 1))]
    answers = _jsonl(work / "answers.jsonl", rows)
    judge = work / "judge.json"
    judge.write_text(json.dumps({"<document>": json.dumps({"reason": reason, "relevance": 2}),
                                 "quality=3\n</answer_a>": f"{reason} [[A]]",
                                 "quality=1\n</answer_a>": f"{reason} [[B]]"}), encoding="utf-8")
    assert main(["tournament", "--answers", str(answers), "--judge", f"scripted:{judge}", "--tournaments", "3",
                 "--bootstrap", "0", "--store", str(work / "runs.sqlite")]) == 0
    printed = _printed(capsys)
    assert raw_in(printed) == []
    assert escaped(good) in printed and escaped(bad) in printed   # ranking, win matrix, retrieval


@SETTINGS
@given(item=NAME, question=NAME, reason=NAME)
def test_ids_questions_and_judge_reasons_of_grade_and_compare_are_printed_escaped(
        tmp_path_factory, capsys, item: str, question: str, reason: str) -> None:  # noqa: ANN001
    work = tmp_path_factory.mktemp("grade")
    qa = _jsonl(work / "qa.jsonl", [
        {"id": item, "question": f"{question}?", "answer": "Five days.", "label": "Five days."},
        {"id": "plain", "question": "Who wrote it?", "answer": "Ada.", "label": "Ada."}])
    store = str(work / "runs.sqlite")
    for run, verdict in (("before", f"Score: [[5]], Reason: [[{reason}]]"), ("after", "Score: [[1]], Reason: [[no]]")):
        judge = work / f"{run}.json"
        # The planted item's reply cannot be read in the first run of "plain": it is unscored, its id shown.
        judge.write_text(json.dumps({"Five days.": verdict, "Ada.": f"{reason}: no verdict here"}), encoding="utf-8")
        assert main(["grade", str(qa), "--judge", f"scripted:{judge}", "--store", store, "--run", run,
                     "--out", str(work / f"{run}.jsonl")]) == 0
    assert main(["compare", "before", "after", "--store", store]) == 0
    assert main(["report", "--list", "--store", store]) == 0
    printed = _printed(capsys)
    assert raw_in(printed) == []
    assert escaped(item) in printed                      # the flipped item, in compare
    assert escaped(" ".join(reason.split()))[:40] in printed  # its reason, as compare quotes it


@SETTINGS
@given(name=NAME)
def test_a_file_name_in_an_error_line_is_printed_escaped(tmp_path_factory, capsys, name: str) -> None:  # noqa: ANN001
    work = tmp_path_factory.mktemp("files")
    missing = str(work / name.replace("/", "_").replace("\x00", "_"))
    assert main(["grade", missing + ".csv", "--judge", "scripted:none.json", "--store", str(work / "r.sqlite")]) == 2
    printed = _printed(capsys)
    assert raw_in(printed) == [] and printed.count("\n") == 1        # one line
    # An error is one line: the lines of what it quotes (a library's text, here the name) joined
    # by a space; every other control or bidi character in the name is shown escaped.
    parts = (part.strip(" \t") for part in missing.split("\n"))
    assert " ".join(escaped(part) for part in parts if part) in printed


def test_the_console_script_writes_no_control_byte(tmp_path: Path) -> None:
    # The real entry point in its own process, its output read as bytes: an id that clears the
    # screen, sets the title, hides text and reverses itself, and a judge's reply that cannot be read,
    # are shown as written, escapes and all.
    name = "q1\x1b[2J\x1b[H\x1b]0;ALL PASSED\x07\u202elive\u202c\x9b8m\u2066x\u2069end"
    qa = _jsonl(tmp_path / "qa.jsonl", [{"id": name, "question": "When?", "answer": "Now.", "label": "Now."}])
    (tmp_path / "judge.json").write_text(json.dumps({"": "\x1b[2JNo verdict\u202e."}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                           "grade", str(qa), "--judge", "scripted:judge.json", "--store", str(tmp_path / "r.sqlite"),
                           "--out", str(tmp_path / "out.jsonl")],
                          capture_output=True, timeout=120, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"})
    printed = (done.stdout + done.stderr).decode("utf-8")
    assert done.returncode in (0, 1) and "Traceback" not in printed
    assert f"unscored {escaped(name)}: unparseable" in printed       # the item the judge left unscored
    assert raw_in(printed) == [] and b"\x1b" not in done.stdout + done.stderr
    assert "q1\\x1b[2J" in printed and "\\u202elive\\u202c" in printed


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Co", "Cn"))))
def test_shown_escapes_exactly_what_unicode_calls_a_control_or_bidi_character(text: str) -> None:
    from langrag_eval.files.terminal import shown, shown_lines

    assert shown(text) == escaped(text)
    assert not [c for c in shown(text) if unsafe(c)]
    assert shown_lines(text) == "\n".join(escaped(line) for line in text.split("\n"))
