"""Resumable batches: each item's result is stored under (run, item key, task) as soon as it is
done; a restarted batch reads finished items back instead of judging them again. An item that
ended Unscored because the provider was unavailable (rate limit, timeout, transient error) is not
finished: a restarted batch tries it again. Unparseable replies and invalid input stay as recorded.

>>> import asyncio
>>> from pydantic import BaseModel
>>> class Length(BaseModel):
...     n: int
>>> async def measure(text): return Length(n=len(text))
>>> asyncio.run(run_batch(["ab", "abc"], measure, key=str, task="len", result_type=Length))[1].n
3
"""

from __future__ import annotations

from typing import Awaitable, Callable, Sequence, TypeVar, Union

from pydantic import BaseModel, TypeAdapter

from ..results import Unscored
from .concurrency import gather_bounded
from .progress import BatchProgress
from .store import RunStore

__all__ = ["run_batch", "RETRY_ON_RESUME"]

RETRY_ON_RESUME = frozenset({"rate_limit", "timeout", "transient"})

X = TypeVar("X")
R = TypeVar("R", bound=BaseModel)


async def run_batch(items: Sequence[X], evaluate: Callable[[X], Awaitable[R | Unscored]], *,
                    key: Callable[[X], str], task: str, result_type: type[R],
                    store: RunStore | None = None, run_id: str | None = None, limit: int = 16,
                    description: str | None = None) -> list[R | Unscored]:
    """Evaluate every item once per run. ``evaluate`` must return a result or Unscored, not raise."""
    codec: TypeAdapter[R | Unscored] = TypeAdapter(Union[Unscored, result_type])  # type: ignore[arg-type]
    resumable = store is not None and run_id is not None

    async def one(item: X) -> R | Unscored:
        item_key = key(item)
        if resumable:
            done = store.get_judgment(run_id, item_key, task)  # type: ignore[union-attr,arg-type]
            if done is not None and not (isinstance(done, dict) and done.get("scored") is False
                                         and done.get("cause") in RETRY_ON_RESUME):
                return codec.validate_python(done)
        result = await evaluate(item)
        if resumable:
            store.put_judgment(run_id, item_key, task, codec.dump_python(result, mode="json"),  # type: ignore[union-attr,arg-type]
                               scored=not isinstance(result, Unscored))
        return result

    with BatchProgress(description or task, len(items)) as progress:
        return await gather_bounded(items, one, limit=limit, on_done=lambda i, r: progress.advance())
