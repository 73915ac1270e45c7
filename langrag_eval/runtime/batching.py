"""Judging through a provider's batch API (OpenAI Batch, Anthropic Message Batches): half the price,
replies within the provider's window (up to 24 hours) instead of seconds.

:class:`BatchModel` is a :class:`~langrag_eval.model.ChatModel` whose ``generate`` does not call
the provider: it registers the prompt and waits. Once no evaluator has asked anything new for
``settle`` seconds (every one of them is waiting on a reply), the prompts waiting are sent as one
batch, each line's ``custom_id`` being the call's cache key. Prompts answered from the cache, or
whose judgment is already stored, never reach ``generate`` (the :class:`~langrag_eval.runtime.Judge`
and the run layer answer them first), so they are never sent. Evaluators that ask in stages
(THELMA's decomposition, then its matching; a tournament's relevance, then its games) make one batch
per stage by themselves.

The batch is recorded in the run store before it is created and its id as soon as it exists
(:class:`~langrag_eval.runtime.batch_ledger.BatchLedger`): a command killed at any moment and run
again polls that batch instead of sending its prompts again. Replies are committed by ``custom_id``
(providers do not keep the input order) to the reply cache, then handed to the waiting evaluators;
lines that failed or expired are sent once more in a batch of their own, and a line failing twice
becomes the judge's ``Unscored`` with the provider's error.

>>> import asyncio
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.verdicts import ScoreFormat
>>> api = LocalBatchAPI(ScriptedModel(lambda p: "Score: [[4]], Reason: [[fine]]"))
>>> judge = batch_judge(BatchModel(api, settle=0.01, poll_interval=0.01))
>>> async def two(): return await asyncio.gather(judge.ask("a", ScoreFormat()), judge.ask("b", ScoreFormat()))
>>> [a.value.score for a in asyncio.run(two())], api.batches
([4, 4], 1)
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ..errors import ModelCallError
from ..model import ChatModel, GenerationParams, Reply, call_key
from .batch_ledger import BatchJob, BatchLedger
from .judge import Judge, PriceTable
from .retry import RetryPolicy, classify

__all__ = ["BatchRequest", "BatchLine", "BatchStatus", "BatchAPI", "BatchModel", "batch_judge",
           "batch_prices", "LocalBatchAPI", "BATCH_DISCOUNT"]

BATCH_DISCOUNT = 0.5  # both providers charge half their list price for batched requests


@dataclass(frozen=True)
class BatchRequest:
    """One line of a batch: the call's key as ``custom_id`` and what to ask."""

    custom_id: str
    prompt: str
    params: GenerationParams
    schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class BatchLine:
    """One line of a batch's output: a reply, or the provider's error for it."""

    custom_id: str
    reply: Reply | None = None
    error: str | None = None


def _by_id(found: list[BatchLine]) -> dict[str, BatchLine]:
    """The output lines by ``custom_id``. Two lines for one id that disagree leave no way to tell
    which is the reply asked for: the line counts as failed (asked again), never the last one read."""
    lines: dict[str, BatchLine] = {}
    for line in found:
        seen = lines.get(line.custom_id)
        if seen is None:
            lines[line.custom_id] = line
        elif seen != line:
            lines[line.custom_id] = BatchLine(line.custom_id, error="the batch output holds two different "
                                                                    "lines for it")
    return lines


@dataclass(frozen=True)
class BatchStatus:
    """A batch as the provider reports it; ``state`` is the provider's own word for it."""

    batch_id: str
    state: str
    ended: bool          # its output can be read (completed, expired, failed, cancelled, ended)
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    error: str | None = None  # the whole batch was refused (a malformed input file, say)

    def describe(self) -> str:
        return (f"batch {self.batch_id}: {self.state}, {self.succeeded + self.failed} of {self.total} done"
                + (f", {self.failed} failed" if self.failed else "") + (f" ({self.error})" if self.error else ""))


