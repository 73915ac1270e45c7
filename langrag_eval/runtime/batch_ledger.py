"""The run store's record of provider batches: which prompts went into which batch, kept from the
moment a batch is about to be created, so a command killed at any point finds its batch again
instead of paying for the same prompts twice.

One row per batch, keyed by a tag computed from its prompts' keys and its attempt: ``submitting``
(written before the provider is asked to create it), ``submitted`` (with the provider's batch id,
written as soon as the provider returns it), ``collected`` (its replies are in the reply cache; the
lines that failed are kept with the provider's error). The table is created on first use, in
SQLite and PostgreSQL stores alike, beside the store's own tables.

>>> from langrag_eval.runtime.store import RunStore
>>> ledger = BatchLedger(RunStore(":memory:"))
>>> job = ledger.intend("openai", "openai:gpt-4o", ["k1", "k2"], attempt=1)
>>> ledger.submitted(job.tag, "batch_1")
>>> [(j.batch_id, j.state, j.keys) for j in ledger.jobs("openai", "openai:gpt-4o")]
[('batch_1', 'submitted', ['k1', 'k2'])]
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import redact

__all__ = ["BatchJob", "BatchLedger"]

_TABLE = """CREATE TABLE IF NOT EXISTS batch_jobs (
    tag TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL, batch_id TEXT, run_id TEXT,
    attempt INTEGER NOT NULL, keys TEXT NOT NULL, state TEXT NOT NULL, failures TEXT,
    created REAL NOT NULL, updated REAL NOT NULL)"""


@dataclass
class BatchJob:
    """One provider batch as the store knows it."""

    tag: str
    provider: str
    model: str
    batch_id: str | None
    attempt: int
    keys: list[str]
    state: str  # submitting | submitted | collected
    created: float
    failures: dict[str, str] = field(default_factory=dict)


def batch_tag(provider: str, model: str, keys: list[str], attempt: int) -> str:
    """The batch's name before the provider gives it an id: a digest of what it holds."""
    payload = json.dumps([provider, model, sorted(keys), attempt])
    return "lre-" + hashlib.sha256(payload.encode()).hexdigest()[:32]


class BatchLedger:
    """The ``batch_jobs`` table of a run store (:class:`~langrag_eval.runtime.store.RunStore` or
    the PostgreSQL one)."""

    def __init__(self, store: Any, run_id: str | None = None) -> None:
        self.store, self.run_id = store, run_id
        store._exec(_TABLE)

    def intend(self, provider: str, model: str, keys: list[str], *, attempt: int) -> BatchJob:
        """Record a batch about to be created; durable before the provider is asked."""
        tag, now = batch_tag(provider, model, keys, attempt), time.time()
        self.store._exec("INSERT INTO batch_jobs (tag, provider, model, batch_id, run_id, attempt, keys, "
                         "state, failures, created, updated) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                         "ON CONFLICT (tag) DO NOTHING",
                         (tag, provider, model, None, self.run_id, attempt, json.dumps(keys), "submitting",
                          None, now, now))
        return self.job(tag)  # type: ignore[return-value]

    def submitted(self, tag: str, batch_id: str) -> None:
        self.store._exec("UPDATE batch_jobs SET batch_id=?, state='submitted', updated=? WHERE tag=?",
                         (batch_id, time.time(), tag))

    def collected(self, tag: str, failures: dict[str, str]) -> None:
        """Its replies are committed to the cache; ``failures``: custom_id to the provider's error."""
        self.store._exec("UPDATE batch_jobs SET state='collected', failures=?, updated=? WHERE tag=?",
                         # A provider's error can quote the key it refused: masked like every stored text.
                         (json.dumps({k: redact(v) for k, v in failures.items()}), time.time(), tag))

    def job(self, tag: str) -> BatchJob | None:
        rows = self.store._rows(_SELECT + " WHERE tag=?", (tag,))
        return _job(rows[0]) if rows else None

    def jobs(self, provider: str, model: str) -> list[BatchJob]:
        """Every batch of this model, oldest first."""
        return [_job(r) for r in self.store._rows(_SELECT + " WHERE provider=? AND model=? ORDER BY created",
                                                  (provider, model))]


_SELECT = ("SELECT tag, provider, model, batch_id, attempt, keys, state, created, failures "
           "FROM batch_jobs")


def _job(row: tuple[Any, ...]) -> BatchJob:
    return BatchJob(tag=row[0], provider=row[1], model=row[2], batch_id=row[3], attempt=int(row[4]),
                    keys=json.loads(row[5]), state=row[6], created=float(row[7]),
                    failures=json.loads(row[8]) if row[8] else {})
