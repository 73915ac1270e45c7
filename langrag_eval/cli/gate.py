"""``langrag-eval gate RUN --baseline RUN_A --max-drop accept_rate=0.02``: a regression gate for CI.

    langrag-eval gate grade-81bd02 --baseline grade-3f2a9c --max-drop accept_rate=0.02 \\
        --max-drop gr=0.05 --junit gate.xml

Exit status 0 when no gated metric drops by more than allowed with confidence (the favourable end of
its interval, not the point estimate, lies below the allowed drop), 1 when one does, 2 on bad input
or when a metric cannot be decided (no item scored in both runs, or fewer than ``--min-n``). With
``--latest-window`` RUN is a ``thelma --traces --window`` run and its latest window is gated against
its baseline window (or the window ``--baseline`` names), unpaired. A pass
whose interval still reaches beyond the allowed drop is marked PASS* and says how small a drop the
comparison could have detected. Prints a one-screen summary and,
with ``--junit``, writes a JUnit XML file that CI systems show as test results.
"""

from __future__ import annotations

import argparse

from typing import TYPE_CHECKING

from ..errors import ConfigError, LangragError
from ..files.writing import write_text_atomic
from ._common import add_store_option, open_store_to_read, say, shown
from ._files import declare_files, output_file, store_path
from ._options import add_comparison_options, check_comparison_options

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..compare import format_gate, gate_runs, junit_error, junit_xml

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "gate", help="fail (exit 1) when a run falls below a baseline run by more than allowed",
        description="Compare RUN with the baseline and exit 1 when a gated metric drops by more than "
                    "its --max-drop with confidence, 0 when none does, 2 on bad input.")
    p.add_argument("run", metavar="RUN", help="the run to gate (id or unique prefix)")
    p.add_argument("--baseline", help="the baseline run (e.g. the main branch's); with --latest-window, the "
                                      "baseline window by its start as printed (default: the run's own)")
    p.add_argument("--latest-window", action="store_true",
                   help="RUN is a `thelma --traces --window` run: gate its latest window against its "
                        "baseline window (different traces: compared unpaired)")
    p.add_argument("--max-drop", action="append", default=[], metavar="METRIC=DROP",
                   help="allowed drop of a metric, e.g. accept_rate=0.02 (2 points), grade=0.1, "
                        "gr=0.05 (repeatable; at least one)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence over all gated metrics together (default 0.95)")
    p.add_argument("--min-n", type=int, default=0,
                   help="fewest items scored in both runs for a metric to be decided (default 0: any); "
                        "below it the gate is undecided (exit 2) instead of passing for lack of evidence")
    p.add_argument("--junit", default=None, help="write a JUnit XML report to this file")
    add_comparison_options(p)
    add_store_option(p)
    declare_files(p, reads={"--store": store_path}, writes={"--junit": "junit"}, stores={"--store"})
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..compare import format_gate, gate_runs, junit_error, junit_xml
    junit = output_file(args.junit, "--junit") if args.junit else None
    try:
        check_comparison_options(args)
        if args.min_n < 0:
            raise ConfigError(f"--min-n {args.min_n}: expected a number of items, 0 or more, e.g. --min-n 30")
        if args.latest_window:
            from ..compare.window_gate import gate_latest_window
            result = gate_latest_window(open_store_to_read(args.store), args.run, args.max_drop,
                                        baseline_window=args.baseline, confidence=args.confidence, seed=args.seed,
                                        resamples=args.resamples, min_n=args.min_n)
        elif args.baseline is None:
            raise ConfigError("gate: give --baseline RUN (or --latest-window to gate a monitoring run's latest window)")
        else:
            result = gate_runs(open_store_to_read(args.store), args.run, args.baseline, args.max_drop,
                               confidence=args.confidence, seed=args.seed, resamples=args.resamples,
                               agent=args.agent, agent_b=args.agent_b, min_n=args.min_n)
    except LangragError as exc:
        if junit is not None:  # CI shows the reason instead of a missing report
            write_text_atomic(junit, junit_error(str(exc)))
        raise
    say(format_gate(result))
    if junit is not None:
        write_text_atomic(junit, junit_xml(result))
        say(f"junit: {shown(junit)}")
    return result.exit_code
