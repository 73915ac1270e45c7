"""``langrag-eval grade --batch`` against a loopback fake of OpenAI's Batch API, through the official
SDK: killed with SIGKILL once its batch is submitted, then run again, it finishes with every item
graded, each prompt sent at most once (plus the failed lines once more) and no synchronous call."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("openai")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from batch_fakes import FakeAnthropic, FakeOpenAI, vrag_reply  # noqa: E402

N = 40
ROOT = Path(__file__).resolve().parents[2]


def _qa(path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "question", "answer", "label"])
        w.writerows([[f"q{i:03d}", f"What does clause {i:03d} of the card rules say?",
                      f"answer {i}", f"label {i}"] for i in range(N)])
    return path


def _command(qa: Path, store: Path, out: Path, judge: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
            "grade", str(qa), "--judge", judge, "--batch", "--batch-poll", "0.05",
            "--store", str(store), "--out", str(out)]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LANGRAG_"))}
    path = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return {**env, "PYTHONPATH": path, **extra}


def _expected(fake: FakeOpenAI | FakeAnthropic) -> dict[str, int]:
    """The grade the fake gave each item, found from the prompt it received for it."""
    out = {}
    for prompt in fake.prompts.values():
        ids = re.findall(r"clause (\d{3}) of", prompt)
        if ids:
            out[f"q{ids[0]}"] = int(vrag_reply(prompt).split("[[")[1].split("]]")[0])
    return out


def _wait(condition, seconds: float = 60.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


@pytest.mark.slow
def test_grade_batch_killed_after_submitting_resumes_without_sending_again(tmp_path: Path) -> None:
    qa, store, out = _qa(tmp_path / "qa.csv"), tmp_path / "runs.sqlite", tmp_path / "out.jsonl"
    with FakeOpenAI(seed=3) as fake:
        fake.hold = True  # the batch stays in progress until the first command is dead
        env = _env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-fake")
        first = subprocess.Popen(_command(qa, store, out, "openai:gpt-4o-mini"), env=env, cwd=tmp_path,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait(lambda: any(b["status"] == "in_progress" for b in fake.batches.values()))
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.communicate()
        assert first.returncode == -signal.SIGKILL
        assert len(fake.batches) == 1 and sum(fake.lines_seen.values()) == N
        assert not out.exists()

        failing = sorted(fake.lines_seen)[:3]
        fake.fail_plan.update({k: 1 for k in failing})  # these lines fail once, then succeed
        fake.hold = False
        second = subprocess.run(_command(qa, store, out, "openai:gpt-4o-mini"), env=env, cwd=tmp_path,
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr
        assert "submitted before; waiting for it" in second.stderr
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(records) == N and all(r["unscored"] is None for r in records)
        expected = _expected(fake)
        assert {r["id"]: r["score"] for r in records} == expected and len(expected) == N
        assert fake.sync_calls == 0
        assert len(fake.batches) == 2  # the one submitted before the kill, and the failed lines once
        assert {k: n for k, n in fake.lines_seen.items() if n != 1} == {k: 2 for k in failing}

        third = subprocess.run(_command(qa, store, out.with_name("again.jsonl"), "openai:gpt-4o-mini"),
                               env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert third.returncode == 0, third.stderr
        assert len(fake.batches) == 2 and fake.sync_calls == 0  # a finished run sends nothing


@pytest.mark.slow
def test_grade_batch_through_anthropic_message_batches(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    qa, store, out = _qa(tmp_path / "qa.csv"), tmp_path / "runs.sqlite", tmp_path / "out.jsonl"
    with FakeAnthropic(seed=5) as fake:
        env = _env(ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="sk-ant-fake")
        done = subprocess.run(_command(qa, store, out, "anthropic:claude-haiku-4-5"), env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert {r["id"]: r["score"] for r in records} == _expected(fake)
        assert len(fake.batches) == 1 and fake.sync_calls == 0 and set(fake.lines_seen.values()) == {1}
        assert "ended" in done.stderr


def test_batch_refuses_a_judge_without_a_batch_api(tmp_path: Path) -> None:
    qa = _qa(tmp_path / "qa.csv")
    done = subprocess.run(_command(qa, tmp_path / "s.sqlite", tmp_path / "o.jsonl", "local"), env=_env(),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "--batch needs an openai:MODEL or anthropic:MODEL judge" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "s.sqlite").exists()


def test_tournament_batch_sends_relevance_then_games_each_stage_once(tmp_path: Path, monkeypatch, capsys) -> None:
    from langrag_eval.cli import main
    sys.path.insert(0, str(ROOT / "tests" / "tournament"))
    from test_tournament_cli import JUDGE, _files

    def reply(prompt: str) -> str:
        return next(text for marker, text in JUDGE.items() if marker in prompt)

    files = _files(tmp_path)
    with FakeOpenAI(reply=reply, seed=9) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
        args = ["tournament", *files, "--judge", "openai:gpt-4o-mini", "--batch", "--batch-poll", "0.02",
                "--store", str(tmp_path / "runs.sqlite"), "--tournaments", "20", "--bootstrap", "20",
                "--json", str(tmp_path / "summary.json")]
        assert main(args) == 0
        out, err = capsys.readouterr()
        assert out.index("good") < out.index("bad") and "good: 1.000  1.000" in out
        summary = json.loads((tmp_path / "summary.json").read_text())
        assert summary["games"]["played"] == 2 and summary["judge_calls"] == 2 + 4
        # the relevance of the documents first, then the games: one batch per stage, each line once
        sizes = [b["request_counts"]["total"] for b in fake.batches.values()]
        assert sizes == [2, 4] and set(fake.lines_seen.values()) == {1} and fake.sync_calls == 0
        assert "submitted 2 request(s)" in err and "completed, 4 of 4 done" in err
        assert main(args) == 0  # resumed: nothing is sent again
        assert len(fake.batches) == 2


@pytest.mark.parametrize("command", [["grade", "x.csv"], ["thelma", "x.jsonl"], ["tournament"],
                                     ["judge", "audit"], ["grammar", "analyze"], ["grammar", "generate"]])
def test_every_judging_command_takes_batch(command: list[str], capsys) -> None:
    from langrag_eval.cli import main
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    help_text = capsys.readouterr().out
    assert "--batch " in help_text and "--batch-poll" in help_text


@pytest.mark.parametrize("judge", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"])
def test_batch_without_a_key_is_one_line_before_any_work(judge: str, tmp_path: Path, monkeypatch, capsys) -> None:
    from langrag_eval.cli import main
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    qa = _qa(tmp_path / "qa.csv")
    assert main(["grade", str(qa), "--judge", judge, "--batch", "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "API key" in err or "api_key" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "s.sqlite").exists()
