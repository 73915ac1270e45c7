"""A judge that refuses the key, forbids or does not know the model, or cannot be reached stops the
command at once: exit status 3, one line naming the cause as the provider said it and the fix, no
call sent after the stop, the earlier results file left as it was, and the same command resumes
once fixed without paying again for what was finished. A timeout keeps today's behaviour (the item
is ``Unscored``, retried on resume). Through the real entry point and the official ``openai`` SDK,
against the loopback fake of OpenAI's API."""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("openai")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from batch_fakes import FakeAnthropic, FakeOpenAI  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PREVIOUS = '{"id": "q000", "score": 5, "note": "an earlier run"}\n'


def _qa(path: Path, n: int) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "question", "answer", "label"])
        w.writerows([[f"q{i:03d}", f"What does clause {i:03d} say?", f"answer {i}", f"label {i}"] for i in range(n)])
    return path


def _grade(tmp: Path, qa: Path, *, base_url: str, key: str, concurrency: int = 4,
           extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LANGRAG_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
               OPENAI_BASE_URL=base_url, OPENAI_API_KEY=key)
    return subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                           "grade", str(qa), "--judge", "openai:gpt-4o-mini", "--store", str(tmp / "runs.sqlite"),
                           "--concurrency", str(concurrency), *extra],
                          env=env, capture_output=True, text=True, timeout=120)


def _results(qa: Path) -> Path:
    return qa.with_name(qa.name + ".vrag.jsonl")


@pytest.mark.parametrize("status, words, fix", [
    (401, "OpenAI HTTP 401: fault 401 on demand", "OPENAI_API_KEY"),
    (403, "OpenAI HTTP 403: fault 403 on demand", "OPENAI_API_KEY"),
    (404, "OpenAI HTTP 404: fault 404 on demand", "OPENAI_BASE_URL (now http://127.0.0.1:"),
])
def test_a_refusing_provider_stops_the_run_with_exit_3_and_keeps_the_results_file(
        tmp_path: Path, status: int, words: str, fix: str) -> None:
    qa = _qa(tmp_path / "qa.csv", 40)
    _results(qa).write_text(PREVIOUS, encoding="utf-8")
    with FakeOpenAI() as fake:
        fake.chat_faults["sk-refused"] = status
        done = _grade(tmp_path, qa, base_url=fake.base_url, key="sk-refused")
        calls = fake.sync_calls
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("langrag-eval grade: judge unavailable: "), done.stderr
    assert words in lines[0] and fix in lines[0]
    assert "Traceback" not in done.stderr
    assert 1 <= calls <= 4  # only the calls already in flight at the stop (--concurrency 4), of 40
    assert _results(qa).read_text(encoding="utf-8") == PREVIOUS


def test_after_the_stop_the_fixed_run_resumes_without_paying_for_finished_items(tmp_path: Path) -> None:
    qa = _qa(tmp_path / "qa.csv", 30)
    with FakeOpenAI() as fake:
        fake.chat_faults["sk-revoked"] = [None] * 10 + [401] * 100  # the key is revoked after 10 calls
        first = _grade(tmp_path, qa, base_url=fake.base_url, key="sk-revoked", concurrency=1)
        assert first.returncode == 3, first.stderr
        assert fake.sync_calls == 11  # ten replies, one refusal, then nothing more
        second = _grade(tmp_path, qa, base_url=fake.base_url, key="sk-valid", concurrency=1)
        assert second.returncode == 0, second.stderr
        assert fake.sync_calls == 11 + 20  # the ten finished items are not paid again
    rows = [json.loads(line) for line in _results(qa).read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 30 and all(r["score"] is not None for r in rows)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: nothing listens there


def test_a_closed_port_is_reported_as_connection_refused_not_as_a_timeout(tmp_path: Path) -> None:
    qa = _qa(tmp_path / "qa.csv", 10)
    _results(qa).write_text(PREVIOUS, encoding="utf-8")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    done = _grade(tmp_path, qa, base_url=url, key="sk-any")
    assert done.returncode == 3, done.stderr
    line, = done.stderr.strip().splitlines()
    assert f"OpenAI: connection refused by {url}" in line and "check OPENAI_BASE_URL" in line, line
    assert "timed out" not in line
    assert _results(qa).read_text(encoding="utf-8") == PREVIOUS


def test_the_same_refusal_on_the_first_calls_stops_the_run(tmp_path: Path) -> None:
    qa = _qa(tmp_path / "qa.csv", 40)
    with FakeOpenAI() as fake:
        fake.chat_faults["sk-any"] = 400  # a request the model refuses every time (a parameter, say)
        done = _grade(tmp_path, qa, base_url=fake.base_url, key="sk-any", concurrency=1)
        calls = fake.sync_calls
    assert done.returncode == 3, done.stderr
    assert "the first 5 calls all failed with the same error: OpenAI HTTP 400" in done.stderr
    assert calls == 5


def test_timeouts_stay_unscored_items_and_a_run_that_scored_nothing_exits_3(tmp_path: Path) -> None:
    qa = _qa(tmp_path / "qa.csv", 3)
    with FakeOpenAI() as fake:
        fake.chat_faults["sk-slow"] = ("delay", 1.5)
        slow = ("--timeout", "0.3", "--max-attempts", "1")
        done = _grade(tmp_path, qa, base_url=fake.base_url, key="sk-slow", extra=slow)
        rows = [json.loads(line) for line in _results(qa).read_text(encoding="utf-8").splitlines()]
        assert [r["unscored"]["cause"] for r in rows] == ["timeout"] * 3, done.stderr
        assert "judge unavailable" not in done.stderr  # no stop: each item was tried
        assert done.returncode == 3 and "nothing was scored: all 3 judge call(s) failed" in done.stderr
        # again, over an earlier results file: a run that scored nothing does not replace it
        _results(qa).write_text(PREVIOUS, encoding="utf-8")
        again = _grade(tmp_path, qa, base_url=fake.base_url, key="sk-slow", extra=slow)
        assert again.returncode == 3, again.stderr
        assert "was left as it was" in again.stderr
        assert _results(qa).read_text(encoding="utf-8") == PREVIOUS
        deadline = time.monotonic() + 10  # the fake counts a call once its delay is over
        while fake.sync_calls < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fake.sync_calls == 6  # transient: tried again on the resumed run, as before


def test_a_revoked_key_stops_an_anthropic_batch_before_any_line_is_sent(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    qa = _qa(tmp_path / "qa.csv", 12)
    _results(qa).write_text(PREVIOUS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "LANGRAG_"))}
    with FakeAnthropic() as fake:
        fake.revoked.add("sk-ant-revoked")
        env.update(PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
                   ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="sk-ant-revoked")
        done = subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                               "grade", str(qa), "--judge", "anthropic:claude-haiku-4-5", "--batch",
                               "--batch-poll", "0.05", "--store", str(tmp_path / "runs.sqlite")],
                              env=env, capture_output=True, text=True, timeout=120)
        requests = list(fake.requests)
    assert done.returncode == 3, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "judge unavailable" in line and "invalid x-api-key" in line and "ANTHROPIC_API_KEY" in line, line
    assert not fake.lines_seen  # no batch was accepted, so nothing was paid
    assert requests.count(("POST", "/v1/messages/batches")) <= 3  # one try, and the SDK's 2 retries at most
    assert _results(qa).read_text(encoding="utf-8") == PREVIOUS
