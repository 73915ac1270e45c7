"""``langrag-eval report RUN``: write the self-contained HTML report of a run.

    langrag-eval report quickstart-3f2a --out report.html
    langrag-eval report --run quickstart-3f2a                   # the same
    langrag-eval report grade-81bd02 --baseline grade-3f2a9c   # with a comparison section
    langrag-eval report --list
"""

from __future__ import annotations

import argparse
import datetime as dt

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._common import add_run_argument, add_store_option, open_store_to_read, run_argument, run_listing, say, shown
from ._files import check_files, declare_files, output_file, store_path
from ._options import OUTPUT, group

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..report import write_report

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("report", help="write the HTML report of a run",
                              description="Write one self-contained HTML file (no network needed to "
                                          "open it) for a run of the run store.")
    add_run_argument(p)
    group(p, OUTPUT).add_argument("--out", default=None, help="HTML file to write (default: <run>.html)")
    p.add_argument("--list", action="store_true", help="list the runs in the store")
    p.add_argument("--baseline", default=None,
                   help="a baseline run: add a comparison section (differences with intervals, "
                        "flipped items)")
    add_store_option(p)
    declare_files(p, reads={"--store": store_path},
                  writes={"--out": lambda a: a.out or ((a.run or a.run_option) and f"{a.run or a.run_option}.html")},
                  stores={"--store"})
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..report import write_report
    store = open_store_to_read(args.store)
    if args.list:
        for r in store.runs():
            when = dt.datetime.fromtimestamp(r["created"], dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
            state = "finished" if r["finished"] else "unfinished"
            say(f"{shown(r['id']):<32} {shown(r['kind']):<12} {when}  {state}")
            if (made := run_listing(store, r)) is not None:
                say(made)
        return 0
    name = run_argument(args)
    if not name:
        raise ConfigError("give a run id, e.g. langrag-eval report grade-3f2a9c (see: langrag-eval report --list)")
    run = store.run(name)
    out = args.out or f"{run['id']}.html"
    check_files(args, writes={"--out": out})  # the default name holds the whole run id
    path = write_report(store, run["id"], output_file(out, "--out"),
                        baseline=args.baseline)
    say(f"report: {shown(path)}")
    return 0
