"""``langrag-eval grade FILE``: grade a RAG app's answers with vRAG-Eval.

    langrag-eval grade qa.csv --label-col ground_truth --human-cols ann1,ann2,ann3 --subject-col area

FILE is CSV, TSV or JSONL with a question, answer and label per row (column names configurable).
Prints a summary (score distribution, accept rate, unscored items and why, a per-subject breakdown,
agreement with the human score columns when given) and writes one JSON line per item to ``--out``.
Every judgment and the ``vrag`` summary go to the run store; the same command resumes the same run
and makes no model call for items already graded.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError
from ..files.writing import atomic_write
from ._common import add_judge_options, open_session, report_issues, say, say_reuse, say_usage, setup_judge, shown
from ._files import JUDGE_READS, declare_files, store_path
from ._columns import Column, add_column_options, choose_columns, table_columns
from ._options import INPUT, add_results_option, add_table_options, group, results_file, results_path
from ._startup import loading

if TYPE_CHECKING:  # the grading stack is imported when the command runs, never for --help
    from ..grading import GradingScan, VragGrade, VragGrader, VragTally
    from ..results import Unscored
    from ..run.session import RunSession

__all__ = ["register"]

_COLUMNS = (Column("question"), Column("answer"), Column("reference", "the ground-truth answer"),
            Column("id", required=False))


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "grade", help="grade answers against labels with the vRAG-Eval 5-level rubric",
        description="Grade each answer 1-5 against its label (the label is definitive), accept 4-5 "
                    "and reject 1-3, and compare with human grades when the file has them.")
    group(p, INPUT).add_argument("file", metavar="FILE", help="CSV, TSV or JSONL: question, answer, reference per row")
    add_table_options(p, {})
    add_column_options(p, _COLUMNS[:3])
    group(p, INPUT).add_argument("--human-cols", default="", help="human score columns, comma-separated (a,b,c)")
    group(p, INPUT).add_argument("--subject-col", default=None, help="subject-area column for a per-subject breakdown")
    p.add_argument("--combine", default="median",
                   help="combine the human columns by 'median' (default) or take one annotator's column")
    p.add_argument("--even", choices=("low", "high", "random"), default="random",
                   help="median of an even number of human scores (two graders): one of the two at "
                        "random, seeded by --seed, as the vRAG-Eval paper did (default), the lower "
                        "middle, or the upper middle")
    p.add_argument("--seed", type=int, default=0, help="seed for --even random (default 0)")
    p.add_argument("--threshold", type=int, default=4, help="lowest accepted score (default 4)")
    p.add_argument("--confidence", action="store_true", help="ask the judge for its confidence (0-100)")
    p.add_argument("--rubric", default=None, help="file with a rubric replacing the five levels")
    group(p, INPUT).add_argument("--examples", default=None,
                   help="graded few-shot examples: JSON list or JSONL/CSV with question, label, "
                        "answer, score, reason")
    p.add_argument("--prompt", default=None, help="prompt template replacing vrag/grade (a file path)")
    add_results_option(p, ".vrag.jsonl")
    add_judge_options(p)
    declare_files(p, reads={"FILE": "file", "--rubric": "rubric", "--examples": "examples",
                            "--prompt": "prompt", **JUDGE_READS},
                  writes={"--out": results_path(".vrag.jsonl"), "--store": store_path}, stores={"--store"})
    p.set_defaults(handler=handle)


def _record(item: Any, result: VragGrade | Unscored, scan: GradingScan, human: int | None) -> dict[str, Any]:
    from ..grading import VragGrade
    base: dict[str, Any] = {"id": item.id, "line": item.metadata["line"], "subject": item.metadata.get("subject")}
    if isinstance(result, VragGrade):
        base.update(score=result.score, accepted=result.accepted, confidence=result.confidence,
                    reason=result.reason, unscored=None, raw=result.raw)
    else:
        base.update(score=None, accepted=None, confidence=None, reason=None,
                    unscored={"cause": result.cause, "reason": result.reason}, raw=result.raw)
    if scan.columns.humans:
        base.update(human=human, humans=scan.humans.get(item.id))
    return base


def format_summary(s: dict[str, Any]) -> str:
    lines = [f"  scored {s['scored']} of {s['items']}; unscored {s['unscored']['count']}"
             + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(s["unscored"]["by_cause"].items())) + ")"
                if s["unscored"]["count"] else "")]
    dist = s["distribution"]
    lines += ["  score  " + "".join(f"{k:>6}" for k in dist), "  count  " + "".join(f"{v:>6}" for v in dist.values())]
    rate = "n/a" if s["accept_rate"] is None else f"{100 * s['accept_rate']:.1f}%"
    lines.append(f"  accepted {s['accepted']} of {s['scored']} ({rate}; scores >= {s['threshold']})"
                 + ("" if s["mean_score"] is None else f"; mean score {s['mean_score']:.2f}")
                 + ("" if s["mean_confidence"] is None else f"; mean confidence {s['mean_confidence']:.1f}"))
    for u in s["unscored"]["items"][:10]:
        lines.append(f"  unscored {shown(u['id'])}: {u['cause']}: {shown(u['reason'])}")
    if s["unscored"]["count"] > 10:
        lines.append(f"  ... and {s['unscored']['count'] - 10} more unscored (see the results file)")
    if s["subjects"]:
        lines.append("  by subject:")
        width = max(len(shown(k)) for k in s["subjects"])
        for name, b in s["subjects"].items():
            name = shown(name)
            rate = "n/a" if b["accept_rate"] is None else f"{100 * b['accept_rate']:5.1f}%"
            mean = "n/a" if b["mean_score"] is None else f"{b['mean_score']:.2f}"
            lines.append(f"    {name:<{width}}  items {b['items']:>4}  accepted {rate}  mean {mean}  "
                         f"unscored {b['unscored']['count']}")
    return "\n".join(lines)


def handle(args: argparse.Namespace) -> int:
    with loading():
        from ..grading import ARTIFACT, Columns, VragGrader, VragTally, scan_grading_file
        from ..grading.io import read_examples
        from ..runtime.concurrency import run_sync
        from ..runtime.identity import file_digest

    if not 1 <= args.threshold <= 5:
        raise ConfigError("--threshold must be a score from 1 to 5")
    humans = tuple(h.strip() for h in args.human_cols.split(",") if h.strip())
    if args.combine != "median" and args.combine not in humans:
        raise ConfigError(f"--combine {args.combine!r}: expected median or one of --human-cols "
                          f"({', '.join(humans) or 'none given'})")
    given = {c.name: getattr(args, f"{c.name}_col") for c in _COLUMNS}
    chosen, notes = choose_columns(args.file, table_columns(args.file, args.format), _COLUMNS, given,
                                   format=args.format)
    columns = Columns(question=chosen["question"], answer=chosen["answer"], label=chosen["reference"],
                      id=chosen.get("id"), humans=humans, subject=args.subject_col)
    out = results_file(args, ".vrag.jsonl")
    # read once for its problems, ids and human grades; the rows themselves are read again a chunk
    # at a time while they are graded, so memory does not grow with the file
    scan = scan_grading_file(args.file, columns, format=args.format)
    report_issues(scan.issues)
    if not scan.count:
        raise DataError("no row could be read; nothing to grade", path=scan.path)
    grader_options = dict(threshold=args.threshold, confidence=args.confidence,
                          rubric=Path(args.rubric) if args.rubric else None,
                          examples=read_examples(args.examples) if args.examples else [],
                          prompt=args.prompt)
    setup = setup_judge(args, executor=True)
    grader = VragGrader(setup.judge, **grader_options)  # type: ignore[arg-type]
    config = {"file": str(Path(args.file).resolve()),
              "columns": columns.__dict__, "judge": setup.judge.model_id, "threshold": args.threshold,
              "confidence": args.confidence, "rubric": grader.rubric_text,
              "examples": [e.model_dump() for e in grader.examples],
              "prompt": grader.prompts()["grade"].body}
    session = open_session(setup.store, args, "grade", config, judge=setup.judge.model_id,
                           inputs={"file": file_digest(args.file, what="grading file")},
                           judge_spec=setup.spec, items_on_executor=True)
    run_id = session.run_id
    combined: dict[str, int | None] = {}
    if humans:
        # numpy comes with the statistics: loaded only when there are human grades to compare
        from ..stats import combine

        combined = combine(scan.humans, args.combine, even=args.even, seed=args.seed)
    tally = VragTally(threshold=args.threshold, by_subject=bool(args.subject_col))
    judge_scores: dict[str, int | None] = {}
    run_sync(_grade_to(out, scan, grader, session, tally, combined, judge_scores if humans else None))
    agreement_out = None
    if humans:
        from ..stats import agreement, combine, describe_combination

        how = describe_combination(args.combine, humans, even=args.even, seed=args.seed)
        agreement_out = agreement(judge_scores, combined, names=("judge", "humans"),
                                  threshold=args.threshold).as_dict()
        agreement_out["humans"] = how
        agreement_out["annotators"] = {
            h: agreement(judge_scores, combine(scan.humans, h), names=("judge", h),
                         threshold=args.threshold).as_dict() for h in humans if len(humans) > 1}
    summary = tally.summary(agreement_out)
    summary["input"] = {"file": scan.path, "rows_skipped": scan.skipped, "problems": len(scan.issues)}
    session.record({ARTIFACT: summary}, finished={"items": summary["items"], "accept_rate": summary["accept_rate"],
                                                  "unscored": summary["unscored"]["count"]})
    usage_all = session.usage()
    usage = usage_all["total"]
    say(f"vRAG-Eval grades for {shown(scan.path)} (run {shown(run_id)}, judge {shown(setup.judge.model_id)})")
    for note in notes:  # with the results: a command that fails prints its error alone
        say(f"  {shown(note)}")
    if scan.skipped:
        say(f"  {scan.skipped} row(s) skipped, see the warnings above")
    say(format_summary(summary))
    if agreement_out is not None:
        from ..stats import format_agreement

        say(f"  agreement with the humans ({shown(agreement_out['humans'])}):")
        say(format_agreement(agreement_out, indent="    "))
        for name, r in agreement_out["annotators"].items():
            say(f"    against {shown(name)} alone: exact {_rate(r['exact'])}, binary {_rate(r['binary'])}, "
                f"compared {r['compared']}")
    meter = setup.judge.usage
    say_usage(meter, usage, failure=usage_all.get("top_failure"))
    say_reuse(setup.store, run_id)
    say(f"  results: {shown(out)}")
    return 0


async def _grade_to(out: Path, scan: GradingScan, grader: VragGrader, session: RunSession, tally: VragTally,
                    combined: dict[str, int | None], judge_scores: dict[str, int | None] | None) -> None:
    """Grade the file's rows through the run session, a chunk at a time; each item's line goes to
    ``out`` (in input order), its content to the run's ``item_contents`` and its result into
    ``tally`` as it is done, and is then let go."""
    from ..grading import VragGrade

    def content(s: Any, result: Any) -> dict[str, Any]:
        human = combined.get(s.id or "")
        return {"id": s.id, "question": s.question, "answer": s.answer, "contexts": s.context_texts(),
                "reference": s.reference, "subject": s.metadata.get("subject"),
                # the humans' grade, on the judge's "grade"
                "human": None if human is None else {
                    "score": "grade", "value": human, "passed": human >= grader.threshold}}

    by_subject = tally.by_subject
    with atomic_write(out) as fh:
        async for s, result in session.astream(scan.samples(), grader, name="vrag", total=scan.count,
                                               contents=content):
            item = s.id or ""
            fh.write(json.dumps(_record(s, result, scan, combined.get(item)), ensure_ascii=False) + "\n")
            tally.add(item, result, s.metadata.get("subject") if by_subject else None)
            if judge_scores is not None:
                judge_scores[item] = result.score if isinstance(result, VragGrade) else None


def _rate(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"
