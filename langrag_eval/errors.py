"""Typed errors. Every error the package raises on purpose derives from :class:`LangragError`.

Messages name what is wrong and where (file, line, field) so a user can fix it without a traceback.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from typing import Any, Callable, Mapping

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


# Environment variables whose names hold one of these words hold secrets (AZURE_OPENAI_KEY, DB_PASS,
# DB_PWD, GPG_PASSPHRASE, HF_AUTH, PRIVATE_KEY ...). AUTHOR is not AUTH (GIT_AUTHOR_NAME is a name);
# AUTHORIZATION and AUTHORISATION are.
_SECRET_NAME = re.compile(r"KEY|PASS|PWD|AUTH(?!OR(?!I[SZ]))|TOKEN|SECRET|CREDENTIAL|PRIVATE", re.I)
# The names the narrower rule of earlier releases knew: every value of six characters or more is one.
_PLAIN_SECRET_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
# Names of passwords, whose value may be a plain word.
_PASSWORD_NAME = re.compile(r"PASS|PWD", re.I)
_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)([^@/\s]+)@")
# A secret given as a parameter: a URL's query string (``?password=...&sslpassword=...``), a libpq
# connection string (``host=db password='x y'``), a command line or a config file. The name must
# end in the secret word, so ``max_tokens=5`` is not one; ``pass`` alone or after a separator
# (``db_pass``), so ``bypass=1`` is not one; ``key`` only as a kind of key (``aws_secret_access_key``),
# so ``sort_key=title`` is not one.
_KEY_KIND = r"(?:api|access|secret|private|signing|client|account|master|encryption|auth|subscription|license)[_-]?key"
_WORDS = (rf"(?:password|passwd|passphrase|pwd|secret|token|{_KEY_KIND}|apikey|credentials?|auth"
          r"|(?<![a-z])pass)")
_SECRET_WORD = rf"[\w.-]*?{_WORDS}"
_QUOTED = r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\""
_BARE = r"([^\s&;,'\"\\)\]}]+)"
_SECRET_PARAM = (
    rf"(?<![\w-]){_SECRET_WORD}\s*=\s*(?:{_QUOTED}|{_BARE})"                # name=value
    rf"|[\"']{_SECRET_WORD}[\"']\s*:\s*(?:{_QUOTED})"                        # "name": "value"
    rf"|(?<![\w-])[\w.-]*?[_-]{_WORDS}\s*:[ \t]*(?:{_QUOTED}|{_BARE})")      # yaml_name: value

# Credentials by their shape, wherever they appear (a judge reply quoting a document that held one,
# a provider's error): OpenAI/Anthropic ``sk-``, AWS access key ids, GitHub, GitLab, Hugging Face,
# Slack, Google, Stripe, JSON Web Tokens, PEM private key blocks (to the end of the text when cut
# before their END line). In any letter case: a key retyped in capitals is still the key.
_KEY_SHAPE = (
    r"(?<![\w-])(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|hf_[A-Za-z0-9]{30,}"
    r"|gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-[A-Za-z0-9_-]{16,}"
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{16,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)(?![\w-])"
    r"|-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)")
# The value of an ``Authorization`` header (any name ending so: ``Proxy-Authorization``,
# ``HTTP_AUTHORIZATION``) or of an API-key header, its scheme (``Bearer``, ``Basic`` ...) kept, and
# any ``Bearer`` token. A header's value runs to the next space; a ``name=value`` parameter's to "&".
_SCHEME = r"[\"']?(?:(?:bearer|basic|token|digest|negotiate)\s+)?"
_AUTH_VALUE = (
    r"(?:[\w-]*authorization|(?<![\w-])(?:x-api-key|api-key|x-auth-token))[\"']?\s*"
    rf"(?::\s*{_SCHEME}([^\s\"',;]+)|=\s*{_SCHEME}([^\s\"',;&]+))"
    r"|(?<![\w-])bearer\s+([A-Za-z0-9._~+/-]{16,}=*)")


@functools.cache
def _full_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The secret parameter, shape and header patterns, compiled on first use: compiling them is
    most of this module's import, which every start of the command pays (``--help`` too), and most
    texts never need them (the hints below send a text to them)."""
    return (re.compile(_SECRET_PARAM, re.IGNORECASE), re.compile(_KEY_SHAPE, re.DOTALL | re.IGNORECASE),
            re.compile(_AUTH_VALUE, re.IGNORECASE))

