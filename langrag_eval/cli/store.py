"""``langrag-eval store``: move runs between stores, and see who works on a shared run.

    langrag-eval store copy .langrag/runs.sqlite postgresql://me@db/evals        # every run
    langrag-eval store copy .langrag/runs.sqlite postgresql://me@db/evals --run grade-1a2b
    langrag-eval store status RUN --store postgresql://me@db/evals

Workers need no command of their own: start the same judging command, with the same
``--store postgresql://...``, on as many machines as you like; they share the run's items.
"""

from __future__ import annotations

import argparse
import datetime as dt

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._common import add_run_argument, add_store_option, open_store_to_read, run_argument, run_listing, say, shown
from ._files import declare_files, store_path

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..runtime import open_store

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("store", help="copy runs between stores; progress of workers on a shared run",
                              description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    c = sub.add_parser("copy", help="copy runs (judgments, call log, artifacts, reply cache) into another store")
    c.add_argument("source", help="store to read: a SQLite file or postgresql:// URL")
    c.add_argument("target", help="store to write: a SQLite file or postgresql:// URL")
    c.add_argument("--run", dest="runs", action="append", default=None, help="a run id or prefix (repeatable)")
    declare_files(c, reads={"SOURCE": lambda a: store_path(argparse.Namespace(store=a.source))},
                  writes={"TARGET": lambda a: store_path(argparse.Namespace(store=a.target))},
                  stores={"SOURCE", "TARGET"})
    c.set_defaults(handler=_copy)
    s = sub.add_parser("status", help="each run's state, or one run's workers and their progress")
    add_run_argument(s, "run id or prefix (none: every run's state)")
    add_store_option(s)
    declare_files(s, reads={"--store": store_path}, stores={"--store"})
    s.set_defaults(handler=_status)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])


def _copy(args: argparse.Namespace) -> int:
    # The source is only read: opened read-only (SQLite's mode=ro, a read-only PostgreSQL session),
    # so that neither the copy nor a refusal (a damaged or newer store) can change it.
    from ..runtime import open_store
    source = open_store(args.source, read_only=True)
    if not args.runs and not source.runs():
        raise ConfigError(f"{source.path}: holds no run to copy")
    runs = [source.run(r)["id"] for r in args.runs] if args.runs else None
    target = open_store(args.target)
    copied = source.copy_runs(target, runs)
    say(f"copied into {shown(target.path)}: " + ", ".join(f"{n} {table}" for table, n in copied.items()))
    return 0


def _status(args: argparse.Namespace) -> int:
    store = open_store_to_read(args.store)
    name = run_argument(args)
    if not name:
        for r in store.runs():
            state = "finished" if r["finished"] else "unfinished"
            say(f"{shown(r['id']):<32} {shown(r['kind']):<12} {state}")
            if (made := run_listing(store, r)) is not None:
                say(made)
        return 0
    run = store.run(name)
    judged = store.judgments(run["id"])
    say(f"run {shown(run['id'])} ({shown(run['kind'])}): {len(judged)} judgments stored, "
        f"{sum(j['scored'] for j in judged)} scored; {'finished' if run['finished'] else 'not finished'}")
    if (made := run_listing(store, run)) is not None:
        say(made)
    holder = store.lease_holder(run["id"])
    if holder is not None:
        until = dt.datetime.fromtimestamp(holder["expires"], dt.timezone.utc).strftime("%H:%M:%S")
        say(f"  written by process {holder['pid']} on {shown(holder['host'])} (lease until {until} UTC)")
    for w in getattr(store, "workers", lambda _: [])(run["id"]):
        say(f"  worker {shown(w['host'])}:{w['pid']}: {w['finished']} finished, {w['holding']} in hand, "
            f"{'alive' if w['alive'] else 'gone'}")
    return 0
