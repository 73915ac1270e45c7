"""OpenAI chat completions through the official ``openai`` SDK (extra ``openai``): ``--judge openai:gpt-4o``.

One request per call, ``POST /v1/chat/completions`` with the prompt as the user message and the
call's temperature, max tokens and seed: the same body as a line of the Batch API
(:mod:`langrag_eval.models.openai_batch`) and the same model id, so every setting is part of the
cache key there and here, and a judgment bought through either is a cache hit for the other.

The client reads ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` as the SDK does (or takes ``api_key`` /
``base_url``) and keeps the SDK's own retries of rate limits and server errors; what is left after
them reaches the judge runtime as the package's errors (a rate limit, a transient failure, a
timeout, or a refusal that retrying cannot mend), recorded per item. A reply the token budget cut
(``finish_reason`` ``length``) is a :class:`TruncatedReplyError` carrying what came: never read as a
verdict (``Unscored`` with cause ``truncated``), and the capped answer a generator asked for with
its token budget.

>>> model = OpenAIChatModel("gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
>>> model.model_id, model.body("Grade this.", GenerationParams(seed=3))["seed"]
('openai:gpt-4o-mini', 3)
"""

from __future__ import annotations

import asyncio
import functools
import threading
import weakref
from typing import Any, AsyncIterator

from ..errors import (
    ConfigError, ModelCallError, ModelTimeoutError, RateLimitError, TransientModelError,
    TruncatedReplyError,
)
from ..model import GenerationParams, Reply, TokenUsage, estimate_tokens
from ..runtime.retry import unavailable

__all__ = ["OpenAIChatModel", "resolve"]

_INSTALL = "the openai judge needs the extra: pip install 'langrag-eval[openai]'"
# the SDK's own keep-alive pool: ample for the judge's default concurrency of 16
DEFAULT_CONNECTIONS = 100


def _sdk() -> Any:
    try:
        import openai
    except ImportError:
        raise ConfigError(_INSTALL) from None
    return openai