# What a secret parameter, shape or header needs, looked for in the casefolded text without
# IGNORECASE (a tenth of the full patterns' scan, and most texts have none; redact runs on every
# stored judgment and reply): a secret word right before "=" or ":", or a shape's literal start.
# Casefolding gives each letter IGNORECASE matches to these words, except the Turkish dotted and
# dotless i, which send a text to the full patterns.
_SECRET_HINT = re.compile(rf"(?:pass(?:word|wd|phrase)?|pwd|secret|token|{_KEY_KIND}|apikey|credentials?|auth)"
                          r"[\"']?\s*[=:]")
_KEY_START = re.compile(r"sk-|a[ks]ia[0-9a-z]{16}|gh[pousr]_|github_pat_|hf_|gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-"
                        r"|_live_|_test_|whsec_|xox[abprs]-"
                        r"|aiza|eyj[a-z0-9_-]{5}|private key|authorization|api-key|auth-token|bearer")
_CASEFOLD_MISSES = ("\u0130", "\u0131")

# Hiding places: zero-width, invisible and bidi characters inside a key, or a key written with
# escapes (``\u0073k-``, ``\x73``, ``&#115;``). A text holding any is also read with them removed
# or decoded; only a text with a backslash, "&#" or a non-ASCII character can hold one.
_HIDDEN = re.compile(r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e"
                     r"\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
                     r"|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|&#(?:[0-9]{1,7}|[xX][0-9a-fA-F]{1,6});")


def is_secret_name(name: str) -> bool:
    """Whether a setting named ``name`` holds a secret (``password``, ``sslpassword``, ``api_key``,
    ``access_token``, ``db_pass``, ``aws_secret_access_key`` ...), as :func:`redact` decides for
    ``name=value``.

    >>> is_secret_name("sslpassword"), is_secret_name("max_tokens"), is_secret_name("db_pass")
    (True, False, True)
    """
    return re.fullmatch(_SECRET_WORD, name, re.IGNORECASE) is not None


# The process environment's secret values, with the snapshot of the environment they were read
# from: every judge reply, stored reply and model name is redacted, and decoding the whole
# environment each time cost more than the rest of a call's bookkeeping.
_ENV_SECRETS: tuple[object, tuple[str, ...]] = (None, ())


def _is_secret_value(name: str, value: str) -> bool:
    if len(value) < 6 or not _SECRET_NAME.search(name):
        return False
    if _PLAIN_SECRET_NAME.search(name):
        return True
    # Names the wider rule adds (KEY, PASS, PWD, AUTH, PRIVATE) also name settings that are no
    # secret (PIP_KEYRING_PROVIDER=import, SSH_AUTH_SOCK=/tmp/..., PWD=/home/me): the path of a file
    # that exists, or a short word of one case, is not masked in every text it appears in. A password
    # may be a plain word, so under PASS or PWD only a path is let through.
    short_word = value.isalpha() and len(value) <= 10 and (value.islower() or value.isupper())
    if short_word and not _PASSWORD_NAME.search(name):
        return False
    return not (value.startswith("/") and os.path.exists(value))


def _secrets_of(env: Mapping[str, str]) -> tuple[str, ...]:
    # Longest first: a secret holding another is masked whole.
    return tuple(sorted({value for name, value in env.items() if _is_secret_value(name, value)},
                        key=len, reverse=True))


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


