"""Credentials by their shape, and environment variables by any secret-bearing name, are masked in
everything kept or shown: a judge reply quoting an AWS secret key, a GitLab or Stripe token, a JWT,
a PEM private key or an Authorization header, or a key split by invisible characters or written
with escapes, leaves no byte of the secret in the store, the results file, the report or the
console; a batch ledger keeps a provider's "Incorrect API key provided: <key>" masked."""

from __future__ import annotations

import json
import sqlite3
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.cli import main
from langrag_eval.errors import redact
from langrag_eval.runtime import RunStore
from langrag_eval.runtime.batch_ledger import BatchLedger

ALNUM = string.ascii_letters + string.digits
# A body with a digit and a letter, so it cannot be a word the report page holds of its own.
BODY = st.text(ALNUM, min_size=24, max_size=40).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s))
B64 = st.text(ALNUM + "_-", min_size=12, max_size=30).filter(lambda s: any(c.isdigit() for c in s))


def _escaped(key: str) -> str:  # every character of the key as a JSON escape
    return "".join(f"\\u{ord(c):04x}" for c in key)


# (text the judge writes, the secret that must not be kept)
SHAPES = st.one_of(
    BODY.map(lambda s: (f"aws_secret_access_key = {s}", s)),
    BODY.map(lambda s: (f"glpat-{s}", s)),
    BODY.map(lambda s: (f"sk_live_{s}", s)),
    BODY.map(lambda s: (f"rk_test_{s}", s)),
    st.tuples(B64, B64, B64).map(lambda t: (f"eyJ{t[0]}.eyJ{t[1]}.{t[2]}", f"{t[0]}.eyJ{t[1]}")),
    BODY.map(lambda s: (f"-----BEGIN RSA PRIVATE KEY-----\n{s}\n{s[::-1]}\n-----END RSA PRIVATE KEY-----", s)),
    BODY.map(lambda s: (f"Authorization: Bearer {s}", s)),
    BODY.map(lambda s: ("sk-proj-" + "\u200b".join([s[:8], s[8:16], s[16:]]), s[8:])),
    BODY.map(lambda s: (_escaped(f"sk-proj-{s}"), s)),
    BODY.map(lambda s: ("".join(f"&#{ord(c)};" for c in f"ghp_{s}{s}"), s)),
)
ENV_NAMES = ["AZURE_OPENAI_KEY", "OPENAI_KEY", "PRIVATE_KEY", "DB_PASS", "GPG_PASSPHRASE", "HF_AUTH"]


def _grade_and_report(work, monkeypatch, capsys, reply: str) -> list[bytes]:  # noqa: ANN001
    qa = work / "qa.csv"
    qa.write_text("id,question,answer,label\nq1,What is the refund window?,Five days.,Five days.\n",
                  encoding="utf-8")
    judge = work / "judge.json"
    judge.write_text(json.dumps({"": reply}), encoding="utf-8")
    store, out, html = work / "runs.sqlite", work / "out.jsonl", work / "report.html"
    assert main(["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(store), "--run", "r",
                 "--out", str(out)]) in (0, 1)
    assert main(["report", "r", "--store", str(store), "--out", str(html)]) == 0
    printed = capsys.readouterr()
    assert out.read_text(encoding="utf-8").strip()  # the item is still recorded, masked
    kept = [p.read_bytes() for p in work.iterdir() if p.is_file() and p.name != judge.name]
    return [printed.out.encode(), printed.err.encode(), *kept]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=SHAPES, after=st.booleans())
def test_a_credential_shape_in_a_judge_reply_is_kept_nowhere(tmp_path_factory, monkeypatch, capsys,
                                                             shape: tuple[str, str], after: bool) -> None:
    text, secret = shape
    reply = (f"Score: [[4]], Reason: [[matches]]\nNote: the document quotes {text}." if after
             else f"I cannot grade this; the context holds {text} and nothing else.")
    work = tmp_path_factory.mktemp("shape")
    for blob in _grade_and_report(work, monkeypatch, capsys, reply):
        assert secret.encode() not in blob, f"{text!r} kept unmasked"


@pytest.mark.parametrize("name", ENV_NAMES)
def test_an_environment_secret_under_any_secret_name_is_kept_nowhere(tmp_path, monkeypatch, capsys,
                                                                     name: str) -> None:
    value = "Val-7Hq2LmZ9xV4pR8"
    monkeypatch.setenv(name, value)
    reply = f"Score: [[4]], Reason: [[the page shows {value} as the setting]]"
    for blob in _grade_and_report(tmp_path, monkeypatch, capsys, reply):
        assert value.encode() not in blob, f"${name} kept unmasked"


def test_the_batch_ledger_keeps_a_provider_error_masked(tmp_path) -> None:
    key = "sk-abcDEF1234567890ghijKLMN"
    store = RunStore(tmp_path / "runs.sqlite")
    ledger = BatchLedger(store)
    job = ledger.intend("openai", "gpt-4o", ["k1"], attempt=1)
    ledger.collected(job.tag, {"k1": f"Incorrect API key provided: {key}."})
    assert ledger.job(job.tag).failures == {"k1": "Incorrect API key provided: ***."}
    store.close()
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        assert not [r for r in db.execute("SELECT failures FROM batch_jobs") if key in str(r)]


@pytest.mark.parametrize("text", ["max_tokens=5 primary_key=3", "the author wrote 12 passes",
                                  "eyJ alone", "Authorization is needed", "sk_live_ short"])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text, {}) == text
