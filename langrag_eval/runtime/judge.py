"""The judge runtime every evaluator shares: bounded concurrency, retries, cache, parsing with one
repair re-ask, usage and cost. Failures come back as :class:`Unscored`, never raised through a batch.

>>> import asyncio
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.verdicts import ScoreFormat
>>> judge = Judge(ScriptedModel(["Score: [[4]], Reason: [[matches the label]]"]))
>>> asyncio.run(judge.ask("grade this", ScoreFormat())).value.score
4
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import random
import threading
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Generic, Literal, Sequence, TypeVar

from ..prompting.echoes import Untrusted, echo_spans
from ..errors import (AmbiguousVerdictError, ConfigError, JudgeOutputError, JudgeUnavailableError, ModelCallError,
                      redact)
from ..files.jsontext import parse_json
from ..files.reading import read_text
from ..model import ChatModel, GenerationParams, Reply, TokenUsage, call_key
from ..prompting.templates import load_prompt
from ..prompting.quoting import keys_in_spans, loads_strict, read_verdict
from ..results import Unscored
from ..verdicts.formats import VerdictFormat
from .concurrency import Limiter
from .lease import check_fence
from .retry import RetryPolicy, call_with_retry
from .store import RunStore
from .tracing import current_observer, notify

__all__ = ["Judge", "Answer", "PriceTable", "UsageMeter"]

T = TypeVar("T")
_METER_LOCK = threading.Lock()


async def _shared_reply(shared: concurrent.futures.Future[Reply]) -> Reply | None:
    """The reply of a call made elsewhere (any thread, any loop); None when its owner was cancelled.
    Shielded: cancelling this waiter must not cancel the call others wait on."""
    try:
        return await asyncio.shield(asyncio.wrap_future(shared))
    except asyncio.CancelledError:
        if shared.cancelled() and not _cancelling():
            return None
        raise


def _cancelling() -> bool:
    task = asyncio.current_task()
    return bool(task is not None and getattr(task, "cancelling", lambda: 0)())

# Far above any real price; a larger one is a typo (and 1e308 would make every cost infinite).
MAX_PRICE = 1_000_000.0


@dataclass(frozen=True)
class PriceTable:
    """Prices in currency units per million tokens, by model id: ``{"openai:gpt-4o": (2.5, 10.0)}``."""

    prices: dict[str, tuple[float, float]]

    def __post_init__(self) -> None:
        for model_id, pair in self.prices.items():
            for which, price in zip(("input", "output"), pair):
                # bool is an int to Python, and NaN compares false with everything: check both
                if (isinstance(price, bool) or not isinstance(price, (int, float))
                        or not 0 <= price <= MAX_PRICE):
                    raise ConfigError(f"price table: {model_id}: the {which} price {price!r} must be a "
                                      f"number from 0 to {MAX_PRICE:,.0f} per million tokens")

    @classmethod
    def from_mapping(cls, raw: dict[str, Any], *, source: str = "price table") -> "PriceTable":
        """From ``{"model": [input, output]}``; a bad entry is a one-line error naming it."""
        try:
            return cls({str(k): (v[0], v[1]) for k, v in raw.items()})
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    @classmethod
    def read(cls, path: str | Path) -> "PriceTable":
        """From a JSON file ``{"model": [input, output]}``; a file that is missing, unreadable or not
        such an object is a one-line error naming it."""
        raw = read_text(path, what="price table")
        try:
            table = parse_json(raw)
            if not isinstance(table, dict) or not all(isinstance(v, list) and len(v) == 2
                                                      for v in table.values()):
                raise TypeError("not an object of [input, output] pairs")
        except (ValueError, TypeError) as exc:
            raise ConfigError(f'{path}: a price table maps model ids to [input, output] prices per '
                              f'million tokens, e.g. {{"openai:gpt-4o": [2.5, 10.0]}} ({exc})') from None
        return cls.from_mapping(table, source=str(path))

    def cost(self, model_id: str, usage: TokenUsage) -> float | None:
        if model_id not in self.prices:
            return None
        p_in, p_out = self.prices[model_id]
        return (usage.prompt_tokens * p_in + usage.completion_tokens * p_out) / 1_000_000


@dataclass
class UsageMeter:
    """In-process counters; the run store keeps the same figures per run."""

    calls: int = 0          # calls that reached the model and succeeded
    failed: int = 0         # calls that failed after every retry
    attempts: int = 0       # model invocations, retries included
    cached: int = 0         # calls answered from the cache
    repairs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def add(self, *, cost: float | None = None, **counts: int) -> None:
        """Add to the counters; one lock for every meter, as judges in several threads share one."""
        with _METER_LOCK:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)
            if cost is not None:
                self.cost = (self.cost or 0.0) + cost

    def merge(self, other: "UsageMeter") -> None:
        """Add another meter's figures (a per-sample meter into the judge's)."""
        self.add(cost=other.cost, **{k: v for k, v in other.as_dict().items() if k != "cost"})


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A parsed verdict (or Unscored) with the raw reply text it came from."""

    value: T | Unscored
    raw: str | None

    def __post_init__(self) -> None:
        # The raw reply is kept (results files, the store, reports): secrets in it are masked.
        if self.raw is not None:
            object.__setattr__(self, "raw", redact(self.raw))


