"""Retries with exponential backoff and full jitter, a per-call timeout, and an attempt cap.

Foreign exceptions (provider SDKs, httpx, asyncio) are mapped onto the package's
:class:`ModelCallError` kinds by :func:`classify`, so the policy knows what is worth retrying.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Awaitable, Callable, TypeVar

from ..errors import ModelCallError, ModelTimeoutError, RateLimitError, TransientModelError, redact

__all__ = ["RetryPolicy", "classify", "call_with_retry"]

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


def classify(exc: BaseException) -> ModelCallError:
    """Map any exception from a model call to a ModelCallError kind (by type, status code, name)."""
    if isinstance(exc, ModelCallError):
        if exc.args:  # its message reaches the call log and Unscored reasons
            exc.args = (redact(str(exc)),)
        return exc
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return ModelTimeoutError(f"timed out: {type(exc).__name__}")
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
