"""Running OpenSearch *plans* on a sync or an async client, and turning client errors into
:class:`~langrag_eval.errors.RetrievalError` messages that say what to fix.

A plan is a generator that yields :class:`Call` objects and receives each call's reply, or has the
call's client exception thrown into it (so it can recover, e.g. fall back when a feature is
missing). The logic of an operation is written once; :func:`drive_sync` and :func:`drive_async`
only execute calls.

>>> def plan():
...     reply = yield Call("info", {}, "read the version")
...     return reply["version"]["number"]
>>> class Client:
...     def info(self):
...         return {"version": {"number": "3.1.0"}}
>>> drive_sync(plan(), lambda call: method(Client(), call.api)(**call.kwargs), lambda e, c: None)
'3.1.0'
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from ..errors import ConfigError, RetrievalError
from .opensearch_requests import error_summary

__all__ = [
    "Call",
    "LoopThread",
    "Plan",
    "Secret",
    "drive_async",
    "drive_sync",
    "error_object",
    "is_client_error",
    "method",
    "resolve_credentials",
    "split_credentials",
    "to_retrieval_error",
]

T = TypeVar("T")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Call:
    """One client call: ``api`` is the dotted method (``indices.create``), ``kwargs`` its keyword
    arguments (opensearch-py 3 methods are keyword-only), ``what`` a phrase for error messages."""

    api: str
    kwargs: dict[str, Any]
    what: str


Plan = Generator[Call, Any, T]
ErrorMapper = Callable[[Exception, "Call | None"], RetrievalError]


class Secret:
    """Keeps a password out of ``repr``/``vars`` dumps.

    >>> Secret("hunter2")
    <hidden>
    """

    def __init__(self, value: str | None) -> None:
        self._value = value

    def get(self) -> str | None:
        return self._value

    def __repr__(self) -> str:
        return "<hidden>"


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """Take ``user:password@`` out of a URL: credentials go to the client as basic auth, so the URL
    that appears in logs and errors never carries them.

    >>> split_credentials("https://admin:s%40cret@search.example:9200/")
    ('https://search.example:9200/', 'admin', 's@cret')
    """
    shape = "OpenSearch URL must look like https://host:9200 (http or https, with a host)"
    try:  # urllib raises ValueError for a bad IPv6 literal or an out-of-range port
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{shape}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise ConfigError(shape)
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")), user, password


def resolve_credentials(url: str | None, user: str | None, password: str | None, *,
                        injected: bool = False) -> tuple[str, str | None, str | None]:
    """URL, user and password from the arguments, else from the URL's userinfo, else from
    ``OPENSEARCH_URL`` / ``OPENSEARCH_USER`` / ``OPENSEARCH_PASSWORD``."""
    raw_url = url or os.environ.get("OPENSEARCH_URL")
    if not raw_url:
        if injected:
            return "(the given client)", user, password
        raise ConfigError("no OpenSearch URL: pass url=... (--url) or set OPENSEARCH_URL")
    clean, url_user, url_password = split_credentials(raw_url)
    user = user or url_user or os.environ.get("OPENSEARCH_USER")
    password = password or url_password or os.environ.get("OPENSEARCH_PASSWORD")
    if user and password is None:
        raise ConfigError("an OpenSearch user was given without a password: pass password=... "
                          "or set OPENSEARCH_PASSWORD")
    return clean, user, password


class LoopThread:
    """A private event loop on a daemon thread. The async client lives there (``resource``), so its
    connection pool is never used from a loop it was not created in (each ``asyncio.run`` makes a
    new loop); :meth:`stop` closes it on that loop."""

    def __init__(self) -> None:
        self.resource: Any = None  # an object with an async close(), owned by this loop
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="langrag-opensearch",
                                       daemon=True)
        self.thread.start()

    async def run(self, coro: Awaitable[T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))  # type: ignore

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        if self.resource is not None:
            try:
                asyncio.run_coroutine_threadsafe(self.resource.close(), self.loop).result(timeout=10)
            except Exception as exc:  # noqa: BLE001 - closing a pool must never mask the caller's error
                logger.debug("closing the async OpenSearch client failed: %s", type(exc).__name__)
            self.resource = None
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.loop.is_running():
            self.loop.close()


def method(client: Any, api: str) -> Any:
    """``method(client, "indices.create")`` -> ``client.indices.create``."""
    target = client
    for part in api.split("."):
        target = getattr(target, part)
    return target


def is_client_error(exc: BaseException) -> bool:
    """An exception raised by opensearch-py (transport, HTTP status, configuration)."""
    return type(exc).__module__.startswith("opensearchpy")


def drive_sync(plan: Plan[T], execute: Callable[[Call], Any], to_error: ErrorMapper) -> T:
    """Run a plan, executing each call with ``execute``; client errors the plan does not handle
    become ``to_error(exc, call)``."""
    reply: Any = None
    error: Exception | None = None
    call: Call | None = None
    try:
        while True:
            call = plan.send(reply) if error is None else plan.throw(error)
            reply, error = None, None
            try:
                reply = execute(call)
            except Exception as exc:
                if not is_client_error(exc):
                    raise
                error = exc
    except StopIteration as stop:
        return stop.value
    except Exception as exc:
        if is_client_error(exc):
            raise to_error(exc, call) from exc
        raise


async def drive_async(plan: Plan[T], execute: Callable[[Call], Awaitable[Any]], to_error: ErrorMapper) -> T:
    """:func:`drive_sync` with an awaitable ``execute``; the same plans run unchanged."""
    reply: Any = None
    error: Exception | None = None
    call: Call | None = None
    try:
        while True:
            call = plan.send(reply) if error is None else plan.throw(error)
            reply, error = None, None
            try:
                reply = await execute(call)
            except Exception as exc:
                if not is_client_error(exc):
                    raise
                error = exc
    except StopIteration as stop:
        return stop.value
    except Exception as exc:
        if is_client_error(exc):
            raise to_error(exc, call) from exc
        raise


def error_object(exc: Exception) -> Any:
    """The ``error`` object of an HTTP error reply (a dict or a string)."""
    info = getattr(exc, "info", None)
    if isinstance(info, dict):
        return info.get("error", info)
    return getattr(exc, "error", None) or str(exc)


def _cause(exc: Exception) -> str:
    text = str(getattr(exc, "error", "") or exc).lower()
    for marker in ("connection refused", "name or service not known", "timed out", "no route to host",
                   "temporary failure in name resolution", "cannot connect", "connection reset"):
        if marker in text:
            return marker
    return type(exc).__name__


def to_retrieval_error(exc: Exception, call: Call | None, *, url: str, index: str) -> RetrievalError:
    """A client exception -> a RetrievalError saying what to fix. ``url`` carries no credentials,
    and the client's own text is never copied whole (it may name request details)."""
    what = call.what if call else "talk to OpenSearch"
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    if name == "SSLError" or "certificate verify failed" in str(exc).lower():  # aiohttp: ConnectionError
        return RetrievalError(f"TLS handshake with {url} failed while trying to {what}: pass ca_certs= "
                              f"(--ca-certs, the cluster's CA bundle), or verify_certs=False for a test "
                              f"cluster only")
    if name in ("ConnectionError", "ConnectionTimeout") or status == "N/A":
        return RetrievalError(f"cannot reach OpenSearch at {url} ({_cause(exc)}): check the URL "
                              f"(--url / OPENSEARCH_URL), that the cluster is running and its port is open")
    if status == 401:
        return RetrievalError(f"OpenSearch at {url} refused the credentials (HTTP 401): set "
                              f"OPENSEARCH_USER and OPENSEARCH_PASSWORD, or pass user=/password=")
    if status == 403:
        return RetrievalError(f"the OpenSearch user is not allowed to {what} on index {index!r} "
                              f"(HTTP 403): grant its role access to the index, or use another user")
    error = error_object(exc)
    if status == 404 and isinstance(error, dict) and error.get("type") == "index_not_found_exception":
        return RetrievalError(f"index {index!r} does not exist at {url}: index documents first "
                              f"(langrag-eval index ... --index {index}) or check the index name")
    if name == "ImproperlyConfigured":
        return RetrievalError(f"OpenSearch client setup failed: {exc}")
    return RetrievalError(f"OpenSearch could not {what} (HTTP {status}): {error_summary(error)}")