class BatchAPI(Protocol):
    """A provider's batch endpoint: what :class:`BatchModel` needs of it."""

    provider: str   # names the provider in the run store's batch records
    model_id: str   # the judge's model id (``openai:gpt-4o``): part of every cache key

    async def submit(self, requests: list[BatchRequest], *, tag: str) -> str:
        """Create a batch of ``requests``, labelled ``tag`` where the provider keeps labels; its id."""

    async def find(self, tag: str, since: float) -> str | None:
        """The id of a batch created with ``tag`` at or after ``since`` (epoch seconds), if any: the
        one created by a command killed before it could record the id."""

    async def status(self, batch_id: str) -> BatchStatus: ...

    async def results(self, batch_id: str) -> list[BatchLine]:
        """Every output line of an ended batch, in the provider's order."""


def batch_prices(prices: PriceTable | None, model_id: str) -> PriceTable | None:
    """The price table a batch judge bills with: the table's ``MODEL@batch`` entry when it has one,
    else half the model's list price.

    >>> batch_prices(PriceTable({"openai:gpt-4o": (2.5, 10.0)}), "openai:gpt-4o").prices["openai:gpt-4o"]
    (1.25, 5.0)
    """
    if prices is None:
        return None
    table = dict(prices.prices)
    if f"{model_id}@batch" in table:
        table[model_id] = table[f"{model_id}@batch"]
    elif model_id in table:
        table[model_id] = tuple(p * BATCH_DISCOUNT for p in table[model_id])  # type: ignore[assignment]
    return PriceTable(table)


