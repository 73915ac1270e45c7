"""Runs on Ray (extra ``ray``): a run's items judged by Ray actors on one machine or a cluster, the
run store staying the single source of truth.

Each worker is a long-lived Ray actor that runs the same work (a command, or a function) against the
same run in a store every node reaches (PostgreSQL for more than one node). The workers share the
run through the store's item claims: each claims a slice of the unfinished items, judges it, stores
every judgment as it finishes and claims more, and a claim lapses when its worker dies. So an actor
killed mid-run loses nothing (its items are taken over once its claims expire), no stored judgment
is paid for twice (the reply cache is shared), and running the work again finishes only what is
missing.

Actors rather than Ray Data's ``map_batches``: the items are handed out by the store's claims as
workers become free, not split up front, so a slow or lost worker holds back no fixed partition and
a re-executed task cannot judge an item a second time; and an actor keeps what is costly to build
for the whole run: a local judge model loaded once per actor (``num_gpus_per_worker`` places it on a
GPU node), the reply cache, the store's connections.

:class:`RayExecutor` is the run layer's executor (``run.aevaluate(..., executor=RayExecutor(...))``);
:func:`run_workers_on_ray` runs any picklable work on the actors (the command line runs a whole
command that way where it does not judge through ``run.aevaluate``).

>>> RayExecutor(workers=4, num_gpus_per_worker=0.5).workers
4
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Union

from ..errors import ConfigError, LangragError
from .progress import BatchProgress

if TYPE_CHECKING:
    from ..evaluator import Evaluator
    from .store_base import StoreBase

__all__ = ["RayExecutor", "run_workers_on_ray", "WorkerOutcome"]


@dataclass(frozen=True)
class WorkerOutcome:
    """What one worker returned, or why it was lost (killed, its node gone)."""

    index: int
    value: Any = None
    lost: str | None = None


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("running on Ray needs the extra: pip install 'langrag-eval[ray]'") from None
    return ray


class _Worker:
    """The actor: runs ``work(index)`` in its own process."""

    def __init__(self, index: int) -> None:
        self.index = index

    def pid(self) -> int:
        import os
        return os.getpid()

    def run(self, work: Callable[[int], Any]) -> Any:
        return work(self.index)


def run_workers_on_ray(work: Callable[[int], Any], *, workers: int, address: str | None = None,
                       num_cpus_per_worker: float = 0.5, num_gpus_per_worker: float = 0.0,
                       on_start: Callable[[list[Any]], None] | None = None) -> list[WorkerOutcome]:
    """Run ``work(index)`` on ``workers`` Ray actors at once and wait for all of them.

    ``work`` must be picklable (a module-level function or an object) and share its run through a
    store every actor reaches. ``address``: a running cluster (``ray://host:10001`` or ``auto``);
    without it, the Ray instance already started in this process, else a local one. Judges are
    mostly waiting on the network, so a worker asks for half a CPU by default. ``on_start`` is
    given the actor handles (to watch or kill them). A worker that dies is reported as lost, not
    raised: the others take its items over.
    """
    if workers < 1:
        raise ConfigError("--workers must be at least 1")
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    actor = ray.remote(num_cpus=num_cpus_per_worker, num_gpus=num_gpus_per_worker, max_restarts=0)(_Worker)
    actors = [actor.remote(i) for i in range(workers)]
    if on_start is not None:
        on_start(actors)
    try:
        refs = [a.run.remote(work) for a in actors]
        outcomes = []
        for i, ref in enumerate(refs):
            try:
                outcomes.append(WorkerOutcome(i, value=ray.get(ref)))
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as exc:
                outcomes.append(WorkerOutcome(i, lost=" ".join(str(exc).split())[:300]))
            except ray.exceptions.RayTaskError as exc:
                # the work itself refused (a configuration error every worker meets): raised here as is
                if isinstance(getattr(exc, "cause", None), LangragError):
                    raise exc.cause from None
                raise
    finally:
        for a in actors:
            ray.kill(a)
    return outcomes


@dataclass(frozen=True)
class RayExecutor:
    """The run layer's executor on Ray: ``workers`` actors judge the run's items together.

    Each actor gets the same evaluator (cloudpickled, its judge's store left behind here), opens the
    run store at the same URL and judges the samples through it: the workers share the items through
    the store's claims, so an actor lost mid-run loses nothing (its items are taken over once its
    claims lapse), a stored judgment is never paid for twice and a re-run reads every finished item
    back. ``arun`` returns, like :class:`~langrag_eval.run.LocalExecutor`, one result per sample in
    input order, each a result or an ``Unscored``, read back from the store once the actors are done.

    It needs a run id and a PostgreSQL store (``store=``, else the judge's): with neither, or a
    SQLite file, it raises :class:`~langrag_eval.errors.ConfigError`. The samples are not split up
    front and sent back by value instead: a lost worker's share would be lost (or re-sent from here),
    a re-run could read nothing back, the workers could not share the reply cache, and a SQLite file
    is not reachable from another node.

    ``address``: a running cluster (``ray://head:10001`` or ``auto``); default: the Ray instance
    started in this process, else a local one. ``num_gpus_per_worker``: GPUs per actor, for a judge
    model that runs in the actor. ``model``: a picklable callable returning the judge's model, called
    once in each actor (a local model loaded there rather than pickled from here); default: the
    judge's model, pickled. ``env``: environment variables set in each actor before it starts (judge
    keys, endpoints). ``concurrency`` (of ``arun``) is items in flight per actor. ``progress`` draws
    here the bar a local run draws, counting the items every actor finishes (the store is asked how
    many every ``poll_interval`` seconds, one row each time). ``on_event`` is told one line per event
    worth saying (workers starting, a worker lost). A configuration error an actor meets (a judge it
    cannot make, say) is raised here as it was there.
    """

    workers: int = 2
    address: str | None = None
    num_cpus_per_worker: float = 0.5
    num_gpus_per_worker: float = 0.0
    model: Callable[[], Any] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    on_event: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    poll_interval: float = 1.0

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"a RayExecutor needs at least 1 worker, got {self.workers}")
        if not self.poll_interval > 0:
            raise ConfigError(f"a RayExecutor's poll_interval must be above 0 seconds, got {self.poll_interval}")

    async def arun(self, evaluator: Evaluator[Any, Any], samples: Sequence[Any], *, run_id: str | None,
                   store: StoreBase | None, concurrency: int | None, progress: bool | None) -> list[Any]:
        if run_id is None:
            raise ConfigError("a RayExecutor needs a run id: its workers share the run's items through the "
                              "store, and read the finished ones back on a re-run")
        judge = getattr(evaluator, "judge", None)
        store = store if store is not None else getattr(judge, "store", None)
        url = shared_store_url(store)
        ray = _ray()
        samples = list(samples)
        shipped: Any = evaluator
        if judge is not None:  # the store's connections stay here; each actor opens its own
            shipped = evaluator.for_judge(dataclasses.replace(judge, store=None, run_id=None,
                                                              model=None if self.model else judge.model))
        try:
            packed = ray.cloudpickle.dumps(shipped)
        except Exception as exc:  # noqa: BLE001 - any pickling failure is the same mistake
            raise ConfigError(f"the evaluator cannot be sent to Ray workers ({type(exc).__name__}: {exc}); "
                              "pass RayExecutor(model=...) for a model that does not pickle") from None
        if not ray.is_initialized():
            ray.init(address=self.address, log_to_driver=False)
        work = JudgeShare(ray.put((packed, samples)), url, getattr(store, "claim_ttl", 30.0), run_id,
                          concurrency, self.model, dict(self.env))
        self._say(f"ray: {self.workers} worker(s) judging the run" + (f" on {self.address}" if self.address else ""))
        task = evaluator.task_name()
        # the bar a local batch draws (same description, total and counts), fed from the store
        with BatchProgress(getattr(evaluator, "description", "") or task, len(samples), show=progress) as bar:
            watch = RunWatch(bar, store, run_id, task, time.time(), self.poll_interval)
            if bar.enabled:
                watch.count_finished_before(evaluator, samples)
            watching = asyncio.create_task(watch.follow()) if bar.enabled else None
            try:
                outcomes = await asyncio.to_thread(run_workers_on_ray, work, workers=self.workers,
                                                   address=self.address, num_cpus_per_worker=self.num_cpus_per_worker,
                                                   num_gpus_per_worker=self.num_gpus_per_worker)
            finally:
                if watching is not None:
                    watching.cancel()
            lost = [o for o in outcomes if o.lost]
            for o in lost:
                self._say(f"ray: worker {o.index} lost ({o.lost}); the others took its items over")
            _tally(evaluator, store, run_id, len(samples), [o.value for o in outcomes if not o.lost])
            results = read_back(evaluator, samples, store, run_id, missing=(
                f"no Ray worker finished this item ({len(lost)} of {self.workers} lost); run again to resume"))
            watch.count(len(samples) - watch.shown)  # the run is over: every item is accounted for
        return results

    def _say(self, line: str) -> None:
        if self.on_event is not None:
            self.on_event(line)


def shared_store_url(store: Any) -> str:
    """The URL every Ray worker opens: the store's, when it is a PostgreSQL store shared through claims."""
    if store is None:
        raise ConfigError("a RayExecutor needs a PostgreSQL run store (store=..., or the judge's): its "
                          "workers share the run through it, and none was given")
    if not getattr(store, "cooperative", False) or not getattr(store, "url", None):
        raise ConfigError(f"a RayExecutor needs a PostgreSQL run store that every worker reaches, not "
                          f"{getattr(store, 'path', type(store).__name__)}: the workers share the run's "
                          "items through its claims")
    return str(store.url)


@dataclass(frozen=True)
class JudgeShare:
    """One actor's share of a run: the evaluator over the samples against the shared store. Returns
    what it judged (items judged, of them changed) and its model usage."""

    shipped: Any  # a Ray object: (the pickled evaluator, the samples)
    url: str
    claim_ttl: float
    run_id: str
    concurrency: int | None
    model: Callable[[], Any] | None
    env: dict[str, str]

    def __call__(self, index: int) -> tuple[int, int, dict[str, Any]]:
        import ray

        from .judge import UsageMeter
        from .pgstore import PostgresRunStore
        os.environ.update(self.env)  # the actor's own process: its environment is its own
        packed, samples = ray.get(self.shipped)
        evaluator = ray.cloudpickle.loads(packed)
        store = PostgresRunStore(self.url, claim_ttl=self.claim_ttl)
        try:
            judge = getattr(evaluator, "judge", None)
            usage = UsageMeter()
            if judge is not None:
                model = self.model() if self.model is not None else judge.model
                evaluator = evaluator.for_judge(dataclasses.replace(judge, model=model, store=store, usage=usage))
            asyncio.run(evaluator.aevaluate_many(samples, run_id=self.run_id, store=store, concurrency=self.concurrency))
            counts = store.batch_counts(self.run_id)
            return (counts.judged, counts.changed, usage.as_dict()) if counts else (0, 0, usage.as_dict())
        finally:
            store.close()


@dataclass
class RunWatch:
    """The driver's view of a run the actors judge, for its progress bar: the items finished before
    it started (read once), then how many judgments the actors have written since (one row a poll).
    Each item is counted once; the bar never passes the run's size."""

    bar: BatchProgress
    store: Any
    run_id: str
    task: str
    started: float
    interval: float
    shown: int = 0

    def count(self, n: int) -> None:
        n = min(n, self.bar.total - self.shown)
        if n > 0:
            self.shown += n
            self.bar.advance(n)

    def count_finished_before(self, evaluator: Any, samples: Sequence[Any]) -> None:
        """The items a worker would not judge again (finished, same content), as the batch decides."""
        from .batch import finished
        from .identity import content_hash
        keys = [evaluator.key(s) for s in samples]
        index = self.store.task_index(self.run_id, self.task, keys)
        self.count(sum(1 for k, s in zip(keys, samples) if (record := index.get(k)) is not None
                       and finished(record, content_hash(evaluator.fingerprint(s)), self.started)))

    async def follow(self) -> None:
        done = self.shown
        while True:
            await asyncio.sleep(self.interval)
            judged = await asyncio.to_thread(self.store.judged_since, self.run_id, self.task, self.started)
            self.count(done + judged - self.shown)


def _tally(evaluator: Any, store: Any, run_id: str, n: int, values: list[tuple[int, int, dict[str, Any]]]) -> None:
    """The workers' counts and model usage added to this process's, as if it had judged the batch."""
    from .batch import BatchCounts
    from .judge import UsageMeter
    judged = sum(v[0] for v in values)
    store.count_batch(run_id, BatchCounts(reused=max(0, n - judged), judged=judged,
                                          changed=max((v[1] for v in values), default=0)))
    meter = getattr(getattr(evaluator, "judge", None), "usage", None)
    for _, _, usage in values:
        if meter is not None:
            meter.merge(UsageMeter(**usage))


def read_back(evaluator: Any, samples: Sequence[Any], store: Any, run_id: str, *, missing: str) -> list[Any]:
    """One result per sample, in input order, as the store holds it; an item none holds is ``Unscored``
    (cause ``transient``: a re-run judges it)."""
    from pydantic import TypeAdapter

    from ..results import Unscored
    codec: TypeAdapter[Any] = TypeAdapter(Union[Unscored, evaluator.result_type])
    stored = store.task_results(run_id, evaluator.task_name())
    return [codec.validate_python(stored[k]) if k in stored else Unscored(reason=missing, cause="transient")
            for k in (evaluator.key(s) for s in samples)]
