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

>>> run_workers_on_ray  # doctest: +ELLIPSIS
<function run_workers_on_ray at ...>
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..errors import ConfigError

__all__ = ["run_workers_on_ray", "WorkerOutcome"]


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
        raise ConfigError("--executor ray needs the extra: pip install 'langrag-eval[ray]'") from None
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
    refs = [a.run.remote(work) for a in actors]
    outcomes = []
    for i, ref in enumerate(refs):
        try:
            outcomes.append(WorkerOutcome(i, value=ray.get(ref)))
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as exc:
            outcomes.append(WorkerOutcome(i, lost=" ".join(str(exc).split())[:300]))
    for a in actors:
        ray.kill(a)
    return outcomes