class BatchModel:
    """A chat model answering through a provider's batch API (see the module's description).

    ``store``: the run store that records each batch (default: the judge's, see :func:`batch_judge`).
    ``settle``: seconds without a new prompt before the waiting ones are sent. ``poll_interval``:
    seconds between two looks at a batch. ``max_lines``: the most lines in one batch (OpenAI takes
    50,000). ``on_status``: called with one line whenever a batch changes state or counts.
    """

    constrained = False

    def __init__(self, api: BatchAPI, *, store: Any = None, run_id: str | None = None, settle: float = 0.5,
                 poll_interval: float = 30.0, max_lines: int = 50_000,
                 on_status: Callable[[str], None] | None = None) -> None:
        self.api, self.model_id = api, api.model_id
        self.settle, self.poll_interval, self.max_lines = settle, poll_interval, max_lines
        self.on_status = on_status
        self.run_id = run_id
        self._ledger: BatchLedger | None = BatchLedger(store, run_id) if store is not None else None
        self._waiting: dict[str, list[asyncio.Future[Reply]]] = {}
        self._queued: dict[str, BatchRequest] = {}
        self._last_new = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        self._followers: set[asyncio.Task[None]] = set()

    @property
    def ledger(self) -> BatchLedger:
        if self._ledger is None:  # no store given: the batches are recorded for this process only
            from .store import RunStore
            self._ledger = BatchLedger(RunStore(":memory:"), self.run_id)
        return self._ledger

    def use_store(self, store: Any) -> None:
        """Record batches in ``store`` (done by :func:`batch_judge` with the judge's store)."""
        if self._ledger is None and store is not None:
            self._ledger = BatchLedger(store, self.run_id)

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        loop = asyncio.get_running_loop()
        key = call_key(self.model_id, prompt, params, schema)
        future: asyncio.Future[Reply] = loop.create_future()
        if self._loop is not loop:  # a new event loop (each asyncio.run): nothing of the last one is waited on
            self._loop, self._waiting, self._queued, self._followers = loop, {}, {}, set()
        self._waiting.setdefault(key, []).append(future)
        if len(self._waiting[key]) == 1:
            self._queued[key] = BatchRequest(key, prompt, params, schema)
        self._last_new = loop.time()
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = loop.create_task(self._dispatch())
        return await future

    # ---------------------------------------------------------------- dispatching

    async def _dispatch(self) -> None:
        """Wait for quiescence (no new prompt for ``settle`` seconds: every evaluator that will ask
        something soon has asked it), then send what is queued; a later prompt starts another."""
        loop = asyncio.get_running_loop()
        while self._queued and len(self._queued) < self.max_lines and \
                (quiet := loop.time() - self._last_new) < self.settle:
            await asyncio.sleep(self.settle - quiet)
        requests = list(self._queued.values())[:self.max_lines]
        for r in requests:
            del self._queued[r.custom_id]
        task = loop.create_task(self._follow(requests))
        self._followers.add(task)
        task.add_done_callback(self._followers.discard)
        if self._queued:  # more than one batch holds: the rest go in the next
            self._dispatcher = loop.create_task(self._dispatch())

    def _say(self, text: str) -> None:
        if self.on_status is not None:
            self.on_status(text)

    def _resolve(self, key: str, reply: Reply | None = None, error: BaseException | None = None) -> None:
        for future in self._waiting.pop(key, []):
            if not future.done():
                future.set_result(reply) if error is None else future.set_exception(error)  # type: ignore[arg-type]

    async def _follow(self, requests: list[BatchRequest]) -> None:
        """See the requests through: find the batches that already hold them, send the others (a
        second time, once, for lines that failed before), and hand out the replies."""
        try:
            await self._see_through(requests)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - reaches the evaluators as a failed call, not a crash
            error = classify(exc)  # a provider that cannot be reached is transient: a re-run tries again
            for r in requests:
                self._resolve(r.custom_id, error=error)

    async def _see_through(self, requests: list[BatchRequest]) -> None:
        by_key = {r.custom_id: r for r in requests}
        open_jobs: dict[str, BatchJob] = {}
        failures: dict[str, list[str]] = {}
        for job in self.ledger.jobs(self.api.provider, self.model_id):
            for key in job.keys:
                if key not in by_key:
                    continue
                if job.state == "collected":
                    if key in job.failures:
                        failures.setdefault(key, []).append(job.failures[key])
                else:
                    open_jobs.setdefault(job.tag, job)
        claimed = {k for job in open_jobs.values() for k in job.keys}
        fresh: dict[int, list[BatchRequest]] = {1: [], 2: []}
        for key, request in by_key.items():
            if key in claimed:
                continue
            tries = len(failures.get(key, []))
            if tries >= 2:
                self._resolve(key, error=ModelCallError(f"batch line failed twice: {failures[key][-1]}"))
            else:
                fresh[tries + 1].append(request)
        work = [self._run_job(job, by_key) for job in open_jobs.values()]
        for attempt, batch in fresh.items():
            for start in range(0, len(batch), self.max_lines):
                work.append(self._submit_and_run(batch[start:start + self.max_lines], attempt, by_key))
        await asyncio.gather(*work)

    async def _submit_and_run(self, requests: list[BatchRequest], attempt: int,
                              by_key: dict[str, BatchRequest]) -> None:
        job = self.ledger.intend(self.api.provider, self.model_id, [r.custom_id for r in requests],
                                 attempt=attempt)
        if job.state == "submitting" and job.batch_id is None:
            batch_id = await self.api.submit(requests, tag=job.tag)
            self.ledger.submitted(job.tag, batch_id)
            job.batch_id, job.state = batch_id, "submitted"
            self._say(f"batch {batch_id}: submitted {len(requests)} request(s)"
                      + (" (lines that failed once, sent again)" if attempt > 1 else ""))
        await self._run_job(job, by_key, resumed=False)

    async def _run_job(self, job: BatchJob, by_key: dict[str, BatchRequest], resumed: bool = True) -> None:
        if job.batch_id is None:  # killed between recording the batch and learning its id
            job.batch_id = await self.api.find(job.tag, job.created - 60)
            if job.batch_id is None:
                requests = [by_key[k] for k in job.keys if k in by_key]
                job.batch_id = await self.api.submit(requests, tag=job.tag)
                self._say(f"batch {job.batch_id}: submitted {len(requests)} request(s)")
            self.ledger.submitted(job.tag, job.batch_id)
        elif resumed:
            self._say(f"batch {job.batch_id}: submitted before; waiting for it")
        status = await self._wait(job.batch_id)
        lines = {} if status.error else _by_id(await self.api.results(job.batch_id))
        failed: dict[str, str] = {}
        for key in job.keys:
            line = lines.get(key)
            if line is not None and line.reply is not None:
                self.ledger.store.cache_put(key, self.model_id, line.reply)
            else:
                failed[key] = (line.error if line is not None and line.error else
                               status.error or f"no output line for it (batch {status.state})")
        self.ledger.collected(job.tag, failed)  # a durable write: the cached replies go with it
        retry: list[BatchRequest] = []
        for key in job.keys:
            if key not in by_key:
                continue
            if key not in failed:
                self._resolve(key, reply=lines[key].reply)
            elif job.attempt < 2:
                retry.append(by_key[key])
            else:
                self._resolve(key, error=ModelCallError(
                    f"batch {job.batch_id}: line failed twice: {failed[key]}"))
        if retry:
            await self._submit_and_run(retry, job.attempt + 1, by_key)

    async def _wait(self, batch_id: str) -> BatchStatus:
        seen = None
        while True:
            status = await self.api.status(batch_id)
            shown = status.describe()
            if shown != seen:
                self._say(shown)
                seen = shown
            if status.ended:
                return status
            await asyncio.sleep(self.poll_interval)


