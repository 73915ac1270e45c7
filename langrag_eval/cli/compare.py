"""``langrag-eval compare RUN_A RUN_B``: did the change from run A (the baseline) to run B help?

    langrag-eval compare grade-3f2a9c grade-81bd02 --json comparison.json

Pairs the items of the two runs by content (question and reference), and prints per metric both
means, the difference B - A with a 95 % interval, the paired test (McNemar for accept/reject,
Wilcoxon signed-rank for grades and THELMA scores) with Holm-adjusted p-values, per-subject rows,
the items unscored on either side, and the items that flipped between accepted and rejected with
both judges' reasons. ``--json`` writes all of it (every unscored and flipped item).
"""

from __future__ import annotations

import argparse

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._common import add_store_option, open_store_to_read, say, shown
from ._files import declare_files, store_path
from ._options import (
    add_comparison_options, add_json_option, check_comparison_options, json_output, write_json,
)

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..compare import compare_runs, format_comparison

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare", help="compare two runs item by item, with paired tests and intervals",
        description="Compare run B against baseline run A on the items both graded: differences with "
                    "intervals, paired tests (Holm-adjusted), unscored and flipped items.")
    p.add_argument("run_a", metavar="RUN_A", help="baseline run id (or a unique prefix)")
    p.add_argument("run_b", metavar="RUN_B", help="run to compare with the baseline")
    p.add_argument("--level", type=float, default=0.95,
                   help="confidence level of the intervals (default 0.95)")
    p.add_argument("--flips", type=int, default=10, help="flipped items to print (default 10)")
    add_json_option(p, "the whole comparison")
    add_comparison_options(p)
    add_store_option(p)
    declare_files(p, reads={"--store": store_path}, writes={"--json": "json_out"}, stores={"--store"})
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..compare import compare_runs, format_comparison
    check_comparison_options(args)
    if not 0.0 < args.level < 1.0:
        raise ConfigError(f"--level {args.level}: expected a confidence level between 0 and 1, e.g. 0.95")
    out = json_output(args)
    store = open_store_to_read(args.store)
    comparison = compare_runs(store, args.run_a, args.run_b, level=args.level, seed=args.seed,
                              resamples=args.resamples, agent=args.agent, agent_b=args.agent_b)
    say(format_comparison(comparison, flips=max(0, args.flips)))
    if out is not None:
        write_json(out, comparison.as_dict())
        say(f"  comparison: {shown(out)}")
    return 0
