"""Typed errors. Every error the package raises on purpose derives from :class:`LangragError`.

Messages name what is wrong and where (file, line, field) so a user can fix it without a traceback.
"""

from __future__ import annotations

import os
import re
from typing import Any, Mapping

__all__ = [
    "redact",
    "LangragError",
    "ConfigError",
    "ArgumentError",
    "DataError",
    "RepeatedIdError",
    "PromptError",
    "JudgeOutputError",
    "AmbiguousVerdictError",
    "ModelCallError",
    "RateLimitError",
    "ModelTimeoutError",
    "TransientModelError",
    "TruncatedReplyError",
    "JudgeUnavailableError",
    "RetrievalError",
]


class LangragError(Exception):
    """Base of every error raised by langrag-eval."""


class ConfigError(LangragError):
    """A setting, argument or judge specification is invalid or unusable."""


class ArgumentError(ConfigError, ValueError):
    """An argument outside what a function accepts (sequences of different lengths, a level out of
    range, a name that is not among the known ones). Also a ``ValueError``, as Python's own
    functions raise for such arguments, so ``except ValueError`` keeps working.

    >>> isinstance(ArgumentError("concurrency must be at least 1"), (LangragError, ValueError))
    True
    """


class DataError(LangragError):
    """Input data is malformed. Carries the file, line and field at fault when known.

    >>> str(DataError("answer is empty", path="qa.csv", line=7, field="answer"))
    'qa.csv:7: field "answer": answer is empty'
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.message, self.path, self.line, self.field = message, path, line, field
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        elif line is not None:
            where = f"line {line}: "
        if field is not None:
            where += f'field "{field}": '
        super().__init__(where + message)


class RepeatedIdError(DataError, ConfigError):
    """Two samples of one batch carry the same ``id`` (they would share one stored judgment). The
    one rule every evaluator's batch keeps; a :class:`DataError` (field ``id``) and, for callers
    written when batches raised it as such, a :class:`ConfigError`.

    >>> str(RepeatedIdError(["q1", "q7"]))
    'field "id": sample ids must be unique in a batch; repeated: q1, q7'
    """

    def __init__(self, repeated: list[str]) -> None:
        self.repeated = list(repeated)
        super().__init__(f"sample ids must be unique in a batch; repeated: {', '.join(self.repeated[:5])}",
                         field="id")


class PromptError(LangragError):
    """A prompt template is missing, malformed, or rendered with undefined variables."""


class JudgeOutputError(LangragError):
    """A judge reply does not contain a verdict in the expected format."""


class AmbiguousVerdictError(JudgeOutputError):
    """A judge reply holds verdicts outside quoted text that disagree. No one of them is read as
    the judge's: the other could be an unquoted echo of a verdict forged in the graded text."""


class ModelCallError(LangragError):
    """A model call failed. Subclasses tell the retry policy whether trying again may help."""

    retryable = False
    cause = "model_error"


