"""Secrets: an API key from the environment and an OpenSearch password never reach the run store
file, logs, printed output or error messages."""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.cli import main
from langrag_eval.errors import RateLimitError
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RetryPolicy, RunStore
from langrag_eval.verdicts.formats import ScoreFormat

API_KEY = "sk-test-7Hq2LmZ9xV4pR8wK1nB6"
OS_PASSWORD = "Os-pw-Zq81!vXt"


def _store_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def _assert_clean(*texts: str | bytes) -> None:
    for text in texts:
        data = text if isinstance(text, bytes) else text.encode()
        for secret in (API_KEY, OS_PASSWORD):
            assert secret.encode() not in data, f"secret {secret[:6]}... leaked"


class LeakyProvider:
    """A provider whose errors echo the key, as some SDKs and proxies do."""

    model_id, constrained = "openai:gpt-4o", False

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def generate(self, prompt, params, *, schema=None):  # noqa: ANN001, ANN201
        raise self.error


@pytest.mark.parametrize("error", [
    PermissionError(f"Incorrect API key provided: {API_KEY}"),
    RateLimitError(f"429 for key {API_KEY}"),
    ConnectionError(f"cannot reach https://user:{OS_PASSWORD}@proxy.local:8080"),
])
async def test_model_errors_with_secrets_stay_out_of_the_store_and_results(
        tmp_path, monkeypatch, caplog, capsys, error) -> None:  # noqa: ANN001
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    run = store.open_run("grade", {"judge": "openai:gpt-4o"}, judge="openai:gpt-4o")
    judge = Judge(LeakyProvider(error), store=store, run_id=run,
                  retry=RetryPolicy(max_attempts=2, base_delay=0.001))
    answer = await judge.ask("grade this", ScoreFormat())
    assert isinstance(answer.value, Unscored)
    store.put_judgment(run, "q1", "vrag", answer.value.model_dump(), scored=False)
    store.close()
    out = capsys.readouterr()
    _assert_clean(answer.value.reason, repr(answer.value), _store_bytes(path), out.out, out.err, caplog.text)
    assert "***" in answer.value.reason  # the message survives, masked


def test_a_scripted_cli_run_stores_no_secret(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("OPENSEARCH_PASSWORD", OS_PASSWORD)
    judge_file = tmp_path / "judge.json"
    judge_file.write_text(json.dumps(["Score: [[4]], Reason: [[fine]]"]), encoding="utf-8")
    qa = tmp_path / "qa.csv"
    with qa.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "question", "answer", "label"])
        writer.writerows([[f"q{i}", f"Question {i}?", f"answer {i}", f"label {i}"] for i in range(5)])
    store = tmp_path / "runs.sqlite"
    code = main(["grade", str(qa), "--judge", f"scripted:{judge_file}", "--store", str(store),
                 "--out", str(tmp_path / "out")])
    out = capsys.readouterr()
    assert code == 0, out.err
    produced = b"".join(p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()) \
        if (tmp_path / "out").exists() else b""
    _assert_clean(_store_bytes(store), out.out, out.err, produced)


