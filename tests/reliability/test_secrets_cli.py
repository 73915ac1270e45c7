"""Secrets through the commands the other secrets tests leave out: ``index`` against OpenSearch
(password in the URL and in the environment) and the HTML ``report`` of a run made with an API key
in the environment. Neither secret may reach the run store file, the report, stdout or stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langrag_eval.cli import main

API_KEY = "sk-live-Vb93KqPz7Lm2Xw8R"
OS_PASSWORD = "Idx-pw-4f!Tq92zR"


def _assert_clean(*blobs: str | bytes) -> None:
    for blob in blobs:
        data = blob if isinstance(blob, bytes) else blob.encode()
        for secret in (API_KEY, OS_PASSWORD):
            assert secret.encode() not in data, f"secret {secret[:7]}... leaked"


@pytest.fixture
def secrets_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("OPENSEARCH_USER", "admin")
    monkeypatch.setenv("OPENSEARCH_PASSWORD", OS_PASSWORD)
    return tmp_path


@pytest.mark.parametrize("url", [f"http://admin:{OS_PASSWORD}@127.0.0.1:9", "http://127.0.0.1:9"])
def test_index_into_unreachable_opensearch_does_not_echo_the_password(
        secrets_env: Path, url: str, capsys: pytest.CaptureFixture[str]) -> None:
    doc = secrets_env / "doc.txt"
    doc.write_text("Refunds take five days. " * 10, encoding="utf-8")
    code = main(["index", str(doc), "--backend", "opensearch", "--url", url, "--no-embeddings"])
    out = capsys.readouterr()
    assert code == 2 and "cannot reach OpenSearch" in out.err and "Traceback" not in out.err
    _assert_clean(out.out, out.err)


def test_report_of_a_run_made_with_a_key_in_the_environment_holds_no_secret(
        secrets_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"qid": f"q{i}", "query": f"Question {i}?", "agent": agent, "answer": f"{agent} answer {i}",
             "documents": [{"id": f"d{i}", "text": f"Passage {i}."}]} for i in range(3) for agent in ("A", "B")]
    answers = secrets_env / "run.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    judge = secrets_env / "judge.json"
    judge.write_text(json.dumps({"pairwise": "[[A]]", "": "Relevance: [[2]]"}), encoding="utf-8")
    store = secrets_env / "runs.sqlite"
    assert main(["tournament", "--answers", str(answers), "--judge", f"scripted:{judge}", "--store", str(store),
                 "--run", "secret-check", "--bootstrap", "5", "--tournaments", "5"]) == 0
    html = secrets_env / "report.html"
    assert main(["report", "secret-check", "--store", str(store), "--out", str(html)]) == 0
    out = capsys.readouterr()
    assert html.stat().st_size > 1000
    store_bytes = b"".join(p.read_bytes() for p in secrets_env.glob("runs.sqlite*"))
    _assert_clean(html.read_bytes(), store_bytes, out.out, out.err)