class RateLimitError(ModelCallError):
    """The provider refused the call for now (HTTP 429 and friends)."""

    retryable = True
    cause = "rate_limit"

    def __init__(self, message: str = "rate limited", *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ModelTimeoutError(ModelCallError):
    """The call did not finish within its time limit."""

    retryable = True
    cause = "timeout"


class TransientModelError(ModelCallError):
    """A server-side or network failure that may pass (HTTP 5xx, connection reset)."""

    retryable = True
    cause = "transient"


class TruncatedReplyError(ModelCallError):
    """The reply was cut (by the token budget or a length limit) before it was complete; retrying
    the same call gives the same cut, so it is not retried. ``reply`` holds what came, where the
    model returns it: a verdict is never read from it, a generation capped by its budget is it."""

    cause = "truncated"

    def __init__(self, message: str, *, reply: Any = None) -> None:
        super().__init__(message)
        self.reply = reply


class JudgeUnavailableError(LangragError):
    """The judge cannot answer and no retry will change that: the key is refused (401), the model
    or endpoint is forbidden or unknown (403, 404), the endpoint refuses connections or its name
    does not resolve, or the first calls of a run all failed with the same error. Not a
    :class:`ModelCallError`: it is no one item's failure, so it is never recorded as ``Unscored``;
    the run stops at once (no call is sent after it) and the command exits with status 3.

    >>> str(JudgeUnavailableError("OpenAI HTTP 401: bad key", fix="set OPENAI_API_KEY to a valid key"))
    'OpenAI HTTP 401: bad key; set OPENAI_API_KEY to a valid key'
    """

    retryable = False
    cause = "judge_unavailable"

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.message, self.fix = message, fix
        super().__init__(message + (f"; {fix}" if fix else ""))


class RetrievalError(LangragError):
    """A retrieval backend failed: unreachable, refused, misconfigured, or given bad input."""


# An environment variable whose name holds one of these words holds a secret (AZURE_OPENAI_KEY,
# DB_PASS, GPG_PASSPHRASE, HF_AUTH, PRIVATE_KEY ...): a false positive only masks a harmless value.
_SECRET_NAME = re.compile(r"KEY|PASS|AUTH|TOKEN|SECRET|CREDENTIAL|PRIVATE|PWD", re.I)
_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@/\s]+@")
# A secret given as a parameter: a URL's query string (``?password=...&sslpassword=...``), a libpq
# connection string (``host=db password='x y'``) or a command line. The name must end in the
# secret word, so ``max_tokens=5`` is not one.
_WORDS = (r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|credentials?|auth"
          r"|(?:access|secret|private|signing|encryption|master|client)[_-]?key)")
_SECRET_WORD = rf"[\w.-]*?{_WORDS}"
_QUOTED = r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
_SECRET_VALUE = r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s&;,'\"\\)\]}]+)"
_SECRET_PARAM = re.compile(rf"(?<![\w-])({_SECRET_WORD}\s*=\s*){_SECRET_VALUE}"          # name=value
                           rf"|([\"']{_SECRET_WORD}[\"']\s*:\s*){_QUOTED}", re.IGNORECASE)  # "name": "value"
# What any secret parameter holds: its secret word right before "=" or before a quoted name's ":".
# Looked for in the casefolded text, without IGNORECASE (a tenth of the full pattern's scan, and
# most texts have none): casefolding gives each letter IGNORECASE matches to the secret words,
# except the Turkish dotted and dotless i, which send a text to the full pattern.
_SECRET_HINT = re.compile(rf"{_WORDS}(?:\s*=|[\"']\s*:)")
_CASEFOLD_MISSES = ("\u0130", "\u0131")


# Provider keys by their shape, wherever they appear (a judge reply quoting a document that held
# one, say): OpenAI/Anthropic ``sk-``, AWS access key ids, GitHub, Hugging Face, Slack, Google.
# GitLab ``glpat-``, Stripe ``sk_live_``/``rk_test_``, JSON web tokens, PEM private keys and the
# value of an ``Authorization:`` header (``Bearer ...``, ``Basic ...``) too.
_KEY_SHAPE = re.compile(r"(?<![\w-])(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}"
                        r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|hf_[A-Za-z0-9]{30,}"
                        r"|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{16,}"
                        r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
                        r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)(?![\w-])"
                        r"|-----BEGIN[A-Z ]*PRIVATE KEY-----.*?(?:-----END[A-Z ]*PRIVATE KEY-----|\Z)"
                        r"|(?<=Authorization:)[ \t]*(?:Bearer|Basic|Token|Digest)?[ \t]*[^\s\"',;]+", re.S | re.I)
# The literal starts of those shapes: a text holding none of them holds no key, and looking for them
# costs a fraction of the pattern's scan (every stored judgment and reply is redacted).
_KEY_START = re.compile(r"sk-|AKIA|gh[pousr]_|github_pat_|hf_|xox[abprs]-|AIza|glpat-|k_live_|k_test_"
                        r"|eyJ|PRIVATE KEY|authorization:", re.I)