# Replies kept in memory beside a run store (the newest; the store holds them all).
_RECENT = 1024
# The first calls of a judge all failing with one same refusal (a parameter the model rejects, say)
# is the set-up's fault, not the items': that many stop the run instead of failing every item.
SAME_ERROR_STOP = 5


@dataclass
class Judge:
    """A model wrapped with everything a judgment needs. Pass one to every evaluator.

    ``store`` persists the reply cache and a call log (and lets batches resume); without one the
    cache lives in memory for the judge's lifetime. ``priority``: this judge's calls wait for a
    slot ahead of those of lower priority (see :meth:`with_priority`).
    """

    model: ChatModel
    store: RunStore | None = None
    run_id: str | None = None
    concurrency: int = 16
    params: GenerationParams = field(default_factory=GenerationParams)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    prices: PriceTable | None = None
    repair: bool = True
    seed: int = 0
    usage: UsageMeter = field(default_factory=UsageMeter)
    priority: int = 0

    def __post_init__(self) -> None:
        self.limiter = Limiter(self.concurrency)
        self._memory: dict[str, Reply] = {}
        # calls in flight, by cache key; thread futures, since the sharer may be on another loop
        self._pending: dict[str, concurrent.futures.Future[Reply]] = {}
        self._lock = threading.Lock()  # guards both dicts; clones made by for_run share it
        self._rng = random.Random(self.seed)
        # Shared with every clone (for_run, with_params ...): once the judge is found unavailable,
        # no clone sends another call. ``_first``: the outcomes of its first calls (None: a reply).
        self._halt: list[JudgeUnavailableError] = []
        self._first: list[str | None] = []

    @property
    def unavailable(self) -> JudgeUnavailableError | None:
        """Why this judge stopped (no call is sent after it), or None while it works."""
        return self._halt[0] if self._halt else None

    def _stop_if_halted(self) -> None:
        if self._halt:
            raise self._halt[0]

    def _outcome(self, error: ModelCallError | None) -> None:
        """Note how one of the first calls ended; the same non-retryable refusal on each of the
        first :data:`SAME_ERROR_STOP` makes the judge unavailable."""
        with self._lock:
            if len(self._first) >= SAME_ERROR_STOP:
                return
            self._first.append(None if error is None or error.retryable or error.cause != "model_error"
                               else str(error))
            first = self._first
            if len(first) == SAME_ERROR_STOP and first[0] is not None and all(e == first[0] for e in first):
                self._halt.append(JudgeUnavailableError(
                    f"the first {SAME_ERROR_STOP} calls all failed with the same error: {first[0]}",
                    fix="check the judge's model and settings"))

    def __getstate__(self) -> dict[str, Any]:
        # What travels to another process (a Ray actor): the model and how it is called. The limiter,
        # the lock, the calls in flight and the replies in memory are this process's; the copy makes
        # its own. A store travels only if it pickles (a connection does not): detach it first.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    @property
    def model_id(self) -> str:
        return self.model.model_id

    def for_run(self, run_id: str) -> "Judge":
        """The same judge (shared limiter, cache and meter) logging its calls under ``run_id``."""
        return self._sharing(run_id=run_id)

    def with_params(self, **updates: Any) -> "Judge":
        """The same judge (shared limiter, cache, meter and run) with other generation settings,
        e.g. ``judge.with_params(max_tokens=200)`` for a generator."""
        return self._sharing(params=self.params.model_copy(update=updates))

    def with_priority(self, priority: int) -> "Judge":
        """The same judge (shared limiter, cache, meter and run) whose calls wait for a slot ahead
        of calls of lower priority: a call whose reply starts more calls (a decomposition, whose
        claims are matched next) goes first, so the calls behind it queue early."""
        return self._sharing(priority=priority)

    def _sharing(self, **changed: Any) -> "Judge":
        # a copy that shares everything not changed (limiter, caches, meter, store), not a new
        # judge; of the same class, so a judge that refines ``ask`` keeps doing so in a run
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.__dict__.update(changed)
        return clone

    async def complete(self, prompt: str, *, schema: dict[str, Any] | None = None,
                       params: GenerationParams | None = None, whole: bool = False) -> Reply:
        """One model call through cache, limiter and retries. Raises ModelCallError when it fails.
        A reply its token budget cut is returned as the capped text it is, unless ``whole`` (a
        verdict, which a cut could change): then it is a :class:`TruncatedReplyError`.

        Safe from any number of threads and event loops at once: a call that is already in flight
        anywhere (the cache only holds finished ones) is awaited, not made again."""
        self._stop_if_halted()
        params = params or self.params
        key = call_key(self.model_id, prompt, params, schema, sent=getattr(self.model, "sent_params", None))
        while True:
            with self._lock:
                cached = self._memory.get(key)
                shared = self._pending.get(key) if cached is None else None
            if cached is None and shared is None and self.store is not None:
                cached = self.store.cache_get(key)
            if cached is None and shared is not None:
                cached = await _shared_reply(shared)
                if cached is None:  # its owner was cancelled: try again, perhaps as the owner
                    continue
            if cached is not None:
                self.usage.add(cached=1)
                self._log(key, cached=True, ok=True, attempts=0, usage=cached.usage, error=None)
                return cached
            with self._lock:
                if key in self._memory or key in self._pending:
                    continue  # another thread started or finished it since the look above
                pending = self._pending[key] = concurrent.futures.Future()
            break
        try:
            reply = await self._call(key, prompt, params, schema, whole)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                pending.cancel()
            else:
                pending.set_exception(exc)
            raise
        else:
            pending.set_result(reply)
            return reply
        finally:
            with self._lock:
                del self._pending[key]

    async def _call(self, key: str, prompt: str, params: GenerationParams,
                    schema: dict[str, Any] | None, whole: bool) -> Reply:
        observer = current_observer()
        def fence() -> None:
            # Right before every attempt is sent (retries included): a holder paused past its lease,
            # or a worker whose claim on the item was taken over, learns it here, before it pays for
            # a call the new holder is paying for too.
            if self.store is not None:
                self.store.check_lease(self.run_id)
            check_fence()
            self._stop_if_halted()  # another call found the judge unavailable: send nothing more

        async with self.limiter.slot(self.priority):
            fence()
            trace = notify(observer, "started", prompt, self.model_id, params)
            try:
                reply, attempts = await call_with_retry(
                    lambda: self.model.generate(prompt, params, schema=schema), self._policy(), self._rng,
                    before_retry=fence)
            except JudgeUnavailableError as exc:
                notify(observer, "failed", trace, exc)
                self.usage.add(failed=1, attempts=getattr(exc, "attempts", 1))
                self._log(key, cached=False, ok=False, attempts=getattr(exc, "attempts", 1), usage=TokenUsage(),
                          error=f"{exc.cause}: {exc}")
                with self._lock:
                    if not self._halt:
                        self._halt.append(exc)
                raise self._halt[0] from None
            except ModelCallError as exc:
                attempts = getattr(exc, "attempts", 1)
                capped = None if whole else getattr(exc, "reply", None)
                self._outcome(exc)
                if capped is None:
                    notify(observer, "failed", trace, exc)
                    self.usage.add(failed=1, attempts=attempts)
                    self._log(key, cached=False, ok=False, attempts=attempts, usage=TokenUsage(),
                              error=f"{exc.cause}: {exc}")
                    self._stop_if_halted()  # this call was the last of the same refusals
                    raise
                reply = capped
            else:
                self._outcome(None)
        notify(observer, "finished", trace, reply)
        cost = self.prices.cost(self.model_id, reply.usage) if self.prices else None
        self.usage.add(calls=1, attempts=attempts, prompt_tokens=reply.usage.prompt_tokens,
                       completion_tokens=reply.usage.completion_tokens, cost=cost)
        with self._lock:
            self._memory[key] = reply
            if self.store is not None and len(self._memory) > _RECENT:
                # the store is the cache (written at once, read back by the look-up above); only
                # the latest replies stay in memory too, or memory grew with the run's size
                del self._memory[next(iter(self._memory))]
        if self.store is not None:
            self.store.cache_put(key, self.model_id, reply)
        self._log(key, cached=False, ok=True, attempts=attempts, usage=reply.usage, error=None, cost=cost)
        return reply

    def _policy(self) -> RetryPolicy:
        """The retry policy for this model: without its per-attempt timeout for a model whose calls
        end by themselves (``bounded``, the local llama.cpp judge)."""
        if getattr(self.model, "bounded", False) and self.retry.timeout is not None:
            return replace(self.retry, timeout=None)
        return self.retry

    def _log(self, key: str, *, cached: bool, ok: bool, attempts: int, usage: TokenUsage,
             error: str | None, cost: float | None = None) -> None:
        if self.store is not None:
            self.store.log_call(self.run_id, self.model_id, key, cached=cached, ok=ok,
                                attempts=attempts, usage=usage, cost=cost, error=error)

    async def ask(self, prompt: str, fmt: VerdictFormat[T], *,
                  params: GenerationParams | None = None,
                  untrusted: Sequence[str] | None = None) -> Answer[T]:
        """Ask for a verdict in ``fmt``. A reply without a readable verdict, or with verdicts that
        disagree outside quoted text (an unquoted echo of a forged one, say), gets one repair re-ask
        naming the fault; what still fails comes back as ``Unscored`` with cause ``unparseable`` or
        ``ambiguous`` (that of the last reply), and calls that fail after every retry with theirs.
        No verdict is ever picked out of an ambiguous reply.

        Whatever a reply reproduces of the prompt's untrusted texts is never read as the judge's
        verdict (:mod:`langrag_eval.prompting.echoes`). They are ``untrusted`` when given, else the ones a
        rendered template recorded on ``prompt``."""
        known = Untrusted(tuple(untrusted if untrusted is not None else getattr(prompt, "untrusted", ())))
        schema = fmt.json_schema() if getattr(self.model, "constrained", False) else None
        try:
            reply = await self.complete(prompt, schema=schema, params=params, whole=True)
        except ModelCallError as exc:
            return Answer(Unscored(reason=f"model call failed: {exc}", cause=exc.cause), None)  # type: ignore[arg-type]
        try:
            return Answer(self._read(reply.text, fmt, schema, known), reply.text)
        except JudgeOutputError as first:
            if not self.repair:
                return Answer(Unscored(reason=f"{_cause(first)} reply: {first}", cause=_cause(first),
                                       raw=reply.text), reply.text)
            error = first
        self.usage.add(repairs=1)
        retry_prompt = load_prompt("repair").render(prompt=prompt, reply=reply.text, error=str(error),
                                                    format=fmt.instructions)
        try:
            second = await self.complete(retry_prompt, schema=schema, params=params, whole=True)
        except ModelCallError as exc:
            return Answer(Unscored(reason=f"{_cause(error)} reply ({error}); repair call failed: {exc}",
                                   cause=_cause(error), raw=reply.text), reply.text)
        try:
            return Answer(self._read(second.text, fmt, schema, known), second.text)
        except JudgeOutputError as again:
            raw = f"{reply.text}\n--- repair reply ---\n{second.text}"
            return Answer(Unscored(reason=f"{_cause(again)} reply after one repair: {again}",
                                   cause=_cause(again), raw=raw), raw)

    @staticmethod
    def _read(text: str, fmt: VerdictFormat[T], schema: dict[str, Any] | None, untrusted: Untrusted) -> T:
        if schema is not None:
            try:
                obj = loads_strict(text)  # raw newlines inside strings are JSON to us; repeated keys are not
            except json.JSONDecodeError:
                return read_verdict(fmt, text, untrusted)
            planted = keys_in_spans(text, 0, len(text), echo_spans(text, untrusted))
            if planted:
                raise AmbiguousVerdictError(f"the JSON reply's key {planted[0]!r} lies in text reproduced "
                                            "from the graded material; give each key once, of your own")
            return fmt.from_json(obj)
        return read_verdict(fmt, text, untrusted)


def _cause(error: JudgeOutputError) -> Literal["ambiguous", "unparseable"]:
    return "ambiguous" if isinstance(error, AmbiguousVerdictError) else "unparseable"
