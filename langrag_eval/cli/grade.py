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
from typing import Any

from ..errors import ConfigError, DataError
from ..files import atomic_write
from ..grading import ARTIFACT, Columns, VragGrade, VragGrader, read_grading_file
from ..grading.io import read_examples
from ..results import Unscored
from ..run import evaluate, record_run
from ..runtime.identity import file_digest
from ._common import add_judge_options, open_cli_run, report_issues, say, say_reuse, say_usage, setup_judge
from ._executor import command_executor
from ._files import JUDGE_READS, declare_files, store_path
from ._options import add_results_option, add_table_options, column_names, results_file, results_path

__all__ = ["register"]

_COLUMNS = {"question": "", "answer": "", "label": "the ground-truth answer"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "grade", help="grade answers against labels with the vRAG-Eval 5-level rubric",
        description="Grade each answer 1-5 against its label (the label is definitive), accept 4-5 "
                    "and reject 1-3, and compare with human grades when the file has them.")
    p.add_argument("file", metavar="FILE", help="CSV, TSV or JSONL: question, answer, label per row")
    add_table_options(p, _COLUMNS)
    p.add_argument("--human-cols", default="", help="human score columns, comma-separated (a,b,c)")
    p.add_argument("--subject-col", default=None, help="subject-area column for a per-subject breakdown")
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
    p.add_argument("--examples", default=None,
                   help="graded few-shot examples: JSON list or JSONL/CSV with question, label, "
                        "answer, score, reason")
    p.add_argument("--prompt", default=None, help="prompt template replacing vrag/grade (a file path)")
    add_results_option(p, ".vrag.jsonl")
    add_judge_options(p)
    declare_files(p, reads={"FILE": "file", "--rubric": "rubric", "--examples": "examples",
                            "--prompt": "prompt", **JUDGE_READS},
                  writes={"--out": results_path(".vrag.jsonl"), "--store": store_path}, stores={"--store"})
    p.set_defaults(handler=handle)


def _record(item: Any, result: VragGrade | Unscored, data: Any, human: int | None) -> dict[str, Any]:
    base: dict[str, Any] = {"id": item.id, "line": data.lines[item.id], "subject": data.subjects.get(item.id)}
    if isinstance(result, VragGrade):
        base.update(score=result.score, accepted=result.accepted, confidence=result.confidence,
                    reason=result.reason, unscored=None, raw=result.raw)
    else:
        base.update(score=None, accepted=None, confidence=None, reason=None,
                    unscored={"cause": result.cause, "reason": result.reason}, raw=result.raw)
    if data.humans:
        base.update(human=human, humans=data.humans.get(item.id))
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
        lines.append(f"  unscored {u['id']}: {u['cause']}: {u['reason']}")
    if s["unscored"]["count"] > 10:
        lines.append(f"  ... and {s['unscored']['count'] - 10} more unscored (see the results file)")
    if s["subjects"]:
        lines.append("  by subject:")
        width = max(len(k) for k in s["subjects"])
        for name, b in s["subjects"].items():
            rate = "n/a" if b["accept_rate"] is None else f"{100 * b['accept_rate']:5.1f}%"
            mean = "n/a" if b["mean_score"] is None else f"{b['mean_score']:.2f}"
            lines.append(f"    {name:<{width}}  items {b['items']:>4}  accepted {rate}  mean {mean}  "
                         f"unscored {b['unscored']['count']}")
    return "\n".join(lines)


def handle(args: argparse.Namespace) -> int:
    if not 1 <= args.threshold <= 5:
        raise ConfigError("--threshold must be a score from 1 to 5")
    humans = tuple(h.strip() for h in args.human_cols.split(",") if h.strip())
    if args.combine != "median" and args.combine not in humans:
        raise ConfigError(f"--combine {args.combine!r}: expected median or one of --human-cols "
                          f"({', '.join(humans) or 'none given'})")
    columns = Columns(**column_names(args, _COLUMNS), id=args.id_col, humans=humans, subject=args.subject_col)
    out = results_file(args, ".vrag.jsonl")
    data = read_grading_file(args.file, columns, format=args.format)
    report_issues(data.issues)
    if not data.samples:
        raise DataError("no row could be read; nothing to grade", path=data.path)
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
    run_id = open_cli_run(setup.store, args, "grade", config, judge=setup.judge.model_id,
                          inputs={"file": file_digest(args.file, what="grading file")})
    results = evaluate(data.samples, {"vrag": grader}, run_id=run_id,
                       executor=command_executor(args, setup.spec))["vrag"]
    ids = [s.id or "" for s in data.samples]
    combined: dict[str, int | None] = {}
    agreement_out = None
    if humans:
        judge_scores = {i: (r.score if isinstance(r, VragGrade) else None) for i, r in zip(ids, results)}
        # numpy comes with the statistics: loaded only when there are human grades to compare
        from ..stats import agreement, combine, describe_combination, format_agreement

        combined = combine(data.humans, args.combine, even=args.even, seed=args.seed)
        how = describe_combination(args.combine, humans, even=args.even, seed=args.seed)
        agreement_out = agreement(judge_scores, combined, names=("judge", "humans"),
                                  threshold=args.threshold).as_dict()
        agreement_out["humans"] = how
        agreement_out["annotators"] = {
            h: agreement(judge_scores, combine(data.humans, h), names=("judge", h),
                         threshold=args.threshold).as_dict() for h in humans if len(humans) > 1}
    # no subject column asked for: no per-subject breakdown (not one "(none)" group)
    summary = grader.summarize(results, ids=ids, subjects=[data.subjects[i] for i in ids] if args.subject_col
                               else None, agreement=agreement_out).details
    summary["input"] = {"file": data.path, "rows_skipped": data.skipped, "problems": len(data.issues)}
    from ..report.items import put_item_contents  # after the judging: not on the way to the first call

    # one item's row at a time (a generator, not a list): the rows are not all held twice
    put_item_contents(setup.store, run_id, (
        {"id": s.id, "question": s.question, "answer": s.answer, "contexts": s.context_texts(),
         "reference": s.reference, "subject": data.subjects.get(s.id or ""), "human": combined.get(s.id or "")}
        for s in data.samples))
    record_run(setup.store, run_id, {ARTIFACT: summary},
               finished={"items": summary["items"], "accept_rate": summary["accept_rate"],
                         "unscored": summary["unscored"]["count"]})
    usage = setup.store.usage(run_id)["total"]
    with atomic_write(out) as fh:
        for sample, result in zip(data.samples, results):
            fh.write(json.dumps(_record(sample, result, data, combined.get(sample.id or "")),
                                ensure_ascii=False) + "\n")
    say(f"vRAG-Eval grades for {data.path} (run {run_id}, judge {setup.judge.model_id})")
    if data.skipped:
        say(f"  {data.skipped} row(s) skipped, see the warnings above")
    say(format_summary(summary))
    if agreement_out is not None:
        from ..stats import format_agreement

        say(f"  agreement with the humans ({agreement_out['humans']}):")
        say(format_agreement(agreement_out, indent="    "))
        for name, r in agreement_out["annotators"].items():
            say(f"    against {name} alone: exact {_rate(r['exact'])}, binary {_rate(r['binary'])}, "
                f"compared {r['compared']}")
    meter = setup.judge.usage
    say_usage(meter, usage)
    say_reuse(setup.store, run_id)
    say(f"  results: {out}")
    return 0


def _rate(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"
