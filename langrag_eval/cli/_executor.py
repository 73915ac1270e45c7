"""``--executor ray`` on every judging command: the command's run judged by Ray actors, each running
the same command against the same PostgreSQL store, then read back here for the summary."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from dataclasses import dataclass, field

from ..errors import ConfigError

__all__ = ["add_executor_options", "run_command_on_ray"]

# What a worker needs of the driver's environment: judge keys and endpoints, the store, the judge.
_PASSED_ON = ("LANGRAG_", "OPENAI_", "ANTHROPIC_", "PGPASSWORD", "PGUSER", "HF_")


def add_executor_options(p: argparse.ArgumentParser) -> None:
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


def run_command_on_ray(args: argparse.Namespace) -> None:
    """Judge the command's run on Ray actors; returns once they are done (or lost)."""
    from ..runtime.ray_executor import run_workers_on_ray
    from ._common import say
    store = args.store or os.environ.get("LANGRAG_STORE") or ""
    if not store.startswith(("postgresql://", "postgres://")):
        raise ConfigError("--executor ray needs a PostgreSQL --store (postgresql://...) that every "
                          "worker reaches: the workers share the run through it")
    if getattr(args, "batch", False):
        raise ConfigError("--batch and --executor ray do not go together: a batch is one request")
    argv = list(getattr(args, "argv", None) or sys.argv[1:]) + ["--executor", "local"]
    env = {k: v for k, v in os.environ.items() if k.startswith(_PASSED_ON)}
    say(f"ray: {args.workers} worker(s) judging the run" + (f" on {args.ray_address}" if args.ray_address else ""),
        err=True)
    outcomes = run_workers_on_ray(CommandWork(argv, env), workers=args.workers, address=args.ray_address,
                                  num_gpus_per_worker=args.ray_gpus)
    lost = [o for o in outcomes if o.lost]
    for o in lost:
        say(f"ray: worker {o.index} lost ({o.lost}); the others took its items over", err=True)
    if len(lost) == len(outcomes):
        raise ConfigError("ray: every worker was lost; run the same command again to resume")
