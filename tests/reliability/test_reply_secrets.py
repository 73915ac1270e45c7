"""A judge reply that carries a secret (a provider key the judge quoted from a document, a URL
with its password, the value of a secret environment variable) is stored and shown masked: the
run store, the results file, the HTML report and every printed line hold no byte of it, whether the
secret sits in the judge's reason, after its verdict or in a reply that could not be read."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langrag_eval.cli import main

ALNUM = string.ascii_letters + string.digits
ENV_SECRET = "EnvSecret-9f3Kq27xZ"

# A password with a digit and a letter: an all-letter one can be a word the report's own page holds
# (hypothesis drew "undefine", which its script's "undefined" contains), which no masking can remove.
PASSWORDS = st.text(ALNUM, min_size=8, max_size=20).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s))

KEYS = st.one_of(
    st.text(ALNUM, min_size=20, max_size=40).map(lambda s: "sk-" + s),
    st.text(ALNUM, min_size=20, max_size=40).map(lambda s: "sk-proj-" + s),
    st.text(string.ascii_uppercase + string.digits, min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.text(ALNUM, min_size=36, max_size=36).map(lambda s: "ghp_" + s),
    st.text(ALNUM, min_size=34, max_size=34).map(lambda s: "hf_" + s),
    PASSWORDS.map(lambda s: f"postgresql://admin:{s}@db.internal/evals"),
    PASSWORDS.map(lambda s: f"https://search.internal/?password={s}"),
    st.just(ENV_SECRET),
)
PLACES = st.sampled_from(["reason", "after", "unreadable"])


def _secret_part(secret: str) -> str:
    # What must not appear: the secret itself, or a URL's password.
    if "://admin:" in secret:
        return secret.split("admin:", 1)[1].split("@", 1)[0]
    if "password=" in secret:
        return secret.split("password=", 1)[1]
    return secret


def _reply(secret: str, place: str) -> str:
    if place == "reason":
        return f"Score: [[4]], Reason: [[the page gives {secret} as the key]]"
    if place == "after":
        return f"Score: [[4]], Reason: [[matches]]\nNote: the document quotes {secret}."
    return f"I cannot grade this; the context holds {secret} and nothing else."


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=KEYS, place=PLACES)
def test_a_secret_in_a_judge_reply_is_masked_everywhere_it_is_kept(tmp_path_factory, monkeypatch, capsys,
                                                                    secret: str, place: str) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", ENV_SECRET)
    work = tmp_path_factory.mktemp("reply-secret")
    qa = work / "qa.csv"
    qa.write_text("id,question,answer,label\nq1,What is the refund window?,Five days.,Five days.\n", encoding="utf-8")
    judge = work / "judge.json"
    judge.write_text(json.dumps({"": _reply(secret, place)}), encoding="utf-8")
    store, out, html = work / "runs.sqlite", work / "out.jsonl", work / "report.html"
    assert main(["grade", str(qa), "--judge", f"scripted:{judge}", "--store", str(store), "--run", "r",
                 "--out", str(out)]) in (0, 1)
    assert main(["report", "r", "--store", str(store), "--out", str(html)]) == 0
    printed = capsys.readouterr()
    hidden = _secret_part(secret).encode()
    kept = [p for p in work.iterdir() if p.is_file() and p.name != judge.name]
    for blob in [printed.out.encode(), printed.err.encode(), *(p.read_bytes() for p in kept)]:
        assert hidden not in blob, f"{secret!r} ({place}) kept unmasked"
    assert out.read_text(encoding="utf-8").strip()  # the item is still recorded, masked
