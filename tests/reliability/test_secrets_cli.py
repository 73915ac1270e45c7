"""Secrets through the commands the other secrets tests leave out: ``index`` against OpenSearch
(password in the URL and in the environment) and the HTML ``report`` of a run made with an API key
in the environment. Neither secret may reach the run store file, the report, stdout or stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
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


# ---- a password in a PostgreSQL URL, in every form a URL can carry it

PG_SECRET = "Pg-qs-7Hn2!Zr4Wm"


def _pg_forms(url: str) -> list[str]:
    """The same store URL with the secret as user-info, as ``password=`` and ``sslpassword=`` in the
    query string, and as parameters libpq does not know (``token``, ``api_key``): their refusal
    message quotes the URL back."""
    base = url.split("://", 1)[1]
    user, rest = base.split("@", 1)
    joiner = "&" if "?" in rest else "?"
    return [f"postgresql://{user}:{PG_SECRET}@{rest}",
            f"postgresql://{user}@{rest}{joiner}password={PG_SECRET}",
            f"postgresql://{user}@{rest}{joiner}sslpassword={PG_SECRET}",
            f"postgresql://{user}@{rest}{joiner}token={PG_SECRET}",
            f"postgresql://{user}@{rest}{joiner}api_key={PG_SECRET}"]


def _pg_store_text(url: str) -> str:
    """Every row of every run-store table in the scratch schema, as text."""
    import psycopg
    base, _, query = url.partition("?")
    schema = query.split("search_path%3D", 1)[1].split("&", 1)[0]
    with psycopg.connect(base.replace(f":{PG_SECRET}@", "@"), autocommit=True) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = %s", (schema,))]
        return "\n".join(str(row) for t in tables
                         for row in conn.execute(f'SELECT * FROM "{schema}"."{t}"').fetchall())


def _assert_no_pg_secret(*blobs: str | bytes) -> None:
    for blob in blobs:
        data = blob if isinstance(blob, bytes) else blob.encode()
        assert PG_SECRET.encode() not in data and API_KEY.encode() not in data, data[:300]


@pytest.fixture
def pg_store() -> Iterator[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
    from store_backends import postgres_schema
    with postgres_schema() as url:
        yield url


def _tournament_args(tmp: Path) -> list[str]:
    rows = [{"qid": f"q{i}", "query": f"Question {i}?", "agent": agent, "answer": f"{agent} answer {i}",
             "documents": [{"id": f"d{i}", "text": f"Passage {i}."}]} for i in range(2) for agent in ("A", "B")]
    answers = tmp / "run.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    judge = tmp / "judge.json"
    judge.write_text(json.dumps({"pairwise": "[[A]]", "": "Relevance: [[2]]"}), encoding="utf-8")
    return ["tournament", "--answers", str(answers), "--judge", f"scripted:{judge}", "--bootstrap", "5",
            "--tournaments", "5"]


def test_a_password_anywhere_in_a_postgresql_url_is_never_shown_or_stored(
        secrets_env: Path, pg_store: str, capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[str] = []
    for i, url in enumerate(_pg_forms(pg_store)):
        code = main([*_tournament_args(secrets_env), "--store", url, "--run", f"pg-secret-{i}"])
        out = capsys.readouterr()
        seen += [out.out, out.err]
        assert "Traceback" not in out.err
        if "token=" in url or "api_key=" in url:      # libpq refuses the parameter, in one line
            assert code == 2 and len(out.err.strip().splitlines()) == 1, out.err
        else:
            assert code == 0 and "stored: run" in out.err
        # store copy names both stores and counts what it copied
        sqlite_store = secrets_env / f"copy-{i}.sqlite"
        if code == 0:
            assert main(["store", "copy", url, str(sqlite_store)]) == 0
            assert main(["store", "copy", str(sqlite_store), url]) == 0
            assert main(["store", "status", "--store", url]) == 0
            out = capsys.readouterr()
            seen += [out.out, out.err]
            assert "copied into" in out.out
    _assert_no_pg_secret(*seen, _pg_store_text(pg_store),
                         *(p.read_bytes() for p in secrets_env.glob("*.sqlite*")))


@pytest.mark.parametrize("where", ["unreachable port", "missing database"])
def test_connection_failures_do_not_echo_the_password(secrets_env: Path, pg_store: str, where: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    for url in _pg_forms(pg_store):
        if where == "unreachable port":
            url = url.replace("127.0.0.1:5432", "127.0.0.1:9")
        else:
            url = url.replace("/test", "/lre_no_such_database", 1)
        for argv in ([*_tournament_args(secrets_env), "--store", url],
                     ["store", "status", "--store", url],
                     ["grammar", "schema", "--db", url.replace("postgresql://", "postgresql+psycopg://")]):
            code = main(argv)
            out = capsys.readouterr()
            assert code == 2 and "Traceback" not in out.err and len(out.err.strip().splitlines()) == 1, out.err
            _assert_no_pg_secret(out.out, out.err)
