"""One writer per run: a lease row in the store, renewed while its holder lives.

Two processes that start the same command on one store would otherwise both judge the same items
(paying twice) and each write a summary of its own half-view. The first takes the run's lease; the
second waits until the run is released (and then resumes the finished run from the store, making no
model call), or refuses at once when told not to wait. A holder killed with ``kill -9`` stops
renewing, and its lease is taken over once it expires.

>>> from langrag_eval.runtime import RunStore
>>> store = RunStore(":memory:")
>>> run = store.open_run("demo", {})
>>> store.lease_holder(run)["pid"] == __import__("os").getpid()
True
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable, Iterator

__all__ = ["LeaseKeeper", "owner_id", "DEFAULT_TTL", "fenced_by", "check_fence"]

DEFAULT_TTL = 30.0
_owner: tuple[int, str] | None = None  # (pid it was made in, id)
_owner_lock = threading.Lock()


def owner_id() -> str:
    """This process's identity as a writer of runs: ``host:pid:random``. Two stores (or threads) of
    one process share it, so they share a run without waiting on themselves; two processes never do,
    a child forked from this one included (a worker pool's, say): the id is made afresh in a process
    whose pid is not the one it was made in.

    >>> owner_id() == owner_id() and owner_id().split(":")[1] == str(__import__("os").getpid())
    True
    """
    global _owner
    pid = os.getpid()
    current = _owner
    if current is None or current[0] != pid:
        with _owner_lock:
            if _owner is None or _owner[0] != pid:
                _owner = (pid, f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:8]}")
            current = _owner
    return current[1]


# What the item now being judged must still hold before each paid call (a cooperative worker's
# claim on it): set by the batch around one item's evaluation, checked by the judge right before
# every attempt it sends, retries and repair re-asks included.
_fence: ContextVar[Callable[[], None] | None] = ContextVar("langrag_fence", default=None)


@contextmanager
def fenced_by(check: Callable[[], None]) -> Iterator[None]:
    """Run the block with ``check`` (raises when the work was taken over) as the current fence."""
    token = _fence.set(check)
    try:
        yield
    finally:
        _fence.reset(token)


def check_fence() -> None:
    """Raise what the current fence raises, if one is set (see :func:`fenced_by`)."""
    check = _fence.get()
    if check is not None:
        check()


def _forget_owner() -> None:
    # A forked child starts with a copy of the parent's lock: it might be held by a thread that does
    # not exist in the child. Give the child fresh ones.
    global _owner, _owner_lock
    _owner, _owner_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_owner)


@dataclass
class LeaseKeeper:
    """Renews the leases a store holds, every third of their lifetime, on one daemon thread."""

    renew: Callable[[], None]
    ttl: float = DEFAULT_TTL
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="langrag-lease", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.renew()
            except Exception:  # a closed store: nothing left to renew
                return


def wait_message(run_id: str, holder: dict[str, object]) -> str:
    left = max(0.0, float(holder["expires"]) - time.time())  # type: ignore[arg-type]
    return (f"run {run_id} is being written by process {holder['pid']} on {holder['host']} "
            f"(its lease is renewed while it runs; it expires {left:.0f} s after that process stops)")