# A key hidden from the patterns: split by invisible characters, or written with escapes
# (``\u0073k-...``, ``&#115;k-...``). Such a text is masked in its plain form.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|&#[xX]([0-9a-fA-F]{1,6});|&#([0-9]{1,7});")


def is_secret_name(name: str) -> bool:
    """Whether a setting named ``name`` holds a secret (``password``, ``sslpassword``, ``api_key``,
    ``access_token`` ...), as :func:`redact` decides for ``name=value``.

    >>> is_secret_name("sslpassword"), is_secret_name("max_tokens")
    (True, False)
    """
    return re.fullmatch(_SECRET_WORD, name, re.IGNORECASE) is not None


def _mask_param(m: re.Match[str]) -> str:
    value = m[2] or m[4]
    quote = value[0] if value[0] in "'\"" else ""  # a quoted value stays quoted: JSON stays JSON
    return (m[1] or m[3]) + quote + "***" + quote


# The process environment's secret values, with the snapshot of the environment they were read
# from: every judge reply, stored reply and model name is redacted, and decoding the whole
# environment each time cost more than the rest of a call's bookkeeping.
_ENV_SECRETS: tuple[object, tuple[str, ...]] = (None, ())


def _secrets_of(env: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(value for name, value in env.items() if len(value) >= 6 and _SECRET_NAME.search(name))


def _secret_values(env: Mapping[str, str] | None) -> tuple[str, ...]:
    global _ENV_SECRETS
    if env is not None:
        return _secrets_of(env)
    data = getattr(os.environ, "_data", None)  # CPython's raw dict: a snapshot costs no decoding
    if not isinstance(data, dict):
        return _secrets_of(os.environ)
    snapshot = tuple(data.items())
    if snapshot != _ENV_SECRETS[0]:
        _ENV_SECRETS = (snapshot, _secrets_of(os.environ))
    return _ENV_SECRETS[1]


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """Mask secrets in a message before it is shown, logged or stored: the values of environment
    variables named like keys, tokens or passwords, passwords inside URLs (user-info or query
    string) and secret parameters of connection strings. Every message that shows a URL or a
    connection string goes through this one function.

    >>> redact("https://admin:hunter2@db:9200 refused")
    'https://admin:***@db:9200 refused'
    >>> redact("postgresql://me@db/evals?sslmode=require&password=hunter2 unreachable")
    'postgresql://me@db/evals?sslmode=require&password=*** unreachable'
    >>> redact("host=db password='two words' dbname=x")
    "host=db password='***' dbname=x"
    >>> redact("key sk-abc123xyz rejected", {"OPENAI_API_KEY": "sk-abc123xyz"})
    'key *** rejected'
    >>> redact("the page says sk-proj-Abcdefghijklmnop1234 works", {})
    'the page says *** works'
    """
    masked = _redact(text, env)
    plain = _ESCAPE.sub(_unescape, _INVISIBLE.sub("", text)) if (
        "\\" in text or "&#" in text or _INVISIBLE.search(text)) else text
    if plain != text and _redact(plain, env) != plain:
        return _redact(plain, env)  # a secret only the plain form shows: the plain form, masked
    return masked


def _unescape(m: re.Match[str]) -> str:
    code = int(m[1] or m[2] or m[3] or m[4], 10 if m[4] else 16)
    return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else m[0]


def _redact(text: str, env: Mapping[str, str] | None) -> str:
    for value in _secret_values(env):
        if value in text:
            text = text.replace(value, "***")
    if _SECRET_HINT.search(text.casefold()) or any(c in text for c in _CASEFOLD_MISSES):
        text = _SECRET_PARAM.sub(_mask_param, text)
    if _KEY_START.search(text):
        text = _KEY_SHAPE.sub("***", text)
    return _URL_PASSWORD.sub(r"\1***@", text) if "://" in text else text
