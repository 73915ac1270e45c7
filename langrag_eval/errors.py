"""Typed errors. Every error the package raises on purpose derives from :class:`LangragError`.

Messages name what is wrong and where (file, line, field) so a user can fix it without a traceback.
"""

from __future__ import annotations

__all__ = [
    "LangragError",
    "ConfigError",
    "DataError",
    "PromptError",
    "JudgeOutputError",
    "ModelCallError",
    "RateLimitError",
    "ModelTimeoutError",
    "TransientModelError",
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


class RetrievalError(LangragError):
    """A retrieval backend failed: unreachable, refused, misconfigured, or given bad input."""
