"""The one concurrency helper: a bounded worker pool over a list, results in input order.

>>> import asyncio
>>> async def double(x): return 2 * x
>>> asyncio.run(gather_bounded([1, 2, 3], double, limit=2))
[2, 4, 6]
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import weakref
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable, Sequence, TypeVar

__all__ = ["gather_bounded", "Limiter", "run_sync"]

X = TypeVar("X")
R = TypeVar("R")


async def gather_bounded(items: Sequence[X], fn: Callable[[X], Awaitable[R]], *, limit: int,
                         on_done: Callable[[int, R], None] | None = None) -> list[R]:
    """Run ``fn`` over ``items`` with at most ``limit`` in flight; ``on_done(index, result)`` per item."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    results: list[R] = [None] * len(items)  # type: ignore[list-item]
    queue = iter(enumerate(items))

    async def worker() -> None:
        for index, item in queue:  # one shared iterator: each item is taken by exactly one worker
            results[index] = await fn(item)
            if on_done is not None:
                on_done(index, results[index])

    await asyncio.gather(*(worker() for _ in range(min(limit, len(items)))))
    return results


class Limiter:
    """Bounds concurrent model calls. One semaphore per event loop, so a limiter outlives
    ``asyncio.run`` calls made by sync wrappers. Records the peak it allowed."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("concurrency must be at least 1")
        self.limit = limit
        self.in_flight = 0
        self.peak = 0
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.limit)
        async with semaphore:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1


def run_sync(awaitable: Awaitable[R]) -> R:
    """Run a coroutine to completion from sync code, also when an event loop is already running
    (notebooks, sync callbacks inside async frameworks): then it runs on a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(awaitable)  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, awaitable).result()  # type: ignore[arg-type]

