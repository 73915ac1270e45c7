"""``langrag-eval agreement A B``: how far two graders agree, from two score files.

    langrag-eval agreement results.jsonl experts.csv --b-score-col expert

Each file is CSV, TSV or JSONL with an id column and a score column (1-5; names configurable).
Items are matched by id. A score cell that is empty or ``null`` counts as unscored; one that is not
an integer from 1 to 5 is reported (file, line, field) and counted as unscored; a repeated id is
reported and its later row skipped. Unscored and unmatched items are counted, never dropped silently.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._common import report_issues, say, shown
from ._files import declare_files
from ._options import add_json_option, json_output, write_json

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..grading.io import read_scores
    from ..stats import agreement, format_agreement

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "agreement", help="agreement statistics between two score files (exact, binary, kappa, tau)",
        description="Exact 5-level and binary accept/reject agreement, confusion matrices, reject "
                    "rates, Cohen's kappa (plain and quadratic), Kendall tau-b and Spearman.")
    p.add_argument("a", metavar="A", help="first score file (CSV, TSV or JSONL)")
    p.add_argument("b", metavar="B", help="second score file")
    p.add_argument("--id-col", default="id", help="id column of both files (default id)")
    p.add_argument("--score-col", default="score", help="score column of both files (default score)")
    p.add_argument("--a-id-col", default=None, help="id column of A, if it differs")
    p.add_argument("--b-id-col", default=None, help="id column of B, if it differs")
    p.add_argument("--a-score-col", default=None, help="score column of A, if it differs")
    p.add_argument("--b-score-col", default=None, help="score column of B, if it differs")
    p.add_argument("--names", default=None, help="names of the two graders, comma-separated "
                                                 "(default: the score column or file names)")
    p.add_argument("--threshold", type=int, default=4, help="lowest accepted score (default 4)")
    add_json_option(p, "the statistics")
    declare_files(p, reads={"A": "a", "B": "b"}, writes={"--json": "json_out"})
    p.set_defaults(handler=handle)


def _pair(value: str | None, what: str) -> tuple[str, str] | None:
    if value is None:
        return None
    parts = [v.strip() for v in value.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ConfigError(f"{what} takes two different names separated by a comma, got {value!r}")
    return parts[0], parts[1]


def handle(args: argparse.Namespace) -> int:
    from ..grading.io import read_scores
    from ..stats import agreement, format_agreement
    if not 1 <= args.threshold <= 5:
        raise ConfigError("--threshold must be a score from 1 to 5")
    json_out = json_output(args)
    a_score, b_score = args.a_score_col or args.score_col, args.b_score_col or args.score_col
    a_scores, a_issues = read_scores(args.a, args.a_id_col or args.id_col, a_score)
    b_scores, b_issues = read_scores(args.b, args.b_id_col or args.id_col, b_score)
    report_issues(a_issues + b_issues)
    names = _pair(args.names, "--names")
    if names is None:
        names = (a_score, b_score) if a_score != b_score else (Path(args.a).stem, Path(args.b).stem)
        if names[0] == names[1]:
            names = ("A", "B")
    result = agreement(a_scores, b_scores, names=names, threshold=args.threshold).as_dict()
    say(f"Agreement: {shown(names[0])} ({shown(args.a)}) against {shown(names[1])} ({shown(args.b)})")
    say(format_agreement(result, indent="  "))
    if json_out is not None:
        write_json(json_out, result)
        say(f"statistics written to {shown(args.json_out)}")
    return 0