def test_judge_resolution_errors_do_not_echo_the_key(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    qa = tmp_path / "qa.csv"
    qa.write_text("id,question,answer,label\nq1,Q?,A,L\n", encoding="utf-8")
    for spec in ("openai:gpt-4o", "mystery:model", API_KEY, f"openai:{API_KEY}"):
        code = main(["grade", str(qa), "--judge", spec, "--store", str(tmp_path / "s.sqlite")])
        out = capsys.readouterr()
        if code == 0:  # langchain-openai installed: the judge was built; nothing printed the key
            _assert_clean(out.out, out.err)
            continue
        # 2: the judge could not be set up; 3: it was, and could not be reached (no network here)
        assert code in (2, 3) and ("error:" in out.err or "judge unavailable:" in out.err) and "Traceback" not in out.err
        _assert_clean(out.out, out.err)
    _assert_clean(_store_bytes(tmp_path / "s.sqlite"))


@pytest.mark.parametrize("argv", [
    ["search", "--backend", "opensearch", "--url", f"https://admin:{OS_PASSWORD}@127.0.0.1:9", "what"],
    ["search", "--backend", "opensearch", "--url", "http://127.0.0.1:9", "what"],
])
def test_opensearch_passwords_stay_out_of_error_messages(argv, monkeypatch, capsys) -> None:  # noqa: ANN001
    monkeypatch.setenv("OPENSEARCH_USER", "admin")
    monkeypatch.setenv("OPENSEARCH_PASSWORD", OS_PASSWORD)
    code = main(argv)
    out = capsys.readouterr()
    assert code != 0 and "Traceback" not in out.err
    _assert_clean(out.out, out.err)


def test_redact_masks_env_secrets_and_url_passwords() -> None:
    from langrag_eval.errors import redact

    env = {"OPENAI_API_KEY": API_KEY, "OPENSEARCH_PASSWORD": OS_PASSWORD, "HOME": "/root/home"}
    text = f"key {API_KEY} at https://u:{OS_PASSWORD}@h:9200 from /root/home"
    masked = redact(text, env)
    _assert_clean(masked)
    assert masked == "key *** at https://u:***@h:9200 from /root/home"


def test_a_text_masked_before_is_masked_again_for_a_secret_set_since(monkeypatch) -> None:  # noqa: ANN001
    """A short text is masked once per set of the environment's secrets: the same text after a new
    secret is set shows it masked, and after it is gone shows it again."""
    from langrag_eval.errors import redact

    text = "the reply quoted zq-7f3a9c2e41 back"
    monkeypatch.delenv("GRADER_API_KEY", raising=False)
    assert redact(text) == text
    monkeypatch.setenv("GRADER_API_KEY", "zq-7f3a9c2e41")
    assert redact(text) == redact(text) == "the reply quoted *** back"
    monkeypatch.delenv("GRADER_API_KEY")
    assert redact(text) == text


_SECRET_CHARS = st.characters(codec="ascii", categories=("L", "N"), include_characters="-_.~%!*$+")


@settings(max_examples=300, deadline=None)
@given(secret=st.text(_SECRET_CHARS, min_size=6, max_size=40),
       name=st.sampled_from(["password", "sslpassword", "PASSWORD", "passwd", "token", "access_token",
                             "api_key", "apikey", "api-key", "client_secret", "auth"]),
       before=st.sampled_from(["", "sslmode=require&", "options=-csearch_path%3Dx&"]),
       after=st.sampled_from(["", "&connect_timeout=3", " unreachable", "\nsecond line"]),
       userinfo=st.booleans())
def test_redact_masks_a_secret_in_any_url_form(secret: str, name: str, before: str, after: str,
                                               userinfo: bool) -> None:
    from langrag_eval.errors import redact

    user = f"me:{secret}" if userinfo else "me"
    text = f"cannot reach postgresql://{user}@db:5432/evals?{before}{name}={secret}{after}"
    masked = redact(text, {})
    assert secret not in masked
    assert masked.startswith("cannot reach postgresql://me") and "@db:5432/evals?" in masked
    assert masked.endswith(after)                     # only the secret is masked
    dsn = redact(f"host=db {name}='{secret} x' dbname=evals", {})
    assert secret not in dsn and dsn.endswith(" dbname=evals")


@pytest.mark.parametrize("text", ["max_tokens=256 temperature=0", "unexpected token: ','",
                                  "postgresql://me@db/evals?sslmode=require", "Score: [[5]]"])
def test_redact_leaves_what_is_not_a_secret(text: str) -> None:
    from langrag_eval.errors import redact

    assert redact(text, {}) == text


_PIECES = st.sampled_from(["password=", "token", "Token", '"', "'", "\\", ":", "{", "}", "=", "&", " ",
                           "api_key", "x", "postgresql://u:", "@h/db?", "sslpassword=s3cr3t"])
_TEXT = st.lists(_PIECES, max_size=8).map("".join)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | _TEXT,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(value=_JSON)
def test_what_the_store_keeps_stays_json_whatever_it_masks(value: object) -> None:
    from langrag_eval.runtime.store_base import _stored

    kept = json.loads(_stored(value))               # always JSON, never a half-masked string
    assert "s3cr3t" not in json.dumps(kept)
    if "s3cr3t" not in json.dumps(value) and "password" not in json.dumps(value).lower() \
            and "token" not in json.dumps(value).lower() and "api_key" not in json.dumps(value) \
            and "postgresql://" not in json.dumps(value):
        assert kept == value                          # nothing secret-like: kept as it was


# ---------------------------------------------------------------- secrets by name and by shape

_ALNUM = st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1)
_ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
# Every credential shape, generated: (what the text shows, the secret inside it that must go).
_SHAPES = st.one_of(
    st.from_regex(r"AKIA[0-9A-Z]{16}", fullmatch=True).map(lambda s: (s, s)),
    st.from_regex(r"[A-Za-z0-9/+]{40}", fullmatch=True).map(
        lambda s: (f"aws_secret_access_key = {s}", s)),
    st.from_regex(r"[A-Za-z0-9/+]{40}", fullmatch=True).map(
        lambda s: (f"aws_secret_access_key: {s}", s)),
    st.from_regex(r"glpat-[A-Za-z0-9_-]{20}", fullmatch=True).map(lambda s: (s, s)),
    st.from_regex(r"sk_live_[A-Za-z0-9]{24,40}", fullmatch=True).map(lambda s: (s, s)),
    st.from_regex(r"rk_live_[A-Za-z0-9]{24}", fullmatch=True).map(lambda s: (s, s)),
    st.tuples(st.from_regex(r"[A-Za-z0-9_-]{10,40}", fullmatch=True),
              st.from_regex(r"[A-Za-z0-9_-]{10,40}", fullmatch=True)).map(
        lambda p: (f"eyJhbGciOiJIUzI1NiJ9.eyJ{p[0]}.{p[1]}", f"eyJ{p[0]}.{p[1]}")),
    st.from_regex(r"[A-Za-z0-9+/]{64}", fullmatch=True).map(
        lambda b: (f"-----BEGIN RSA PRIVATE KEY-----\n{b}\n-----END RSA PRIVATE KEY-----", b)),
    st.from_regex(r"[A-Za-z0-9+/]{64}", fullmatch=True).map(
        lambda b: (f"-----BEGIN PRIVATE KEY-----\\n{b}\\n", b)),          # cut, with JSON escapes
    st.from_regex(r"[A-Za-z0-9._~+/-]{20,60}", fullmatch=True).map(
        lambda t: (f"Authorization: Bearer {t}", t)),
    st.from_regex(r"[A-Za-z0-9._~+/-]{20,60}", fullmatch=True).map(lambda t: (f"Bearer {t}", t)),
    st.from_regex(r"[A-Za-z0-9+/]{16,40}", fullmatch=True).map(lambda t: (f'"Authorization": "Basic {t}"', t)),
    st.from_regex(r"sk-proj-[A-Za-z0-9]{30}", fullmatch=True).map(lambda s: (s, s)),
)


