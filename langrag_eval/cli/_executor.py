"""``--executor ray`` on every judging command. A command that judges through ``run.aevaluate``
(grade, thelma) passes :func:`command_executor`'s :class:`~langrag_eval.run.RayExecutor`: the actors
judge the items against the PostgreSQL store and this process reads them back. Any other command is
run whole by each actor against the same store (:func:`run_command_on_ray`), then again here, which
reads the run back for the summary."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

__all__ = ["add_executor_options", "check_ray_options", "command_executor", "run_command_on_ray"]

# What a worker needs of the driver's environment: judge keys and endpoints, the store, the judge.
_PASSED_ON = ("LANGRAG_", "OPENAI_", "ANTHROPIC_", "PGPASSWORD", "PGUSER", "HF_")


def add_executor_options(p: argparse.ArgumentParser) -> None:
    from ._options import BATCH_AND_RAY, group
    p = group(p, BATCH_AND_RAY)  # type: ignore[assignment]
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local (this process; default) or ray: --workers Ray actors judge the run "
                        "together through a PostgreSQL --store, then this process reports it")
    p.add_argument("--workers", type=int, default=2, help="with --executor ray: actors (default 2)")
    p.add_argument("--ray-address", default=None,
                   help="with --executor ray: a running cluster (ray://head:10001 or auto); default: "
                        "a local Ray instance")
    p.add_argument("--ray-gpus", type=float, default=0.0, metavar="N",
                   help="with --executor ray: GPUs per actor, for a judge that runs on the cluster "
                        "(local:model.gguf) (default 0)")


@dataclass(frozen=True)
class CommandWork:
    """The command as one Ray actor runs it: the same arguments, in this process only."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)

    def __call__(self, index: int) -> int:
        import langrag_eval.cli as command_line
        os.environ.update(self.env)  # the actor's own process: its environment is its own
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            code = command_line.main(self.argv)
        if code:
            raise RuntimeError(f"worker {index}: exit status {code}: {err.getvalue().strip()[-500:]}")
        return code


def _passed_on() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(_PASSED_ON)}


def check_ray_options(args: argparse.Namespace) -> None:
    """``--executor ray``'s options, checked before anything is opened or loaded."""
    store = args.store or os.environ.get("LANGRAG_STORE") or ""
    if not store.startswith(("postgresql://", "postgres://")):
        raise ConfigError("--executor ray needs a PostgreSQL --store (postgresql://...) that every "
                          "worker reaches: the workers share the run through it")
    if getattr(args, "batch", False):
        raise ConfigError("--batch and --executor ray do not go together: a batch is one request")
    if args.workers < 1:
        raise ConfigError("--workers must be at least 1")


@dataclass(frozen=True)
class ResolvedModel:
    """The judge's model as each actor makes it: from the judge specification, in the actor (a
    local model loaded there, on its GPU, rather than pickled from here)."""

    spec: str

    def __call__(self) -> Any:
        from ..models import resolve_judge
        return resolve_judge(self.spec).model


def command_executor(args: argparse.Namespace, judge_spec: str | None) -> Any:
    """The executor a command judging through ``run.aevaluate`` passes: None (this process) or,
    with ``--executor ray``, a RayExecutor whose actors make the judge's model from ``judge_spec``."""
    if getattr(args, "executor", "local") != "ray":
        return None
    from ..run.evaluation import RayExecutor
    from ._common import say
    return RayExecutor(workers=args.workers, address=args.ray_address, num_gpus_per_worker=args.ray_gpus,
                       model=ResolvedModel(judge_spec) if judge_spec else None, env=_passed_on(),
                       on_event=lambda line: say(line, err=True))


def run_command_on_ray(args: argparse.Namespace) -> None:
    """Judge the command's run on Ray actors, each running the whole command; returns once they
    are done (or lost)."""
    from ..runtime.ray_executor import run_workers_on_ray
    from ._common import say
    check_ray_options(args)
    argv = list(getattr(args, "argv", None) or sys.argv[1:]) + ["--executor", "local"]
    env = _passed_on()
    say(f"ray: {args.workers} worker(s) judging the run" + (f" on {args.ray_address}" if args.ray_address else ""),
        err=True)
    outcomes = run_workers_on_ray(CommandWork(argv, env), workers=args.workers, address=args.ray_address,
                                  num_gpus_per_worker=args.ray_gpus)
    lost = [o for o in outcomes if o.lost]
    for o in lost:
        say(f"ray: worker {o.index} lost ({o.lost}); the others took its items over", err=True)
    if len(lost) == len(outcomes):
        raise ConfigError("ray: every worker was lost; run the same command again to resume")