class OpenAIChatModel:
    """A chat model of OpenAI's API (or any server that speaks it) as a judge: ``gpt-4o-mini`` has the
    judge id ``openai:gpt-4o-mini``.

    ``connections``: the most connections the client keeps open; the judge's limiter bounds the calls
    in flight, so a pool at least its concurrency never makes a call wait for a connection.
    ``max_retries``: the SDK's retries of rate limits, timeouts and server errors (its default, 2),
    before the judge runtime's own retry policy. ``timeout``: seconds per request (None: the SDK's).
    ``http``: the SDK's HTTP transport, ``aiohttp`` (its ``DefaultAioHttpClient``, with the SDK's
    ``aiohttp`` extra), ``httpx`` (its default), or ``auto``: aiohttp where installed, as it spends
    about half the CPU per request.

    One client per event loop: a client's connections belong to the loop that opened them, and sync
    entry points run each call on a loop of their own. Each is closed when its loop shuts down."""

    constrained = False  # the reply is text the runtime parses: no schema in the request or the key

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 connections: int = DEFAULT_CONNECTIONS, max_retries: int = 2,
                 timeout: float | None = None, http: str = "auto") -> None:
        if not model.strip():
            raise ConfigError("expected openai:<model>, e.g. openai:gpt-4o")
        if http not in ("auto", "aiohttp", "httpx"):
            raise ConfigError(f"http must be auto, aiohttp or httpx, not {http!r}")
        self.model, self.model_id = model, f"openai:{model}"
        self._settings = {"base_url": base_url, "api_key": api_key, "connections": connections,
                          "max_retries": max_retries, "timeout": timeout, "http": http}
        self._sdk = _sdk()
        self._lock = threading.Lock()
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self.transport = ""  # "aiohttp" or "httpx", once the first client is built (just below)
        self._spare: Any = self._new_client()  # built now: a missing key is an error at once, not per call

    def __getstate__(self) -> dict[str, Any]:
        # what travels to another process (a Ray actor): the settings; it builds its own clients
        return {"model": self.model, "settings": self._settings}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["model"], **state["settings"])  # type: ignore[misc]

    def _http_client(self) -> Any:
        """The SDK's own HTTP client (its timeouts, redirects and proxies) with the pool sized here."""
        from openai._constants import DEFAULT_CONNECTION_LIMITS  # the SDK's httpx (or httpx2) Limits

        openai, s = self._sdk, self._settings
        limits = type(DEFAULT_CONNECTION_LIMITS)(max_connections=s["connections"],
                                                 max_keepalive_connections=s["connections"])
        aiohttp_client = getattr(openai, "DefaultAioHttpClient", None)  # openai 1.86 and later
        if s["http"] != "httpx" and aiohttp_client is not None:
            try:
                client, self.transport = aiohttp_client(limits=limits), "aiohttp"
                return _cookies_read_when_set(client)
            except RuntimeError:  # what the SDK raises without its aiohttp extra
                pass
        if s["http"] == "aiohttp":
            raise ConfigError("http='aiohttp' needs the SDK's extra: pip install 'openai[aiohttp]>=1.86'")
        self.transport = "httpx"
        return _cookies_read_when_set(openai.DefaultAsyncHttpxClient(limits=limits))

    def _new_client(self) -> Any:
        openai, s = self._sdk, self._settings
        extra = {"timeout": s["timeout"]} if s["timeout"] is not None else {}
        try:
            return openai.AsyncOpenAI(base_url=s["base_url"], api_key=s["api_key"], max_retries=s["max_retries"],
                                      http_client=self._http_client(), **extra)
        except openai.OpenAIError as exc:  # no key: one line, not the SDK's paragraph
            raise ConfigError(f"cannot create judge {self.model_id!r}: {' '.join(str(exc).split())}") from None

    async def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is not None:
            return entry[0]
        with self._lock:  # the spare client is taken once, whichever thread comes first
            client, self._spare = self._spare or self._new_client(), None
            closer = _closed_with_loop(client)
            self._clients[loop] = (client, closer)
        await closer.__anext__()  # no await before this line: no other task on this loop made one too
        return client

    def body(self, prompt: str, params: GenerationParams) -> dict[str, Any]:
        """The request: the same fields as a Batch API line's body (model, message, settings)."""
        body: dict[str, Any] = {"model": self.model, "temperature": params.temperature,
                                "messages": [{"role": "user", "content": prompt}]}
        if params.max_tokens is not None:
            body["max_tokens"] = params.max_tokens
        if params.seed is not None:
            body["seed"] = params.seed
        return body

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        openai = self._sdk
        client = await self._client()
        try:
            # The SDK's request (auth, headers, retries, errors) with the JSON as it came: its typed
            # ``chat.completions.create`` walks the request's type hints and builds a model of the
            # reply, a third of the SDK's CPU per call, for the one string read here.
            completion = await client.post("/chat/completions", body=self.body(prompt, params), cast_to=object)
        except openai.APIStatusError as exc:
            raise _status_error(exc, str(client.base_url)) from None
        except openai.APIConnectionError as exc:
            # Refused or unresolvable: no retry reaches it (the run stops). Looked for first: the
            # SDK's aiohttp transport reports a refused connection as a connect *timeout*.
            if (fatal := unavailable(exc, base_url=str(client.base_url))) is not None:
                raise fatal from None
            if isinstance(exc, openai.APITimeoutError):
                raise ModelTimeoutError("OpenAI: the request timed out") from None
            raise TransientModelError(f"OpenAI: connection failed: {exc.__cause__ or exc}") from None
        return _reply(completion, prompt, params)


