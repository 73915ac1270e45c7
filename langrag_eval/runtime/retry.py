"""Retries with exponential backoff and full jitter, a per-call timeout, and an attempt cap.

Foreign exceptions (provider SDKs, httpx, asyncio) are mapped onto the package's
:class:`ModelCallError` kinds by :func:`classify`, so the policy knows what is worth retrying.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Awaitable, Callable, TypeVar

import errno
import socket

from ..errors import (JudgeUnavailableError, ModelCallError, ModelTimeoutError, RateLimitError,
                      TransientModelError, redact)

__all__ = ["RetryPolicy", "classify", "call_with_retry", "unavailable"]

T = TypeVar("T")
_timeout = getattr(asyncio, "timeout", None)
_TRANSIENT_STATUS = {408, 409, 500, 502, 503, 504, 520, 522, 524, 529}


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` counts the first try; ``timeout`` is per attempt, in seconds (None: none)."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    timeout: float | None = 120.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Full jitter: uniform in [0, min(max_delay, base * 2**attempt)], at least ``retry_after``."""
        ceiling = min(self.max_delay, self.base_delay * (2 ** attempt))
        wait = rng.uniform(0, ceiling)
        return max(wait, min(retry_after, self.max_delay)) if retry_after else wait


# Where each provider's SDK reads its key and endpoint: the fix a refusal names.
_SETTINGS = {"openai": ("OpenAI", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
             "anthropic": ("Anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}


def _provider(exc: BaseException) -> tuple[str, str, str]:
    module = type(exc).__module__.split(".")[0]
    return _SETTINGS.get(module, (module, "the provider's API key variable", "the provider's base URL"))


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and those it was raised from or during (an SDK wraps the socket's error)."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen and len(seen) < 20:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return seen


def unavailable(exc: BaseException, *, message: str | None = None,
                base_url: str | None = None) -> JudgeUnavailableError | None:
    """The :class:`JudgeUnavailableError` a provider's failure is when no retry can mend it, else
    None. HTTP 401 (the key), 403 (permission), 404 (an unknown model or a wrong base URL), a 429
    that says the quota is spent, a refused connection and a name that does not resolve; the
    provider's own words are kept, and the fix names the variable or URL to check."""
    name, key_var, url_var = _provider(exc)
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    said = message or redact(f"{name}: {exc}")[:300]
    url = base_url or str(getattr(getattr(exc, "request", None), "url", "") or "") or None
    if status == 401:
        return JudgeUnavailableError(said, fix=f"the API key was refused: set {key_var} to a valid key")
    if status == 403:
        return JudgeUnavailableError(said, fix=f"the key may not use this model or endpoint: check {key_var} "
                                               "and the model's access")
    if status == 404:
        return JudgeUnavailableError(said, fix=f"check the model name in --judge / LANGRAG_JUDGE and {url_var}"
                                               + (f" (now {redact(url)})" if url else ""))
    if status == 429 and "quota" in str(getattr(exc, "body", "") or exc).lower():
        return JudgeUnavailableError(said, fix="the account's quota is spent: check its plan and billing")
    if status is not None:
        return None
    for link in _chain(exc):
        where = f"check {url_var}" + (f" (now {redact(url)})" if url else "") + " and that the server is running"
        if isinstance(link, ConnectionRefusedError) or getattr(link, "errno", None) == errno.ECONNREFUSED \
                or "connection refused" in str(link).lower():
            return JudgeUnavailableError(f"{name}: connection refused" + (f" by {redact(url)}" if url else ""),
                                         fix=where)
        if isinstance(link, socket.gaierror) or any(s in str(link).lower() for s in (
                "name or service not known", "nodename nor servname", "temporary failure in name resolution",
                "name resolution")):
            return JudgeUnavailableError(f"{name}: the server's name does not resolve: {redact(str(link))[:200]}",
                                         fix=where)
    return None


def classify(exc: BaseException) -> ModelCallError | JudgeUnavailableError:
    """Map any exception from a model call to a ModelCallError kind (by type, status code, name),
    or to :class:`JudgeUnavailableError` when no retry can mend it (see :func:`unavailable`)."""
    if isinstance(exc, JudgeUnavailableError):
        return exc
    if isinstance(exc, ModelCallError):
        if exc.args:  # its message reaches the call log and Unscored reasons
            exc.args = (redact(str(exc)),)
        return exc
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return ModelTimeoutError(f"timed out: {type(exc).__name__}")
    if (fatal := unavailable(exc)) is not None:
        return fatal
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    name = type(exc).__name__.lower()
    message = redact(f"{type(exc).__name__}: {exc}")[:300]
    if status == 429 or "ratelimit" in name or "rate_limit" in name:
        retry_after = getattr(exc, "retry_after", None)
        return RateLimitError(message, retry_after=retry_after if isinstance(retry_after, (int, float)) else None)
    if "timeout" in name:
        return ModelTimeoutError(message)
    if status in _TRANSIENT_STATUS or isinstance(exc, ConnectionError) or "connection" in name:
        return TransientModelError(message)
    return ModelCallError(message)


async def call_with_retry(fn: Callable[[], Awaitable[T]], policy: RetryPolicy,
                          rng: random.Random, before_retry: Callable[[], None] | None = None) -> tuple[T, int]:
    """Call ``fn`` until it succeeds or the policy gives up. Returns (result, attempts made);
    raises the last classified :class:`ModelCallError` when out of attempts or not retryable.
    ``before_retry`` runs right before every attempt after the first, outside the classification:
    what it raises (a lost lease, say) stops the call as it is, so a process paused in a back-off
    never sends again."""
    attempt = 0
    while True:
        attempt += 1
        if before_retry is not None and attempt > 1:
            before_retry()
        try:
            if policy.timeout is None:
                return await fn(), attempt
            if _timeout is not None:  # Python 3.11+: no extra task per attempt, unlike wait_for
                async with _timeout(policy.timeout):
                    return await fn(), attempt
            return await asyncio.wait_for(fn(), policy.timeout), attempt
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is classified, none is swallowed
            error = classify(exc)
            if not error.retryable or attempt >= policy.max_attempts:
                error.attempts = attempt  # type: ignore[attr-defined]
                raise error from exc
            await asyncio.sleep(policy.delay(attempt - 1, rng, getattr(error, "retry_after", None)))
