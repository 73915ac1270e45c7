"""Typed errors. Every error the package raises on purpose derives from :class:`LangragError`.

Messages name what is wrong and where (file, line, field) so a user can fix it without a traceback.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

__all__ = [
    "redact",
    "LangragError",
    "ConfigError",
    "DataError",
    "PromptError",
    "JudgeOutputError",
    "AmbiguousVerdictError",
    "ModelCallError",
    "RateLimitError",
    "ModelTimeoutError",
    "TransientModelError",
    "TruncatedReplyError",
    "RetrievalError",
]


class LangragError(Exception):
    """Base of every error raised by langrag-eval."""


class ConfigError(LangragError):
    """A setting, argument or judge specification is invalid or unusable."""


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
    the same call gives the same cut, so it is not retried."""

    cause = "truncated"


class RetrievalError(LangragError):
    """A retrieval backend failed: unreachable, refused, misconfigured, or given bad input."""


_SECRET_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
_URL_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@/\s]+@")


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """Mask secrets in a message before it is shown, logged or stored: the values of environment
    variables named like keys, tokens or passwords, and passwords inside URLs.

    >>> redact("https://admin:hunter2@db:9200 refused")
    'https://admin:***@db:9200 refused'
    >>> redact("key sk-abc123xyz rejected", {"OPENAI_API_KEY": "sk-abc123xyz"})
    'key *** rejected'
    """
    env = os.environ if env is None else env
    for name, value in env.items():
        if len(value) >= 6 and value in text and _SECRET_NAME.search(name):
            text = text.replace(value, "***")
    return _URL_PASSWORD.sub(r"\1***@", text)