def batch_judge(model: BatchModel, *, store: Any = None, run_id: str | None = None,
                prices: PriceTable | None = None, **judge_options: Any) -> Judge:
    """A :class:`~langrag_eval.runtime.Judge` for a batch model: every item of a run in flight at once
    (so one batch holds them all), no per-call timeout and no retry of a call (a failed line is sent
    again once by the model itself), the cost at batch prices (:func:`batch_prices`)."""
    model.use_store(store)
    options: dict[str, Any] = {"concurrency": model.max_lines,
                               "retry": RetryPolicy(max_attempts=1, timeout=None), **judge_options}
    return Judge(model, store=store, run_id=run_id, prices=batch_prices(prices, model.model_id), **options)


class LocalBatchAPI:
    """A batch API answered at once by any chat model, in reverse order (providers keep none): for
    trying batch judging, and for tests, without a provider."""

    provider = "local"

    def __init__(self, model: ChatModel) -> None:
        self.model, self.model_id = model, model.model_id
        self.batches = 0
        self._done: dict[str, list[BatchLine]] = {}

    async def submit(self, requests: list[BatchRequest], *, tag: str) -> str:
        self.batches += 1
        lines = []
        for r in reversed(requests):
            try:
                lines.append(BatchLine(r.custom_id, reply=await self.model.generate(r.prompt, r.params,
                                                                                    schema=r.schema)))
            except Exception as exc:  # noqa: BLE001 - a failed line, as a provider reports it
                lines.append(BatchLine(r.custom_id, error=f"{type(exc).__name__}: {exc}"))
        batch_id = f"local-{self.batches}-{tag}"
        self._done[batch_id] = lines
        return batch_id

    async def find(self, tag: str, since: float) -> str | None:
        return next((b for b in self._done if b.endswith(tag)), None)

    async def status(self, batch_id: str) -> BatchStatus:
        lines = self._done[batch_id]
        bad = sum(1 for line in lines if line.reply is None)
        return BatchStatus(batch_id, "ended", True, total=len(lines), succeeded=len(lines) - bad, failed=bad)

    async def results(self, batch_id: str) -> list[BatchLine]:
        return list(self._done[batch_id])

