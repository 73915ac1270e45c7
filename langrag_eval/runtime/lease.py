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
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["LeaseKeeper", "OWNER", "DEFAULT_TTL"]

# One owner per process: two stores (or threads) of one process share a run without waiting on
# themselves; two processes never do.
OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
DEFAULT_TTL = 30.0


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
