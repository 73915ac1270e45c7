"""``langrag-eval agreement A B``: how far two graders agree, from two score files.

    langrag-eval agreement results.jsonl experts.csv --b-score-col expert

Each file is CSV, TSV or JSONL with an id column and a score column (1-5; names configurable).
Items are matched by id. A score cell that is empty or ``null`` counts as unscored; one that is not
an integer from 1 to 5 is reported (file, line, field) and counted as unscored; a repeated id is
reported and its later row skipped. Unscored and unmatched items are counted, never dropped silently.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError
from ..grading.io import parse_score
from ..io import read_table, require_columns
from ..stats import agreement
from ._common import say
from ..files import write_text_atomic
from ._files import output_file

__all__ = ["register", "read_scores", "format_agreement", "report_issues"]


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
    p.add_argument("--json", dest="json_out", default=None, help="also write the statistics to this JSON file")
    p.set_defaults(handler=handle)


def read_scores(path: str, id_col: str, score_col: str) -> tuple[dict[str, int | None], list[DataError]]:
    """``{id: score or None}`` from one file, with the problems found in it."""
    table = read_table(path)
    require_columns(table, {"id": id_col, "score": score_col})
    scores: dict[str, int | None] = {}
    lines: dict[str, int] = {}
    issues = list(table.issues)
    for row in table.rows:
        raw_id = row.values.get(id_col)
        item = str(raw_id).strip() if raw_id is not None else ""
        if not item:
            issues.append(DataError("empty id; row skipped", path=table.path, line=row.line, field=id_col))
            continue
        if item in scores:
            issues.append(DataError(f"repeated id {item!r} (first on line {lines[item]}); row skipped",
                                    path=table.path, line=row.line, field=id_col))
            continue
        value = row.values.get(score_col)
        try:
            scores[item] = parse_score(value)
        except ValueError:
            scores[item] = None
            issues.append(DataError(f"score {value!r} is not an integer from 1 to 5; counted as unscored",
                                    path=table.path, line=row.line, field=score_col))
        lines[item] = row.line
    return scores, issues


def report_issues(issues: list[DataError], *, limit: int = 20) -> None:
    for issue in issues[:limit]:
        say(f"warning: {issue}", err=True)
    if len(issues) > limit:
        say(f"warning: ... and {len(issues) - limit} more problem(s) in the input", err=True)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def format_agreement(r: dict[str, Any], *, indent: str = "") -> str:
    """Plain-text rendering of ``AgreementReport.as_dict()``."""
    a, b = r["names"]
    lines = [
        f"items {r['items']}, compared {r['compared']} (scored by both); unscored: {a} "
        f"{r['unscored'][a]}, {b} {r['unscored'][b]}; without a score: {a} {r['missing'][a]}, "
        f"{b} {r['missing'][b]}",
        f"exact agreement (5 levels)     {_pct(r['exact'])}",
        f"binary agreement (accept >= {r['threshold']}) {_pct(r['binary'])}",
        f"reject rate                    {a} {_pct(r['reject_rate'][a])}, {b} {_pct(r['reject_rate'][b])}",
        f"Cohen's kappa                  {_num(r['kappa'])} (quadratic-weighted {_num(r['weighted_kappa'])})",
    ]
    for label, key in (("Kendall tau-b", "kendall_tau"), ("Spearman rho", "spearman")):
        c = r[key]
        lines.append(f"{label:<31}" + ("n/a" if c is None else f"{c['statistic']:.3f} (p = {c['pvalue']:.3g})"))
    levels = r["labels"]
    lines.append(f"confusion (rows {a}, columns {b}):")
    lines.append("      " + "".join(f"{lv:>6}" for lv in levels))
    lines += [f"{lv:>6}" + "".join(f"{n:>6}" for n in row) for lv, row in zip(levels, r["confusion"])]
    (rr, ra), (ar, aa) = r["binary_confusion"]
    lines += [f"accept/reject (rows {a}, columns {b}):", "            reject  accept",
              f"    reject  {rr:>6}  {ra:>6}", f"    accept  {ar:>6}  {aa:>6}"]
    lines += [f"note: {n}" for n in r["notes"]]
    return "\n".join(indent + line for line in lines)


def _pair(value: str | None, what: str) -> tuple[str, str] | None:
    if value is None:
        return None
    parts = [v.strip() for v in value.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ConfigError(f"{what} takes two different names separated by a comma, got {value!r}")
    return parts[0], parts[1]


def handle(args: argparse.Namespace) -> int:
    if not 1 <= args.threshold <= 5:
        raise ConfigError("--threshold must be a score from 1 to 5")
    json_out = output_file(args.json_out, "--json") if args.json_out else None
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
    say(f"Agreement: {names[0]} ({args.a}) against {names[1]} ({args.b})")
    say(format_agreement(result, indent="  "))
    if json_out is not None:
        write_text_atomic(json_out, json.dumps(result, indent=2))
        say(f"statistics written to {args.json_out}")
    return 0
