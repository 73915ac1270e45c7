"""What every run store does, whatever holds it: runs with their settings, input digests and
lease; judgments with the fingerprint of their content; the reply cache; the call log; artifacts.

The SQL here is written once for both SQLite (:class:`~langrag_eval.runtime.store.RunStore`) and
PostgreSQL (:class:`~langrag_eval.runtime.pgstore.PostgresRunStore`): ``?`` placeholders and
``INSERT ... ON CONFLICT``, which both accept. A subclass supplies the connection: ``_exec`` (a
durable write), ``_exec_grouped`` (a write that may be committed a moment later), ``_rows``. The
lease operations (one writer per run, writes fenced on it) are inherited from
:class:`~langrag_eval.runtime.lease.RunLeases`.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, Callable, Iterator, Sequence

from ..errors import ConfigError, is_secret_name, redact
from ..model import Reply, TokenUsage
from .lease import ClaimLostError, LeaseLostError, RunBusyError, RunLeases, wait_message

__all__ = ["StoreBase", "LeaseLostError", "ClaimLostError", "RunBusyError", "StaleRunError", "run_id_for"]


class StaleRunError(ConfigError):
    """A named run was made from other inputs than the ones given now."""


_PUT_JUDGMENT = ("INSERT INTO judgments (run_id, item, task, scored, result, created, fingerprint) "
                 "SELECT ?,?,?,?,?,?,? WHERE {fence} ON CONFLICT (run_id, item, task) DO UPDATE SET "
                 "scored=excluded.scored, result=excluded.result, created=excluded.created, "
                 "fingerprint=excluded.fingerprint")
# Items named in one look-up (SQLite before 3.32 takes at most 999 parameters a statement).
_IN_LIST = 500


def run_id_for(kind: str, config: dict[str, Any]) -> str:
    """The deterministic id of a run: the same command with the same settings resumes the same run."""
    digest = hashlib.sha256(json.dumps({"kind": kind, **config}, sort_keys=True,
                                       default=str).encode()).hexdigest()
    return f"{kind}-{digest[:12]}"


def _stored(value: Any) -> str:
    """JSON as the store keeps it: a key or password that reached a setting or a summary (a model
    named by its key, a URL with its password) is masked, never written. Masked string by string,
    so the text stays JSON whatever a secret sits next to."""
    text = json.dumps(value, default=str)
    if redact(text) == text:  # the usual case: nothing to mask
        return text
    return json.dumps(_masked(json.loads(text)))


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k): "***" if isinstance(v, str) and is_secret_name(k) else _masked(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


class StoreBase(RunLeases):
    """The store's operations over a subclass's connection."""

    path: str
    read_only: bool = False

    def _start(self) -> None:
        self._start_leases()
        self._counts: dict[str, Any] = {}

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        raise NotImplementedError

    def _exec_grouped(self, sql: str, args: tuple[Any, ...]) -> None:
        raise NotImplementedError

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def flush(self) -> None:
        """Commit grouped writes (replies, call log) now."""

    def close(self) -> None:
        raise NotImplementedError

    def _json(self, text: str, what: str) -> Any:
        try:
            return json.loads(text)
        except (ValueError, TypeError):
            raise ConfigError(f"{self.path}: {what} is not valid JSON; the store is damaged or was "
                              "written by something else; use another --store") from None

    # ---- runs
    def open_run(self, kind: str, config: dict[str, Any], run_id: str | None = None,
                 judge: str | None = None, *, inputs: dict[str, str] | None = None,
                 allow_changed: bool = False, wait: bool = True,
                 on_wait: Callable[[str], None] | None = None) -> str:
        """Create the run, or find it again when it exists (that is how a run resumes), and take its
        lease: one writer per run. ``inputs`` are digests of what the run is made from (file
        contents); a run found again with other inputs is refused unless ``allow_changed``, since its
        finished judgments would describe other content. Without ``wait``, a run held by another
        process is refused at once; with it, ``on_wait`` is told once and the call waits."""
        run_id = run_id or run_id_for(kind, {**config, **({"inputs": inputs} if inputs else {})})
        if self.read_only:
            raise ConfigError(f"{self.path}: the store was opened read-only")
        self._exec("INSERT INTO runs (id, kind, config, judge, created, inputs) "
                   "VALUES (?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING", (run_id, kind, _stored(config), judge and redact(judge),
                                            time.time(), json.dumps(inputs, sort_keys=True) if inputs else None))
        told = False
        # A cooperative store (PostgreSQL) shares runs between workers through item claims instead.
        while not getattr(self, "cooperative", False) and (holder := self._take_lease(run_id)) is not None:
            if not wait:
                raise RunBusyError(wait_message(run_id, holder) + "; wait for it, or give another --run")
            if on_wait is not None and not told:
                on_wait(wait_message(run_id, holder) + "; waiting for it")
                told = True
            time.sleep(min(1.0, self.lease_ttl / 10))
        try:  # under the lease: no other process changes the run while it is checked
            self._check_same_run(run_id, config, inputs, allow_changed)
        except BaseException:
            self.release(run_id)
            raise
        return run_id

    def count_batch(self, run_id: str, counts: Any) -> None:
        """Add one batch's reuse counts to the run's tally for this process (see ``batch_counts``)."""
        mine = self._counts.setdefault(run_id, type(counts)())
        mine.add(counts)

    def batch_counts(self, run_id: str) -> Any | None:
        """Reused / judged / changed counts of the batches this process ran in the run."""
        return self._counts.get(run_id)

    def _check_same_run(self, run_id: str, config: dict[str, Any], inputs: dict[str, str] | None,
                        allow_changed: bool) -> None:
        """A run found again must be the same work: same settings, same input contents. Changed
        inputs keep the run (per-item fingerprints decide what is judged again); changed settings
        drop its judgments, since every one of them may depend on the settings."""
        row = self._rows("SELECT config, inputs FROM runs WHERE id=?", (run_id,))[0]
        before_config = self._json(row[0], f"run {run_id}'s settings")
        before_inputs = self._json(row[1], f"run {run_id}'s inputs") if row[1] else None
        now_config = json.loads(_stored(config))  # as stored: secrets masked on both sides
        changed = sorted(k for k in set(before_config) | set(now_config)
                         if before_config.get(k) != now_config.get(k))
        changed_inputs = sorted(k for k in set(before_inputs or {}) | set(inputs or {})
                                if inputs is not None and (before_inputs or {}).get(k) != inputs.get(k))
        if before_inputs is None and inputs is not None:
            changed_inputs = []  # a run stored before input digests existed: fingerprints decide
        if (changed or changed_inputs) and not allow_changed:
            what = ([f"other contents of {', '.join(changed_inputs)}"] if changed_inputs else []) + \
                   ([f"other settings ({', '.join(changed)})"] if changed else [])
            raise StaleRunError(f"run {run_id} was made from {' and '.join(what)}; give another --run "
                                "name, or --continue to keep the run (changed items are judged again, "
                                "unchanged ones reused)")
        if changed:
            self._exec("DELETE FROM judgments WHERE run_id=?", (run_id,))
            self._exec("DELETE FROM artifacts WHERE run_id=?", (run_id,))
        if changed or (inputs is not None and before_inputs != inputs):
            self._exec("UPDATE runs SET config=?, inputs=?, finished=NULL, summary=NULL WHERE id=?",
                       (_stored(config),
                        json.dumps(inputs, sort_keys=True) if inputs else None, run_id))

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self.check_lease(run_id)
        self._fenced(run_id, "UPDATE runs SET finished=?, summary=? WHERE id=? AND {fence}",
                     (time.time(), _stored(summary), run_id))
        self.release(run_id)

    def run(self, run_id: str) -> dict[str, Any]:
        # A prefix, matched literally: '%' or '_' in what the user typed must not act as a wildcard.
        prefix = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._rows("SELECT id, kind, config, judge, created, finished, summary, inputs FROM runs "
                          "WHERE id=? OR id LIKE ? ESCAPE '\\' ORDER BY created DESC", (run_id, prefix + "%"))
        if not rows:
            raise ConfigError(f"{self.path}: no run {run_id!r}; known runs: "
                              f"{', '.join(r['id'] for r in self.runs()[:10]) or 'none'}")
        exact = [r for r in rows if r[0] == run_id]
        if not exact and len(rows) > 1:
            raise ConfigError(f"{self.path}: run prefix {run_id!r} matches {len(rows)} runs "
                              f"({', '.join(r[0] for r in rows[:5])}); give more of the id")
        r = exact[0] if exact else rows[0]
        return {"id": r[0], "kind": r[1], "config": self._json(r[2], f"run {r[0]}'s settings"),
                "judge": r[3], "created": r[4], "finished": r[5],
                "summary": self._json(r[6], f"run {r[0]}'s summary") if r[6] else None,
                "inputs": self._json(r[7], f"run {r[0]}'s inputs") if r[7] else None}

    def runs(self) -> list[dict[str, Any]]:
        rows = self._rows("SELECT id, kind, judge, created, finished FROM runs ORDER BY created DESC")
        return [{"id": r[0], "kind": r[1], "judge": r[2], "created": r[3], "finished": r[4]} for r in rows]

    # ---- judgments
    def get_judgment(self, run_id: str, item: str, task: str) -> Any | None:
        record = self.get_judgment_record(run_id, item, task)
        return None if record is None else record[0]

    def get_judgment_record(self, run_id: str, item: str, task: str) -> tuple[Any, str | None] | None:
        """The stored result with the fingerprint of the content it was made from."""
        rows = self._rows("SELECT result, fingerprint FROM judgments WHERE run_id=? AND item=? AND task=?",
                          (run_id, item, task))
        if not rows:
            return None
        return self._json(rows[0][0], f"run {run_id}'s judgment {item!r} ({task})"), rows[0][1]

    def judgment_records(self, run_id: str, task: str, items: list[str]) -> dict[str, tuple[Any, str | None]]:
        """:meth:`get_judgment_record` of many items in a few reads: ``{item: (result, fingerprint)}``
        of those stored."""
        out = {}
        for i in range(0, len(items), _IN_LIST):
            part = items[i:i + _IN_LIST]
            for item, result, fingerprint in self._rows(
                    f"SELECT item, result, fingerprint FROM judgments WHERE run_id=? AND task=? "
                    f"AND item IN ({','.join('?' * len(part))})", (run_id, task, *part)):
                out[item] = (self._json(result, f"run {run_id}'s judgment {item!r} ({task})"), fingerprint)
        return out

    def put_judgment(self, run_id: str, item: str, task: str, result: Any, *, scored: bool,
                     fingerprint: str | None = None, claim: str | None = None) -> None:
        """Store a result; ``claim`` (cooperative stores) is the item's claim, marked done with it.
        On a run this process leased, the write is fenced on the lease: refused (LeaseLostError)
        once another process has taken the run over."""
        self._fenced(run_id, _PUT_JUDGMENT, (run_id, item, task, int(scored), _stored(result), time.time(), fingerprint))

    async def aput_judgment(self, run_id: str, item: str, task: str, result: Any, *, scored: bool,
                            fingerprint: str | None = None) -> None:
        """:meth:`put_judgment` from a batch on an event loop: returns once the judgment is
        committed (a store may commit the judgments finished in one step of the loop together)."""
        self.put_judgment(run_id, item, task, result, scored=scored, fingerprint=fingerprint)

    def task_index(self, run_id: str, task: str, items: Sequence[str] | None = None
                   ) -> dict[str, tuple[str | None, bool, str | None, float]]:
        """Per stored item of a task: (fingerprint, scored, Unscored cause or None, created); with
        ``items``, of those items only (a chunk of a streamed run reads its own rows, not the run's)."""
        where, args = self._of_items(items)
        if where is None:
            return {}
        out = {}
        for item, fingerprint, scored, result, created in self._rows(
                "SELECT item, fingerprint, scored, result, created FROM judgments WHERE run_id=? AND task=?"
                + where, (run_id, task, *args)):
            cause = None
            if not scored:
                value = self._json(result, f"run {run_id}'s judgment {item!r} ({task})")
                cause = value.get("cause") if isinstance(value, dict) else None
            out[item] = (fingerprint, bool(scored), cause, created)
        return out

    def task_results(self, run_id: str, task: str, items: Sequence[str] | None = None) -> dict[str, Any]:
        """Every stored result of a task in a run (with ``items``, of those items), by item, in one read."""
        where, args = self._of_items(items)
        if where is None:
            return {}
        return {item: self._json(result, f"run {run_id}'s judgment {item!r} ({task})") for item, result in
                self._rows("SELECT item, result FROM judgments WHERE run_id=? AND task=?" + where,
                           (run_id, task, *args))}

    def _of_items(self, items: Sequence[str] | None) -> tuple[str | None, tuple[Any, ...]]:
        """The condition naming ``items`` (one parameter, however many), or None for no item at all."""
        if items is None:
            return "", ()
        if not items:
            return None, ()
        return " AND item IN (SELECT value FROM json_each(?))", (json.dumps(list(items)),)

    def last_write(self, run_id: str) -> float | None:
        """When the run last stored a judgment or an artifact (seconds since the epoch), or None."""
        rows = self._rows("SELECT MAX(t) FROM (SELECT MAX(created) AS t FROM judgments WHERE run_id=? "
                          "UNION ALL SELECT MAX(created) AS t FROM artifacts WHERE run_id=?) AS w", (run_id, run_id))
        return float(rows[0][0]) if rows and rows[0][0] is not None else None

    def judgments(self, run_id: str, task: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT item, task, scored, result FROM judgments WHERE run_id=?"
        args: tuple[Any, ...] = (run_id,)
        if task is not None:
            sql, args = sql + " AND task=?", (run_id, task)
        return [{"item": r[0], "task": r[1], "scored": bool(r[2]),
                 "result": self._json(r[3], f"run {run_id}'s judgment {r[0]!r} ({r[1]})")}
                for r in self._rows(sql + " ORDER BY created, item", args)]

    # ---- cache and calls
    def cache_get(self, key: str) -> Reply | None:
        rows = self._rows("SELECT text, prompt_tokens, completion_tokens FROM cache WHERE key=?", (key,))
        if not rows:
            return None
        text, pt, ct = rows[0]
        return Reply(text=text, usage=TokenUsage(prompt_tokens=pt, completion_tokens=ct))

    def cache_put(self, key: str, model: str, reply: Reply) -> None:
        self._exec_grouped("INSERT INTO cache (key, model, text, prompt_tokens, completion_tokens, created) "
                           "VALUES (?,?,?,?,?,?) ON CONFLICT (key) DO UPDATE SET model=excluded.model, "
                           "text=excluded.text, prompt_tokens=excluded.prompt_tokens, "
                           "completion_tokens=excluded.completion_tokens, created=excluded.created",
                   (key, redact(model), redact(reply.text), reply.usage.prompt_tokens, reply.usage.completion_tokens,
                    time.time()))

    def log_call(self, run_id: str | None, model: str, key: str, *, cached: bool, ok: bool,
                 attempts: int, usage: TokenUsage, cost: float | None, error: str | None) -> None:
        self._exec_grouped("INSERT INTO calls (run_id, model, key, cached, ok, attempts, prompt_tokens, "
                   "completion_tokens, cost, error, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   (run_id, redact(model), key, int(cached), int(ok), attempts, usage.prompt_tokens,
                    usage.completion_tokens, cost, error, time.time()))

    def usage(self, run_id: str) -> dict[str, Any]:
        """Calls and tokens of one run: ``calls`` reached a model, ``cached`` were answered locally."""
        rows = self._rows(
            "SELECT model, SUM(1-cached), SUM(cached), SUM(1-ok), SUM(attempts*(1-cached)), "
            "SUM(CASE WHEN cached=0 THEN prompt_tokens ELSE 0 END), "
            "SUM(CASE WHEN cached=0 THEN completion_tokens ELSE 0 END), SUM(cost) "
            "FROM calls WHERE run_id=? GROUP BY model", (run_id,))
        per_model = {r[0]: {"calls": r[1] or 0, "cached": r[2] or 0, "failed": r[3] or 0,
                            "attempts": r[4] or 0, "prompt_tokens": r[5] or 0,
                            "completion_tokens": r[6] or 0, "cost": r[7]} for r in rows}
        total = {k: sum(m[k] for m in per_model.values())
                 for k in ("calls", "cached", "failed", "attempts", "prompt_tokens", "completion_tokens")}
        costs = [m["cost"] for m in per_model.values() if m["cost"] is not None]
        total["cost"] = sum(costs) if costs else None
        # the error most failed calls ended with, so that "15 failed" says why
        worst = self._rows("SELECT error, COUNT(*) FROM calls WHERE run_id=? AND ok=0 AND error IS NOT NULL "
                           "GROUP BY error ORDER BY 2 DESC, error LIMIT 1", (run_id,))
        top = {"error": worst[0][0], "count": worst[0][1]} if worst else None
        return {"total": total, "models": per_model, "top_failure": top}

    def call_keys(self, run_id: str | None = None, *, cached: bool = False) -> Iterator[str]:
        sql = "SELECT key FROM calls WHERE cached=?" + (" AND run_id=?" if run_id else "")
        args = (int(cached), run_id) if run_id else (int(cached),)
        return (r[0] for r in self._rows(sql + " ORDER BY id", args))

    # ---- artifacts: summaries a capability computes for the report
    def put_artifact(self, run_id: str, name: str, data: Any) -> None:
        self._fenced(run_id, "INSERT INTO artifacts (run_id, name, data, created) SELECT ?,?,?,? WHERE {fence} "
                     "ON CONFLICT (run_id, name) DO UPDATE SET data=excluded.data, created=excluded.created",
                     (run_id, name, _stored(data), time.time()))

    def get_artifact(self, run_id: str, name: str) -> Any | None:
        rows = self._rows("SELECT data FROM artifacts WHERE run_id=? AND name=?", (run_id, name))
        return self._json(rows[0][0], f"run {run_id}'s artifact {name!r}") if rows else None

    def artifacts(self, run_id: str) -> dict[str, Any]:
        return {r[0]: self._json(r[1], f"run {run_id}'s artifact {r[0]!r}") for r in
                self._rows("SELECT name, data FROM artifacts WHERE run_id=? ORDER BY created", (run_id,))}

    # ---- moving runs between stores
    def copy_runs(self, target: "StoreBase", run_ids: list[str] | None = None) -> dict[str, int]:
        """Copy runs (default: all) into ``target``: see :func:`~langrag_eval.runtime.transfer.copy_runs`."""
        from .transfer import copy_runs
        return copy_runs(self, target, run_ids)
