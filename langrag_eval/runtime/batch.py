"""Resumable batches: each item's result is stored under (run, item key, task) as soon as it is
done, with a fingerprint of the item's content; a restarted batch reads finished items back instead
of judging them again, but only while their content is unchanged: an item whose content changed
under the same key is judged again (a judgment is never reused for other content). An item that
ended Unscored because the provider was unavailable (rate limit, timeout, transient error) is not
finished: a restarted batch tries it again. Unparseable replies and invalid input stay as recorded.

An exception raised while evaluating one item is that item's failure, not the batch's: it becomes
the item's ``Unscored`` with cause ``evaluator_error`` (the exception's type and message in the
reason), the other items go on, and a restarted batch tries it again (the error was a fault of the
code, perhaps fixed since, not a judgment). Configuration errors (:class:`ConfigError`,
:class:`PromptError`) still raise: every item would fail the same way.

>>> import asyncio
>>> from pydantic import BaseModel
>>> class Length(BaseModel):
...     n: int
>>> async def measure(text): return Length(n=len(text))
>>> asyncio.run(run_batch(["ab", "abc"], measure, key=str, task="len", result_type=Length))[1].n
3
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Any, Awaitable, Callable, Sequence, TypeVar, Union

from pydantic import BaseModel, TypeAdapter

from ..errors import ConfigError, JudgeUnavailableError, ModelCallError, PromptError
from ..results import Score, Unscored
from .concurrency import gather_bounded
from .identity import content_hash
from .lease import ClaimLostError, fenced_by, owner_id
from .otel import evaluation_spans
from .progress import BatchProgress
from .store import RunStore

__all__ = ["run_batch", "RETRY_ON_RESUME", "BatchCounts", "guarded", "judgment_payload"]

RETRY_ON_RESUME = frozenset({"rate_limit", "timeout", "transient", "evaluator_error"})
# Errors of the set-up, not of one item: every item would raise them, so the batch stops. A judge
# that cannot be reached or refuses the key is one: the batch stops before it pays for another call.
_CONFIGURATION_ERRORS = (ConfigError, PromptError, JudgeUnavailableError)

X = TypeVar("X")
R = TypeVar("R", bound=BaseModel)


@dataclass
class BatchCounts:
    """What a batch did: finished judgments reused, items judged, and of those, how many were
    judged again because their content changed since their stored judgment was made."""

    reused: int = 0
    judged: int = 0
    changed: int = 0

    def add(self, other: "BatchCounts") -> None:
        self.reused += other.reused
        self.judged += other.judged
        self.changed += other.changed

    def describe(self) -> str:
        text = f"reused {self.reused} finished judgment(s), judged {self.judged}"
        return text + (f" ({self.changed} of them because their content changed)" if self.changed else "")


def guarded(evaluate: Callable[[X], Awaitable[R | Unscored]]) -> Callable[[X], Awaitable[R | Unscored]]:
    """``evaluate`` with an exception on one item turned into that item's ``Unscored``: cause
    ``evaluator_error`` with the exception's type and message, or the cause a failed model call
    carries. Configuration errors and cancellation still propagate.

    >>> import asyncio
    >>> async def lookup(key): return {"a": 1}[key]
    >>> asyncio.run(guarded(lookup)("b")).reason
    "evaluator raised KeyError: 'b'"
    """

    async def one(item: X) -> R | Unscored:
        try:
            return await evaluate(item)
        except _CONFIGURATION_ERRORS:
            raise
        except ModelCallError as exc:
            return Unscored(reason=f"model call failed: {exc}", cause=exc.cause)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - the boundary: one item's failure is data
            message = str(exc)
            reason = f"evaluator raised {type(exc).__name__}" + (f": {message}" if message else "")
            return Unscored(reason=reason, cause="evaluator_error")

    return one


def judgment_payload(result: BaseModel, scores: Callable[[Any], Sequence[Score]] | None = None, *,
                     codec: TypeAdapter | None = None) -> Any:
    """What the run store holds for one judgment: the result (or ``Unscored``) as JSON, with the
    typed ``scores`` of it under ``"scores"`` when an evaluator's ``scores`` is given.

    >>> judgment_payload(Unscored(reason="empty", cause="invalid_input"))["cause"]
    'invalid_input'
    """
    data = codec.dump_python(result, mode="json") if codec is not None else result.model_dump(mode="json")
    if scores is not None and isinstance(data, dict):
        data["scores"] = [s.model_dump(mode="json") for s in scores(result)]
    return data


async def run_batch(items: Sequence[X], evaluate: Callable[[X], Awaitable[R | Unscored]], *,
                    key: Callable[[X], str], task: str, result_type: type[R],
                    store: RunStore | None = None, run_id: str | None = None, concurrency: int = 16,
                    description: str | None = None,
                    fingerprint: Callable[[X], Any] | None = None,
                    progress: bool | None = None,
                    scores: Callable[[Any], Sequence[Score]] | None = None) -> list[R | Unscored]:
    """Evaluate every item once per run. ``evaluate`` returns a result or Unscored; an exception it
    raises on one item becomes that item's ``Unscored`` (see :func:`guarded`).

    ``fingerprint(item)`` gives what the item's judgment depends on (default: the item itself);
    pass it when the item is only a reference to content held elsewhere (ids of a game, say).
    ``progress`` draws a progress bar on a terminal; by default only inside
    :func:`~langrag_eval.runtime.progress.show_progress` (the command line), never in a library call.
    ``scores(result)`` (an evaluator's :meth:`~langrag_eval.evaluator.Evaluator.scores`) is stored
    with each judgment under ``"scores"``, so that compare, the gate and the report read any
    capability's judgments by score name.
    """
    codec: TypeAdapter[R | Unscored] = TypeAdapter(Union[Unscored, result_type])  # type: ignore[arg-type]

    def payload(result: R | Unscored) -> Any:
        return judgment_payload(result, scores, codec=codec)

    # each item an OpenTelemetry span when the process set a tracer provider (see .otel), else as it is
    evaluate = evaluation_spans(guarded(evaluate), task=task, key=key, run_id=run_id, scores=scores)
    resumable = store is not None and run_id is not None
    counts = BatchCounts()
    # The stored judgments of the batch's items, read in a few queries instead of one per item; only
    # when the keys are unique (with a key repeated, its second item may reuse the first's judgment
    # made during the batch) and one writer holds the run (a cooperative store judges below).
    keys = [key(item) for item in items] if resumable else []   # each item's key, made once
    unique = len(set(keys)) == len(keys)
    known: dict[str, tuple[Any, str | None]] | None = None
    if resumable and unique and not getattr(store, "cooperative", False):
        known = store.judgment_records(run_id, task, keys)  # type: ignore[union-attr,arg-type]

    async def one(index: int) -> R | Unscored:
        item = items[index]
        item_key = keys[index] if resumable else ""
        digest = content_hash(fingerprint(item) if fingerprint is not None else item) if resumable else None
        if resumable:
            record = (known.get(item_key) if known is not None else
                      store.get_judgment_record(run_id, item_key, task))  # type: ignore[union-attr,arg-type]
            if record is not None:
                done, stored = record
                if stored != digest:
                    counts.changed += 1  # other content, or a store from before fingerprints
                elif not (isinstance(done, dict) and done.get("scored") is False
                          and done.get("cause") in RETRY_ON_RESUME):
                    counts.reused += 1
                    return codec.validate_python(done)
        result = await evaluate(item)
        counts.judged += 1
        if resumable:  # committed before this worker takes its next item
            await store.aput_judgment(run_id, item_key, task, payload(result),  # type: ignore[union-attr,arg-type]
                                      scored=not isinstance(result, Unscored), fingerprint=digest)
        return result

    if resumable and getattr(store, "cooperative", False):
        if unique:  # claims name items by key: they must be unique
            digests = [content_hash(fingerprint(i) if fingerprint is not None else i) for i in items]
            results = await _cooperate(items, evaluate, keys, digests, task=task, codec=codec, payload=payload,
                                       store=store, run_id=run_id, concurrency=concurrency, counts=counts,  # type: ignore[arg-type]
                                       description=description, progress=progress)
            store.count_batch(run_id, counts)  # type: ignore[union-attr,arg-type]
            return results
    with BatchProgress(description or task, len(items), show=progress) as bar:
        results = await gather_bounded(range(len(items)), one, concurrency=concurrency,
                                       on_done=lambda i, r: bar.advance())
    if resumable:
        store.count_batch(run_id, counts)  # type: ignore[union-attr,arg-type]
    return results


async def _cooperate(items: Sequence[X], evaluate: Callable[[X], Awaitable[R | Unscored]], keys: list[str],
                     digests: list[str], *, task: str, codec: TypeAdapter, payload: Callable[[Any], Any],
                     store: Any, run_id: str, concurrency: int,
                     counts: BatchCounts, description: str | None,
                     progress: bool | None) -> list[R | Unscored]:
    """The batch shared with other workers on a cooperative store: claim a slice of the items nobody
    has finished or holds, judge it, mark it done, claim again; wait while others hold the rest (a
    dead worker's claims expire and are taken over). Items that failed for a transient reason before
    this worker started are tried again; those failing while it runs are left for the next pass."""
    started = time.time()
    # A claim names the item by key and content; a retry of a failed judgment adds when that one was
    # made: the claim of the failed attempt is done, and a retry is a new claim every worker that
    # reads the same store computes alike.
    claim_name = [f"{k}\x1f{d}" for k, d in zip(keys, digests)]

    def name_claims(index: dict[str, tuple[str | None, bool, str | None, float]], indices: list[int]) -> None:
        for i in indices:
            record = index.get(keys[i])
            retry = record is not None and record[0] == digests[i] and not record[1]
            claim_name[i] = f"{keys[i]}\x1f{digests[i]}" + (f"\x1f{record[3]!r}" if retry else "")  # type: ignore[index]

    # Each worker walks the items from its own starting point, so workers rarely contend.
    order = list(range(len(items)))
    random.Random(owner_id()).shuffle(order)
    chunk = max(2 * concurrency, 8)
    queue: deque[int] = deque()
    refill = asyncio.Lock()
    mine: set[int] = set()

    def needs_judging(index: dict[str, tuple[str | None, bool, str | None, float]], i: int) -> bool:
        record = index.get(keys[i])
        return record is None or not finished(record, digests[i], started)

    # Every read names this batch's items: a streamed run's chunk reads its own rows, never the ones
    # of the chunks before it (reading the whole task each chunk made a run quadratic in its size).
    before = store.task_index(run_id, task, keys)  # read once: what is pending and what changed
    counts.changed += sum(1 for k, d in zip(keys, digests) if k in before and before[k][0] != d)
    pending: list[int] = [i for i in order if needs_judging(before, i)]
    name_claims(before, pending)
    del before
    cursor = [0]
    bar = BatchProgress(description or task, len(items), show=progress)
    shown = [0]

    def count_done(n: int) -> None:
        # every item once on the bar, whoever finished it: judged here, by another worker, or before
        if n > 0:
            shown[0] += n
            bar.advance(n)

    def claim_more() -> list[int] | None:
        # Walk the pending list a chunk at a time; a claim another worker holds or finished is
        # simply not returned. At the end of the list, look at the store again, at the items still
        # pending only (an item finished stays finished): done, or wait.
        if cursor[0] >= len(pending):
            left = [i for i in pending if i not in mine]
            index = store.task_index(run_id, task, [keys[i] for i in left])
            pending[:] = [i for i in left if needs_judging(index, i)]
            name_claims(index, pending)
            count_done(len(left) - len(pending))  # finished by other workers meanwhile
            cursor[0] = 0
            if not pending:
                return None
        while cursor[0] < len(pending):
            window = pending[cursor[0]:cursor[0] + chunk]
            cursor[0] += chunk
            by_name = {claim_name[i]: i for i in window}
            got = store.claim(run_id, task, list(by_name))
            if got:
                return [by_name[name] for name in got]
        return []  # the rest is held by live workers: wait for them (or for their claims to expire)

    async def next_index() -> int | None:
        while True:
            if queue:
                return queue.popleft()
            async with refill:
                if queue:
                    continue
                got = claim_more()
                if got is None:
                    return None
                if not got:
                    await asyncio.sleep(min(1.0, store.claim_ttl / 10))
                    continue
                mine.update(got)
                queue.extend(got)

    with bar:
        count_done(len(items) - len(pending))  # finished before this batch

        async def worker() -> None:
            while (i := await next_index()) is not None:
                if not store.hold_claim(run_id, task, claim_name[i]):
                    mine.discard(i)   # taken over while this worker was paused: the other one judges it
                    continue
                try:
                    with fenced_by(partial(_still_held, store, run_id, task, claim_name[i])):
                        result = await evaluate(items[i])
                except ClaimLostError:
                    mine.discard(i)   # taken over between two of its paid calls: likewise
                    continue
                counts.judged += 1
                store.put_judgment(run_id, keys[i], task, payload(result),
                                   scored=not isinstance(result, Unscored), fingerprint=digests[i],
                                   claim=claim_name[i])
                count_done(1)

        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
        count_done(len(items) - shown[0])  # the batch is over: the rest were taken over and finished
    counts.reused += len(items) - len(mine)
    stored = store.task_results(run_id, task, keys)
    return [codec.validate_python(stored[k]) if k in stored else
            Unscored(reason="no judgment was stored for this item", cause="transient") for k in keys]


def finished(record: tuple[str | None, bool, str | None, float], digest: str, started: float) -> bool:
    """Whether an item's stored record (``task_index``'s) finishes it for a cooperative batch that
    started at ``started``: made from the same content, and not a transient failure from before."""
    fingerprint, scored, cause, created = record
    return fingerprint == digest and (scored or cause not in RETRY_ON_RESUME or created >= started)


def _still_held(store: Any, run_id: str, task: str, claim: str) -> None:
    """The fence of one claimed item: checked right before each paid call made for it."""
    if not store.hold_claim(run_id, task, claim):
        raise ClaimLostError(f"run {run_id}: item {claim.split(chr(31))[0]!r} was taken over by another "
                             "worker while this one was paused; it leaves the item to that one")
