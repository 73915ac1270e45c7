"""The one concurrency helper: a bounded worker pool over a list, results in input order.

>>> import asyncio
>>> async def double(x): return 2 * x
>>> asyncio.run(gather_bounded([1, 2, 3], double, concurrency=2))
[2, 4, 6]
"""

from __future__ import annotations

import asyncio
import collections
import functools
import concurrent.futures
import contextvars
import threading
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable, ParamSpec, Sequence, TypeVar

from ..errors import ArgumentError

__all__ = ["gather_bounded", "Limiter", "run_sync", "synchronous"]

X = TypeVar("X")
R = TypeVar("R")
P = ParamSpec("P")


async def gather_bounded(items: Sequence[X], fn: Callable[[X], Awaitable[R]], *, concurrency: int,
                         on_done: Callable[[int, R], None] | None = None) -> list[R]:
    """Run ``fn`` over ``items`` with at most ``concurrency`` in flight; ``on_done(index, result)`` per item."""
    if concurrency < 1:
        raise ArgumentError("concurrency must be at least 1")
    results: list[R] = [None] * len(items)  # type: ignore[list-item]
    queue = iter(enumerate(items))

    async def worker() -> None:
        for index, item in queue:  # one shared iterator: each item is taken by exactly one worker
            results[index] = await fn(item)
            if on_done is not None:
                on_done(index, results[index])

    workers = [asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(items)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        # one worker's error stops the others: none takes another item (a judge found unavailable
        # sends no more calls), and none is left running after the caller has moved on
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    return results


class _Waiter:
    __slots__ = ("loop", "future", "granted")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Limiter:
    """Bounds concurrent model calls across every thread and event loop that shares it.

    One count guarded by a thread lock, and a first-come queue of waiters each woken on its own
    loop: an ``asyncio.Semaphore`` belongs to one loop, and a semaphore per loop let N threads with
    N loops (a thread pool calling sync wrappers, ``asyncio.run`` per request) make N times the
    calls allowed. Records the peak it allowed.

    ``slot(priority)``: a freed slot goes to the waiter of highest priority, first come first
    served among equals. A call whose reply starts more calls (a decomposition, whose claims each
    need a match) waits ahead of calls that start none, so the work behind it is queued early and
    no slot idles while a run's last stage waits on its first.

    >>> import asyncio
    >>> limiter = Limiter(2)
    >>> async def call():
    ...     async with limiter.slot():
    ...         await asyncio.sleep(0.01)
    >>> async def many(): await asyncio.gather(*(call() for _ in range(5)))
    >>> asyncio.run(many()); asyncio.run(many()); limiter.peak
    2
    """

    def __init__(self, concurrency: int) -> None:
        if concurrency < 1:
            raise ArgumentError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()
        # waiters by priority, each first come first served; the highest non-empty queue goes first
        self._waiters: dict[int, collections.deque[_Waiter]] = {}

    @asynccontextmanager
    async def slot(self, priority: int = 0) -> AsyncIterator[None]:
        await self._acquire(priority)
        try:
            yield
        finally:
            handed_over = self._release()
        if handed_over:
            # Let the call that got the slot send before this one's reply is read: the slot is
            # taken, and every moment before its request goes out is a moment it sits idle. Two
            # turns of the loop: one for that call to build its request, one for a writer task it
            # starts (aiohttp writes a request's body from a task of its own before Python 3.12),
            # which would otherwise wait behind every reply read in the meantime.
            await asyncio.sleep(0)
            await asyncio.sleep(0)

    async def _acquire(self, priority: int) -> None:
        with self._lock:
            if self.in_flight < self.concurrency and not self._waiters:
                self._take()
                return
            waiter = _Waiter(asyncio.get_running_loop())
            self._waiters.setdefault(priority, collections.deque()).append(waiter)
        try:
            await waiter.future
        except asyncio.CancelledError:
            with self._lock:
                if not waiter.granted:
                    queue = self._waiters[priority]
                    queue.remove(waiter)
                    if not queue:
                        del self._waiters[priority]
                    raise
            self._release()  # the slot was handed over as the wait was cancelled: pass it on
            raise

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def _release(self) -> bool:
        """Free a slot, or hand it to the first waiter; True when it went to one on this thread's loop."""
        try:
            here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        with self._lock:
            self.in_flight -= 1
            while self._waiters:
                priority = max(self._waiters)
                queue = self._waiters[priority]
                waiter = queue.popleft()
                if not queue:
                    del self._waiters[priority]
                if waiter.loop is here:
                    _wake(waiter.future)  # no thread hop: it runs on the loop's next turn
                else:
                    try:
                        waiter.loop.call_soon_threadsafe(_wake, waiter.future)
                    except RuntimeError:  # its loop is closed: nobody is left waiting there
                        continue
                waiter.granted = True  # the slot passes straight to it, never seen free by others
                self._take()
                return waiter.loop is here
            return False


def synchronous(coroutine_function: Callable[P, Awaitable[R]]) -> Callable[P, R]:
    """The synchronous twin of a coroutine function: same arguments, runs it to completion with
    :func:`run_sync`. The package's sync entry points (``evaluate``, ``run_tournament``, ...) are
    derived with it, here alone, instead of being written by hand.

    >>> async def double(x: int) -> int:
    ...     return 2 * x
    >>> synchronous(double)(21)
    42
    """

    @functools.wraps(coroutine_function)
    def twin(*args: P.args, **kwargs: P.kwargs) -> R:
        return run_sync(coroutine_function(*args, **kwargs))

    return twin


def run_sync(awaitable: Awaitable[R]) -> R:
    """Run a coroutine to completion from sync code, also when an event loop is already running
    (notebooks, sync callbacks inside async frameworks): then it runs on a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(awaitable)  # type: ignore[arg-type]
    context = contextvars.copy_context()  # the caller's context (judge-call observers, tracing)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, asyncio.run, awaitable).result()  # type: ignore[arg-type]