def _secret_spans(text: str, secrets: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``text`` holds a secret: the spans to mask, in any order, possibly overlapping."""
    spans = []
    for value in secrets:
        at = text.find(value)
        while at >= 0:
            spans.append((at, at + len(value)))
            at = text.find(value, at + len(value))
    folded = text.casefold()
    missed = any(c in text for c in _CASEFOLD_MISSES)
    if missed or _SECRET_HINT.search(folded):
        for m in _full_patterns()[0].finditer(text):
            spans.append(m.span(next(g for g in range(1, 9) if m[g] is not None)))
    if missed or _KEY_START.search(folded):
        _, key_shape, auth_value = _full_patterns()
        spans.extend(m.span() for m in key_shape.finditer(text))
        for m in auth_value.finditer(text):
            spans.append(m.span(next(g for g in range(1, 4) if m[g] is not None)))
    if "://" in text:
        spans.extend(m.span(2) for m in _URL_PASSWORD.finditer(text))
    return spans


def _revealed(text: str) -> tuple[str, Callable[[int, int], tuple[int, int]]]:
    """``text`` with its hiding places removed or decoded, and the map of a span of that text back
    to the span of ``text`` its characters came from."""
    pieces: list[str] = []
    # (position in the revealed text, shift from there on) at each hiding place, and the decoded
    # characters' source spans by their revealed position
    breaks: list[int] = []
    shifts: list[int] = []
    decoded: dict[int, tuple[int, int]] = {}
    pos = shown = shift = 0
    for m in _HIDDEN.finditer(text):
        pieces.append(text[pos:m.start()])
        shown += m.start() - pos
        token = m[0]
        if len(token) > 1:  # an escape: the character it writes
            if token.startswith("&#"):
                code = int(token[3:-1], 16) if token[2] in "xX" else int(token[2:-1])
            else:
                code = int(token[2:], 16)
            if code <= 0x10FFFF:
                pieces.append(chr(code))
                decoded[shown] = m.span()
                shift += len(token) - 1
                shown += 1
                breaks.append(shown)
                shifts.append(shift)
                pos = m.end()
                continue
        shift += len(token)  # removed (an invisible character, or an escape of no character)
        breaks.append(shown)
        shifts.append(shift)
        pos = m.end()
    pieces.append(text[pos:])

    def source(a: int, b: int) -> tuple[int, int]:
        start = decoded[a][0] if a in decoded else a + _shift_at(breaks, shifts, a)
        end = decoded[b - 1][1] if b - 1 in decoded else b + _shift_at(breaks, shifts, b - 1)
        return start, end

    return "".join(pieces), source


def _shift_at(breaks: list[int], shifts: list[int], i: int) -> int:
    k = bisect.bisect_right(breaks, i)
    return shifts[k - 1] if k else 0


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """Mask secrets in a text before it is shown, logged or stored: the values of environment
    variables whose names hold KEY, PASS, AUTH, TOKEN, SECRET, CREDENTIAL or PRIVATE, passwords
    inside URLs (user-info or query string), secret parameters (``password=``, ``"api_key": "..."``,
    ``aws_secret_access_key: ...``), ``Authorization`` header values and ``Bearer`` tokens, and
    credentials by their shape (provider keys, JWTs, PEM private keys), also when split by
    zero-width characters or written with escapes. Every stored and printed text goes through
    this one function.

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
    >>> redact("Authorization: Bearer abc.def-123", {})
    'Authorization: Bearer ***'
    """
    secrets = _secret_values(env)
    if env is None and len(text) <= _REMEMBERED_LENGTH:
        return _redacted(text, secrets)
    return _masked(text, secrets)


# A run masks the same short texts again and again (the model id of every call, a reply stored and
# read back): those are masked once per set of secrets.
_REMEMBERED_LENGTH = 2048


@functools.lru_cache(maxsize=1024)
def _redacted(text: str, secrets: tuple[str, ...]) -> str:
    return _masked(text, secrets)


def _masked(text: str, secrets: tuple[str, ...]) -> str:
    spans = _secret_spans(text, secrets)
    if (not text.isascii() or "\\" in text or "&#" in text) and _HIDDEN.search(text):
        shown, source = _revealed(text)
        spans.extend(source(a, b) for a, b in _secret_spans(shown, secrets) if b > a)
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for a, b in sorted(spans):
        if b <= pos:
            continue
        if a >= pos:
            parts.append(text[pos:a])
            parts.append("***")
        pos = b
    parts.append(text[pos:])
    return "".join(parts)
