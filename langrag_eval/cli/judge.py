"""``langrag-eval judge audit``: measure a judge before trusting its grades.

    langrag-eval judge audit --judge openai:gpt-4o --max-items 40
    langrag-eval judge audit --judge local --data mine.csv --human-col expert --max-items 20

Runs the judge through the audit batteries (agreement with human labels on shipped PandaLM and
HaluEval data, or on your own graded file; position, verbosity, self-consistency and injection
probes; reliability and cost) and prints the judge card: every figure with its 95 % interval and
n, beside its threshold, and one verdict line per use. The card goes to the run store as the
``judge_card`` artifact (``langrag-eval report RUN`` shows it); the same command resumes the same
run and makes no model call for items already judged.
"""

from __future__ import annotations

import argparse

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._common import add_judge_options, check_call_options, open_session, report_issues, say, setup_judge, shown
from ._files import JUDGE_READS, declare_files, output_file, store_path
from ._options import INPUT, OUTPUT, add_json_option, add_table_options, column_names, group, json_output, write_json

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..audit import BATTERIES, audit_run_id, format_card, read_labelled_file, run_audit
    from ..grading.io import Columns
    from ..report import write_report
    from ..runtime.identity import file_digest

__all__ = ["register"]

_COLUMNS = {"question": "", "answer": "", "label": ""}


def register(subparsers: argparse._SubParsersAction) -> None:
    from ._options import AUDIT_BATTERIES as BATTERIES
    p = subparsers.add_parser("judge", help="judge qualification: audit a judge and print its card",
                              description="Commands about the judge itself.")
    sub = p.add_subparsers(dest="judge_command", metavar="SUBCOMMAND")
    a = sub.add_parser(
        "audit", help="agreement with humans, bias probes, reliability and cost of a judge",
        description="Run a judge through the audit batteries and print its card: each measure with a "
                    "95 % interval and n beside its threshold, and a verdict (fit, fit with caveats, "
                    "unfit) for grading, pairwise comparison and groundedness.")
    a.add_argument("--max-items", type=int, default=None,
                   help="items per battery, sampled stratified by label (default: all shipped items)")
    a.add_argument("--temperature", type=float, default=0.7,
                   help="the temperature the judge is used at, for the self-consistency probe "
                        "(default 0.7; 0 runs the temperature-0 probe only)")
    a.add_argument("--batteries", default=",".join(BATTERIES),
                   help=f"comma-separated subset of {','.join(BATTERIES)} (default: all)")
    group(a, INPUT).add_argument("--data", default=None,
                   help="your own graded file (CSV, TSV or JSONL: question, answer, label and a 1-5 human "
                        "score) replacing the shipped correctness items")
    group(a, INPUT).add_argument("--human-col", default="score", help="human score column of --data (default score)")
    add_table_options(a, _COLUMNS, of="--data", format=False)
    a.add_argument("--threshold", type=int, default=4,
                   help="lowest accepted human score in --data (default 4)")
    a.add_argument("--seed", type=int, default=0, help="seed of the sampling and the bootstrap (default 0)")
    group(a, OUTPUT).add_argument("--report", default=None, help="also write the HTML report of the audit run here")
    add_json_option(a, "the card")
    add_judge_options(a)
    declare_files(a, reads={"--data": "data", **JUDGE_READS},
                  writes={"--json": "json_out", "--report": "report", "--store": store_path}, stores={"--store"})
    a.set_defaults(handler=handle_audit)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])


def handle_audit(args: argparse.Namespace) -> int:
    from ..audit import BATTERIES, audit_run_id, format_card, read_labelled_file, run_audit
    from ..grading.io import Columns
    from ..report import write_report
    from ..runtime.identity import file_digest
    check_call_options(args)
    if args.max_items is not None and args.max_items < 1:
        raise ConfigError("--max-items must be at least 1")
    if args.temperature < 0:
        raise ConfigError("--temperature must not be negative")
    if not 1 <= args.threshold <= 5:
        raise ConfigError("--threshold must be a score from 1 to 5")
    batteries = tuple(b.strip() for b in args.batteries.split(",") if b.strip())
    unknown = [b for b in batteries if b not in BATTERIES]
    if unknown or not batteries:
        raise ConfigError(f"--batteries {args.batteries!r}: choose from {', '.join(BATTERIES)}")
    answers, data_name, digest = None, None, None
    if args.data:
        columns = Columns(**column_names(args, _COLUMNS), id=args.id_col)
        answers, issues = read_labelled_file(args.data, human_col=args.human_col, columns=columns,
                                             threshold=args.threshold)
        report_issues(issues)
        data_name = f"{args.data} ({len(answers)} items, human column {args.human_col})"
        digest = file_digest(args.data, what="labelled file")
    json_out = json_output(args)
    report = output_file(args.report, "--report") if args.report else None
    setup = setup_judge(args)
    default_id, config = audit_run_id(setup.judge.model_id, max_items=args.max_items, temperature=args.temperature,
                                      batteries=batteries, seed=args.seed, data=digest,
                                      human_col=args.human_col if args.data else None,
                                      threshold=args.threshold)
    run_id = open_session(setup.store, args, "judge-audit", config, judge=setup.judge.model_id,
                          default_id=default_id).run_id
    card = run_audit(setup.judge, run_id=run_id, max_items=args.max_items, temperature=args.temperature,
                          answers=answers, batteries=batteries, seed=args.seed, data_name=data_name)
    say(format_card(card))
    if json_out is not None:
        write_json(json_out, card.model_dump(mode="json"))
        say(f"card: {shown(json_out)}")
    if report is not None:
        say(f"report: {shown(write_report(setup.store, run_id, report))}")
    return 0
