"""One writer per run: a lease row in the store, renewed while its holder lives.

Two processes that start the same command on one store would otherwise both judge the same items
(paying twice) and each write a summary of its own half-view. The first takes the run's lease; the
second waits until the run is released (and then resumes the finished run from the store, making no
model call), or refuses at once when told not to wait. A holder killed with ``kill -9`` stops
renewing, and its lease is taken over once it expires.

Here are the process's owner id, the thread that renews, the fence a judge checks before each paid
call, and :class:`RunLeases`, the lease SQL every store inherits (take, renew, check, fence a
write, give back), with the errors it raises.

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
import weakref
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..errors import ConfigError

__all__ = ["LeaseKeeper", "RunLeases", "owner_id", "DEFAULT_TTL", "fenced_by", "check_fence",
           "RunBusyError", "LeaseLostError", "ClaimLostError"]


class RunBusyError(ConfigError):
    """Another process holds the run's lease and the caller chose not to wait."""


class LeaseLostError(ConfigError):
    """This process's lease on a run expired (it was paused: a laptop asleep, SIGSTOP, a long
    pause) and another process took the run over; this one stops before paying or writing again."""


class ClaimLostError(LeaseLostError):
    """A cooperating worker's claim on one item expired and another worker took the item over; this
    one leaves the item, making no further call for it."""


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


class RunLeases:
    """The run-lease half of a store (:class:`~langrag_eval.runtime.store_base.StoreBase` inherits
    it): take, renew, check and give back a run's lease, and fence writes on it. The SQL runs on
    the store's connection, ``_exec`` and ``_rows``."""

    read_only: bool
    lease_ttl: float = DEFAULT_TTL

    if TYPE_CHECKING:
        def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> Any: ...
        def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...

    def _start_leases(self) -> None:
        self._leases: set[str] = set()
        self._lost: set[str] = set()
        self._until: dict[str, float] = {}  # run -> when the lease this process last wrote expires
        ref = weakref.ref(self)
        self._keeper = LeaseKeeper(lambda: (ref() or _Gone()).renew_leases(), ttl=self.lease_ttl)

    def _take_lease(self, run_id: str) -> dict[str, Any] | None:
        """Take or renew the lease; the holder's row when another live process has it. One
        conditional upsert: atomic on SQLite (one writer at a time) and PostgreSQL (row lock)."""
        now = time.time()
        self._exec("INSERT INTO leases (run_id, owner, pid, host, acquired, expires) VALUES (?,?,?,?,?,?) "
                   "ON CONFLICT (run_id) DO UPDATE SET owner=excluded.owner, pid=excluded.pid, "
                   "host=excluded.host, acquired=excluded.acquired, expires=excluded.expires "
                   "WHERE leases.owner=excluded.owner OR leases.expires<excluded.acquired",
                   (run_id, owner_id(), os.getpid(), socket.gethostname(), now, now + self.lease_ttl))
        row = self._rows("SELECT owner, pid, host, expires FROM leases WHERE run_id=?", (run_id,))[0]
        if row[0] != owner_id():
            return {"owner": row[0], "pid": row[1], "host": row[2], "expires": row[3]}
        self._until[run_id] = now + self.lease_ttl
        self._leases.add(run_id)
        self._keeper.start()
        return None

    def renew_leases(self) -> None:
        for run_id in list(self._leases):
            self._renew(run_id)

    def _renew(self, run_id: str) -> bool:
        """A conditional write on the lease: it extends the lease only while this process still
        owns it. A lease found taken over is marked lost, never taken back."""
        until = time.time() + self.lease_ttl
        changed = self._exec("UPDATE leases SET expires=? WHERE run_id=? AND owner=?", (until, run_id, owner_id()))
        if _count(changed) == 0:
            self._leases.discard(run_id)
            self._lost.add(run_id)
            return False
        self._until[run_id] = until
        return True

    def check_lease(self, run_id: str | None) -> None:
        """Raise :class:`LeaseLostError` when this process held ``run_id``'s lease and another
        process has taken it over since (it expired while this one was paused). Called before every
        paid model call and fenced into every write of a judgment, so a paused holder finds out
        before it pays or writes again. A run this process never leased passes."""
        if run_id is None or (run_id not in self._leases and run_id not in self._lost):
            return
        # No other process takes a lease before it expires: while more than two thirds of the one
        # this process wrote are left, it is still this process's, and the store is not read.
        if run_id in self._leases and time.time() < self._until.get(run_id, 0.0) - 2 * self.lease_ttl / 3:
            return
        if run_id in self._leases:
            rows = self._rows("SELECT owner, expires FROM leases WHERE run_id=?", (run_id,))
            if rows and rows[0][0] == owner_id() and (rows[0][1] > time.time() + self.lease_ttl / 3
                                                 or self._renew(run_id)):
                return
            self._leases.discard(run_id)
            self._lost.add(run_id)
        raise LeaseLostError(self._lost_message(run_id))

    def _lost_message(self, run_id: str) -> str:
        holder = self.lease_holder(run_id)
        who = f"process {holder['pid']} on {holder['host']}" if holder else "another process"
        return (f"run {run_id}: this process was paused past its lease and {who} took the run over; "
                "it stopped without paying for or writing anything more (the other process finishes "
                "the run; run the command again to see it)")

    def _fenced(self, run_id: str, sql: str, args: tuple[Any, ...],
                write: Callable[[str, tuple[Any, ...]], Any] | None = None) -> None:
        """A write to a run's rows that lands only while this process owns the run's lease, when it
        took one (``{fence}`` in ``sql`` is that condition): checked by the database in the same
        statement, so a holder paused past its lease cannot write over its successor's work.
        ``write``: how the statement is run (default :meth:`_exec`, committed at once)."""
        if run_id in self._lost:
            raise LeaseLostError(self._lost_message(run_id))
        leased = run_id in self._leases
        fence, extra = (("EXISTS (SELECT 1 FROM leases WHERE run_id=? AND owner=?)", (run_id, owner_id()))
                        if leased else ("1=1", ()))
        if _count((write or self._exec)(sql.format(fence=fence), (*args, *extra))) == 0 and leased:
            self._leases.discard(run_id)
            self._lost.add(run_id)
            raise LeaseLostError(self._lost_message(run_id))

    def release(self, run_id: str) -> None:
        """Give the run's lease back (done by ``finish_run`` and ``close``)."""
        self._leases.discard(run_id)
        self._lost.discard(run_id)
        if not self.read_only:
            self._exec("DELETE FROM leases WHERE run_id=? AND owner=?", (run_id, owner_id()))

    def lease_holder(self, run_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT owner, pid, host, expires FROM leases WHERE run_id=? AND expires>?",
                          (run_id, time.time()))
        return {"owner": rows[0][0], "pid": rows[0][1], "host": rows[0][2], "expires": rows[0][3]} if rows else None


def _count(result: Any) -> int:
    """Rows a write changed: SQLite returns its cursor, PostgreSQL the count."""
    return result if isinstance(result, int) else int(getattr(result, "rowcount", -1))


class _Gone:
    def renew_leases(self) -> None:
        raise RuntimeError("store collected")
