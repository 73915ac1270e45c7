"""``--dry-run`` says what a judging command would send before anything is paid: calls not in the
cache, their prompt tokens, the price range with ``--prices``; exit 0, no call sent, no file of the
user's written, the run store unchanged. Through the real entry point and the official ``openai``
SDK against the loopback fake of OpenAI's API, which counts the calls it receives."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from batch_fakes import FakeOpenAI  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _cli(tmp: Path, *argv: str, base_url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LANGRAG_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]), OPENAI_BASE_URL=base_url,
               OPENAI_API_KEY="sk-test", HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                           *argv, "--judge", "openai:gpt-4o-mini", "--store", str(tmp / "store" / "runs.sqlite")],
                          env=env, cwd=tmp, capture_output=True, text=True, timeout=300)


def _inputs(tmp: Path) -> dict[str, list[str]]:
    (tmp / "qa.csv").write_text("id,question,answer,reference\nq1,Who wrote it?,Ada.,Ada wrote it\n"
                                "q2,When?,In 1843.,1843\nq3,Where?,London.,London\n", encoding="utf-8")
    (tmp / "t.jsonl").write_text("".join(json.dumps({"id": f"s{i}", "question": f"Who wrote part {i}?",
                                                     "contexts": [f"Ada wrote part {i}."],
                                                     "answer": f"Ada wrote part {i}."}) + "\n" for i in range(2)),
                                 encoding="utf-8")
    docs = [{"id": "d1", "text": "Ada wrote the notes."}]
    (tmp / "answers.jsonl").write_text("".join(
        json.dumps({"qid": "q1", "query": "Who wrote the notes?", "agent": a, "answer": t, "documents": docs}) + "\n"
        for a, t in (("a", "Ada."), ("b", "Babbage."))), encoding="utf-8")
    (tmp / "runs.jsonl").write_text("".join(json.dumps({"id": f"r{i}", "question": f"Who wrote part {i}?", "trajectory": [
        {"role": "user", "content": f"Who wrote part {i}?"}, {"role": "assistant", "content": "Ada."}]}) + "\n"
        for i in range(2)), encoding="utf-8")
    (tmp / "prices.json").write_text('{"openai:gpt-4o-mini": [0.15, 0.6]}', encoding="utf-8")
    return {"grade": ["grade", "qa.csv", "--label-col", "reference"],
            "thelma": ["thelma", "t.jsonl", "--embedder", "none", "--query-col", "question",
                       "--sources-col", "contexts", "--response-col", "answer"],
            "tournament": ["tournament", "--answers", "answers.jsonl"],
            "run": ["run", "qa.csv", "--evaluator", "vrag"],
            "trajectories": ["trajectories", "runs.jsonl", "--match", "none"]}


def _files(tmp: Path) -> dict[str, bytes]:
    return {str(p.relative_to(tmp)): p.read_bytes() for p in sorted(tmp.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("command", ["grade", "thelma", "tournament", "run", "trajectories"])
def test_a_dry_run_sends_nothing_writes_nothing_and_counts_the_calls(tmp_path: Path, command: str) -> None:
    argv = _inputs(tmp_path)[command]
    before = _files(tmp_path)
    with FakeOpenAI() as fake:
        done = _cli(tmp_path, *argv, "--dry-run", "--prices", "prices.json", base_url=fake.base_url)
        assert fake.sync_calls == 0
    assert done.returncode == 0, done.stderr
    assert _files(tmp_path) == before  # no results file, no store, no folder
    line = done.stdout.strip().splitlines()[-1]
    calls = int(re.search(r"dry run: (?:at least )?(\d+) judge call\(s\) not in the cache", line).group(1))
    tokens = int(re.search(r"about ([\d,]+) prompt tokens", line).group(1).replace(",", ""))
    low, high = map(float, re.search(r"price ([\d.]+) to ([\d.]+)", line).groups())
    assert calls > 0 and tokens > 0 and 0 < low < high
    if command == "trajectories":
        assert calls == 2 and "at least" not in line  # one judge call per agent run
    if command == "grade":
        assert calls == 3 and "at least" not in line  # one call per row, nothing cached
        assert low == pytest.approx(tokens * 0.15 / 1e6, abs=1e-4)


def test_a_dry_run_after_a_real_run_counts_nothing_left_to_pay(tmp_path: Path) -> None:
    argv = _inputs(tmp_path)["grade"]
    with FakeOpenAI() as fake:
        real = _cli(tmp_path, *argv, base_url=fake.base_url)
        assert real.returncode == 0, real.stderr
        paid = fake.sync_calls
        store = (tmp_path / "store" / "runs.sqlite").read_bytes()
        dry = _cli(tmp_path, *argv, "--dry-run", base_url=fake.base_url)
        assert fake.sync_calls == paid == 3
    assert dry.returncode == 0, dry.stderr
    assert "dry run: 0 judge call(s) not in the cache" in dry.stdout and "nothing would be paid" in dry.stdout
    assert (tmp_path / "store" / "runs.sqlite").read_bytes() == store


def test_without_prices_the_dry_run_says_the_price_is_unknown(tmp_path: Path) -> None:
    argv = _inputs(tmp_path)["grade"]
    with FakeOpenAI() as fake:
        done = _cli(tmp_path, *argv, "--dry-run", base_url=fake.base_url)
    assert done.returncode == 0 and "price unknown: give --prices FILE with openai:gpt-4o-mini" in done.stdout