def _split(text: str, secret: str, marks: list[str]) -> tuple[str, str]:
    """The secret inside ``text`` with zero-width characters between its characters."""
    hidden = "".join(c + marks[i % len(marks)] for i, c in enumerate(secret[:-1])) + secret[-1]
    return text.replace(secret, hidden), hidden


def _escaped(text: str, secret: str) -> str:
    """The secret inside ``text`` with every other character written as a ``\\u`` escape."""
    return text.replace(secret, "".join(f"\\u{ord(c):04x}" if i % 2 else c for i, c in enumerate(secret)))


@settings(max_examples=400, deadline=None)
@given(shape=_SHAPES, before=st.sampled_from(["", "The document says ", "{\"note\": \"", "x\n"]),
       after=st.sampled_from(["", " and that is all.", "\"}", "\nScore: [[4]]"]),
       hiding=st.sampled_from(["plain", "zero-width", "escaped"]), marks=st.lists(
           st.sampled_from(_ZERO_WIDTH), min_size=1, max_size=3))
def test_credentials_are_masked_by_their_shape_also_split_or_escaped(shape, before, after, hiding,
                                                                    marks) -> None:  # noqa: ANN001
    from langrag_eval.errors import redact

    shown, secret = shape
    text = f"{before}{shown}{after}"
    if hiding == "zero-width":
        text, hidden = _split(text, secret, marks)
    elif hiding == "escaped":
        text = _escaped(text, secret)
    masked = redact(text, {})
    visible = "".join(c for c in masked if c not in _ZERO_WIDTH)
    assert secret not in visible and "***" in masked
    # the run of the secret is gone, at most a few of its characters are left beside the mask
    assert len(secret) > 12 and secret[:12] not in visible
    assert masked.startswith(before)
    if "BEGIN" not in shown or "-----END" in shown:  # a key block cut before its end: masked to the end
        assert masked.endswith(after)