def _cookies_read_when_set(client: Any) -> Any:
    """``client`` (an ``httpx`` client, the SDK's) with a cookie jar that reads a response only when
    it sets a cookie. The client's jar builds two ``urllib`` stand-ins for every response to look
    for ``Set-Cookie`` headers, an eighth of the SDK's CPU a call with ``httpx`` 0.28 (the SDK's
    before 3.0; ``httpx2`` looks first itself); a response without one leaves the jar as it was
    either way, and one with one (a load balancer's, say) is read as before. A client whose jar is
    not where this looks is returned as it came."""
    jar = getattr(client, "_cookies", None)
    if jar is not None and callable(getattr(jar, "extract_cookies", None)):
        client._cookies = _jar_class(type(jar))(jar)
    return client


@functools.lru_cache(maxsize=4)
def _jar_class(base: type) -> type:
    class SetCookiesOnly(base):  # type: ignore[misc,valid-type]
        def extract_cookies(self, response: Any) -> None:
            headers = response.headers
            if "set-cookie" in headers or "set-cookie2" in headers:
                super().extract_cookies(response)

    return SetCookiesOnly


async def _closed_with_loop(client: Any) -> AsyncIterator[None]:
    """Started once on the loop a client serves: the loop's shutdown (``asyncio.run`` closes the
    async generators it started) closes the client there, before the loop is gone. Left to the
    garbage collector, the SDK would close it on whatever loop runs then, and fail."""
    try:
        yield
    finally:
        await client.close()


def _status_error(exc: Any, base_url: str | None = None) -> Exception:
    """The SDK's HTTP error (what is left after its retries) as the package's error kind: a
    :class:`~langrag_eval.errors.JudgeUnavailableError` when no retry can mend it (a refused key,
    an unknown model)."""
    status, body = exc.status_code, exc.body
    detail = body.get("message") if isinstance(body, dict) and body.get("message") else exc.message
    message = f"OpenAI HTTP {status}: {detail}"[:400]
    if (fatal := unavailable(exc, message=message, base_url=base_url)) is not None:
        return fatal
    if status == 429:
        after = exc.response.headers.get("retry-after")
        try:
            return RateLimitError(message, retry_after=float(after) if after else None)
        except ValueError:  # an HTTP date: the policy's own back-off
            return RateLimitError(message)
    if status in (408, 409) or status >= 500:
        return TransientModelError(message)
    return ModelCallError(message)  # a refused request (400, 401, 404 ...): the same again fails again


def _reply(completion: Any, prompt: str, params: GenerationParams) -> Reply:
    """The reply text and usage of a chat completion's JSON (a dict; the text of a body that was not
    JSON), or the error that says what is wrong with it."""
    try:
        choice = completion["choices"][0]
        message, finish = choice["message"], choice.get("finish_reason")
        text = message.get("content")
    except (AttributeError, IndexError, TypeError, KeyError):
        raise ModelCallError(f"OpenAI: a response without a message: {str(completion)[:300]}") from None
    if not isinstance(text, str):
        refusal = message.get("refusal")
        raise ModelCallError(f"OpenAI: no reply text (finish_reason {finish!r}"
                             + (f", refusal: {refusal}" if refusal else "") + ")")
    if finish not in ("stop", "length", None):  # content_filter and the like: not the whole reply
        raise ModelCallError(f"OpenAI: the reply ended with finish_reason {finish!r}")
    usage = completion.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    reply = Reply(text=text, usage=TokenUsage(
        prompt_tokens=_count(usage.get("prompt_tokens")) or estimate_tokens(prompt),
        completion_tokens=_count(usage.get("completion_tokens")) or estimate_tokens(text)))
    if finish == "length":
        budget = f"{params.max_tokens} tokens" if params.max_tokens else "the model's token limit"
        raise TruncatedReplyError(f"the reply used its whole budget of {budget} before it ended "
                                  f"({len(text)} characters written)", reply=reply)
    return reply


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def resolve(arg: str) -> OpenAIChatModel:
    """Entry point for ``openai:<model>``."""
    return OpenAIChatModel(arg)
