"""Resumable batches: each item's result is stored under (run, item key, task) as soon as it is
done, with a fingerprint of the item's content; a restarted batch reads finished items back instead
of judging them again, but only while their content is unchanged: an item whose content changed
under the same key is judged again (a judgment is never reused for other content). An item that
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

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence, TypeVar, Union

from pydantic import BaseModel, TypeAdapter

from ..results import Unscored
from .concurrency import gather_bounded
from .identity import content_hash
from .progress import BatchProgress
from .store import RunStore

__all__ = ["run_batch", "RETRY_ON_RESUME", "BatchCounts"]

RETRY_ON_RESUME = frozenset({"rate_limit", "timeout", "transient"})

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


async def run_batch(items: Sequence[X], evaluate: Callable[[X], Awaitable[R | Unscored]], *,
                    key: Callable[[X], str], task: str, result_type: type[R],
                    store: RunStore | None = None, run_id: str | None = None, limit: int = 16,
                    description: str | None = None,
                    fingerprint: Callable[[X], Any] | None = None) -> list[R | Unscored]:
    """Evaluate every item once per run. ``evaluate`` must return a result or Unscored, not raise.

    ``fingerprint(item)`` gives what the item's judgment depends on (default: the item itself);
    pass it when the item is only a reference to content held elsewhere (ids of a game, say).
    """
    codec: TypeAdapter[R | Unscored] = TypeAdapter(Union[Unscored, result_type])  # type: ignore[arg-type]
    resumable = store is not None and run_id is not None
    counts = BatchCounts()

    async def one(item: X) -> R | Unscored:
        item_key = key(item)
        digest = content_hash(fingerprint(item) if fingerprint is not None else item) if resumable else None
        if resumable:
            record = store.get_judgment_record(run_id, item_key, task)  # type: ignore[union-attr,arg-type]
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
        if resumable:
            store.put_judgment(run_id, item_key, task, codec.dump_python(result, mode="json"),  # type: ignore[union-attr,arg-type]
                               scored=not isinstance(result, Unscored), fingerprint=digest)
        return result

    with BatchProgress(description or task, len(items)) as progress:
        results = await gather_bounded(items, one, limit=limit, on_done=lambda i, r: progress.advance())
    if resumable:
        store.count_batch(run_id, counts)  # type: ignore[union-attr,arg-type]
    return results