_ENV_NAMES = ["AZURE_OPENAI_KEY", "OPENAI_KEY", "PRIVATE_KEY", "DB_PASS", "GPG_PASSPHRASE", "HF_AUTH",
              "MY_SERVICE_CREDENTIALS", "slack_token", "Client_Secret", "X_AUTH_HEADER"]


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(_ENV_NAMES),
       secret=st.text(st.characters(codec="ascii", categories=("L", "N", "P")), min_size=8, max_size=30)
       .filter(lambda s: s.strip() == s and not s.isalpha()),
       marks=st.lists(st.sampled_from(_ZERO_WIDTH), min_size=1, max_size=2))
def test_environment_secrets_by_any_of_the_secret_words(name: str, secret: str, marks: list[str]) -> None:
    from langrag_eval.errors import redact

    env = {name: secret, "HOME": "/root", "GIT_AUTHOR_NAME": "Ada Lovelace", "PIP_KEYRING_PROVIDER": "import"}
    text = f"the reply quotes {secret} beside Ada Lovelace, /root and import"
    masked = redact(text, env)
    assert secret not in masked and masked.endswith(" beside Ada Lovelace, /root and import")
    split, _ = _split(text, secret, marks)
    assert secret not in "".join(c for c in redact(split, env) if c not in _ZERO_WIDTH)


@pytest.mark.parametrize("text", [
    "max_tokens=256 temperature=0", "sort_key=title", "bypass=1", "the bearer of bad news",
    "GIT_AUTHOR_NAME=Ada", "eyJ is how a JWT starts", "-----BEGIN PUBLIC KEY-----", "primary_key: id",
    "Score: [[5]], Reason: [[The answer names the key and the token.]]", "\\u005b\\u005b5\\u005d\\u005d"])
def test_shapes_leave_ordinary_text_alone(text: str) -> None:
    from langrag_eval.errors import redact

    assert redact(text, {}) == text


SHAPED = {  # credential shapes a judge reply may quote from a document it read
    "aws": ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG"),
    "gitlab": ("glpat-xZ3kQ9vT2mP8rL5nB1cW", "glpat-xZ3kQ9vT2mP8rL5nB1cW"),
    "stripe": ("sk_live_51HqLyjWDarjtT1zdp7dc4mN", "sk_live_51HqLyjWDarjtT1zdp7dc4mN"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    "pem": ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oDqSwBkg\n"
            "-----END EC PRIVATE KEY-----", "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oDqSwBkg"),
    "bearer": ("Authorization: Bearer ya29.a0AfH6SMBx3kq9Zp2L7vT", "ya29.a0AfH6SMBx3kq9Zp2L7vT"),
    "split": ("s\u200bk\u200b-\u200bp\u200br\u200bo\u200bj\u200b-Q7vL2mX9pR4tK8wN1bZ6cY3d", "Q7vL2mX9pR4tK8wN1bZ6"),
}
ENV_SECRETS = {"AZURE_OPENAI_KEY": "az-9f3K2q7LmW4x", "OPENAI_KEY": "ok-7Hq2LmZ9xV4p", "DB_PASS": "Hunter2!x",
               "GPG_PASSPHRASE": "correct horse battery staple", "HF_AUTH": "hfa-Zq81vXtY3",
               "PRIVATE_KEY": "pk-5Tg8Rw2Ee6Yu"}


def test_a_cli_run_whose_judge_quotes_credentials_stores_and_prints_none(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    for name, value in ENV_SECRETS.items():
        monkeypatch.setenv(name, value)
    replies = [f"Score: [[4]], Reason: [[The passage holds {shown} and {ENV_SECRETS[name]}.]]"
               for (shown, _), name in zip(SHAPED.values(), [*ENV_SECRETS, "DB_PASS"])]
    judge_file = tmp_path / "judge.json"
    judge_file.write_text(json.dumps(replies), encoding="utf-8")
    qa = tmp_path / "qa.csv"
    with qa.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "question", "answer", "label"])
        writer.writerows([[f"q{i}", f"Question {i}?", f"answer {i}", f"label {i}"] for i in range(len(replies))])
    store = tmp_path / "runs.sqlite"
    code = main(["grade", str(qa), "--judge", f"scripted:{judge_file}", "--store", str(store),
                 "--out", str(tmp_path / "out.jsonl")])
    out = capsys.readouterr()
    assert code == 0, out.err
    produced = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    assert produced.count("The passage holds") == 2 * len(replies)  # reason and raw reply kept, masked
    everything = _store_bytes(store).decode("utf-8", "replace") + out.out + out.err + produced
    everything = "".join(c for c in everything if c != "\u200b")
    for _, secret in SHAPED.values():
        assert secret not in everything
    for value in ENV_SECRETS.values():
        assert value not in everything
