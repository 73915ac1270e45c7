"""``langrag-eval run DATA --evaluator ID [--evaluator ID ...]``: any evaluators, the package's own or
an installed package's (``mypkg/citations``, found by entry point: :mod:`langrag_eval.run.plugins`),
over one sample file, as one run in the store. Each evaluator's typed summary is printed and
stored (artifact ``summary/<id>``), so ``report``, ``compare`` and ``gate`` show it with no edit to
the package.

The file (JSONL, CSV or TSV) holds one sample a row: ``question``, ``answer``, ``contexts`` (a JSON
list of texts, or one text), ``reference`` and ``id``, each optional; other columns are the
sample's metadata."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError
from ..files.tables import parse_json, read_table
from ._common import add_judge_options, open_session, report_issues, say, say_reuse, setup_judge, shown
from ._files import JUDGE_READS, declare_files, store_path
from ._options import INPUT, group
from ._summaries import SUMMARY_PREFIX, format_summary

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..results import Summary
    from ..run.plugins import evaluator_ids, load_evaluator
    from ..runtime.identity import file_digest
    from ..types import Sample

__all__ = ["SUMMARY_PREFIX", "format_summary", "register"]

_FIELDS = ("id", "question", "answer", "contexts", "reference")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run", help="run any evaluators (built-in or installed) over a sample file as one run",
        description="Run evaluators over one sample file as one run in the store, print each one's "
                    "summary and store it for report, compare and gate. An installed package's "
                    "evaluator is named namespace/name (mypkg/citations).")
    group(p, INPUT).add_argument("file", metavar="DATA", help="JSONL, CSV or TSV: question, answer, contexts, reference, id")
    p.add_argument("--evaluator", action="append", required=True, metavar="ID",
                   help="an evaluator id, repeatable: vrag, thelma, grammar or an installed "
                        "namespace/name (langrag-eval run --list names them)")
    p.add_argument("--concurrency-items", type=int, default=None, metavar="N",
                   help="samples judged at once per evaluator (default: the judge's concurrency)")
    add_judge_options(p)
    declare_files(p, reads={"DATA": "file", **JUDGE_READS}, writes={"--store": store_path},
                  stores={"--store"})
    p.set_defaults(handler=handle)


def _contexts(value: Any, line: int, path: str) -> Any:
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            return parse_json(value)  # strict: NaN, a repeated key or half a surrogate pair refused
        except json.JSONDecodeError as exc:
            raise DataError(f"contexts is not a JSON list ({exc.msg})", path=path, line=line,
                            field="contexts") from None
    return value


def read_sample_file(path: str, notes: list[str] | None = None) -> tuple[list[Sample], list[DataError]]:
    """The file's samples, and the rows that could not be read (each one line: file, line, field);
    a note on the older column names read goes to ``notes``."""
    from ..types import Sample
    from ._columns import Column, choose_columns
    table = read_table(path)
    # the Sample names, or the older ones (query, response, sources, label, qid) where the file has them
    chosen, said = choose_columns(table.path, table.columns, [Column(f, required=False) for f in _FIELDS], {},
                                   format=table.format)
    if notes is not None:
        notes.extend(said)
    samples, issues = [], list(table.issues)
    for row in table.rows:
        values = row.values
        try:
            known = {k: values[c] for k, c in chosen.items() if values.get(c) not in (None, "")}
            if "contexts" in known:
                known["contexts"] = _contexts(known["contexts"], row.line, table.path)
            if "id" in known:
                known["id"] = str(known["id"])
            metadata = {k: v for k, v in values.items() if k not in chosen.values()}
            samples.append(Sample(**known, metadata=metadata))
        except DataError as exc:
            issues.append(exc)
        except ValueError as exc:  # pydantic's ValidationError: one line naming the row
            issues.append(DataError(str(exc).splitlines()[0], path=table.path, line=row.line))
    return samples, issues


def handle(args: argparse.Namespace) -> int:
    from ..run.plugins import evaluator_ids, load_evaluator
    from ..runtime.identity import file_digest
    if args.concurrency_items is not None and args.concurrency_items < 1:
        raise ConfigError("--concurrency-items must be at least 1")
    ids = list(dict.fromkeys(args.evaluator))
    known = evaluator_ids()
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ConfigError(f"unknown evaluator {unknown[0]!r}; installed: {', '.join(known)}")
    notes: list[str] = []
    samples, issues = read_sample_file(args.file, notes)
    report_issues(issues)
    if not samples:
        raise DataError("no row could be read; nothing to evaluate", path=args.file)
    setup = setup_judge(args)
    evaluators = {i: load_evaluator(i, setup.judge) for i in ids}
    config = {"file": args.file, "evaluators": ids, "judge": setup.judge.model_id,
              "tasks": {i: e.task_name() for i, e in evaluators.items()}}
    session = open_session(setup.store, args, "run", config, judge=setup.judge.model_id,
                           inputs={"file": file_digest(args.file, what="sample file")})
    _, summaries = session.run_and_record(samples, evaluators, concurrency=args.concurrency_items)
    say(f"run {shown(session.run_id)} over {shown(args.file)} (judge {shown(setup.judge.model_id)})")
    for note in notes:  # with the results: a command that fails prints its error alone
        say(f"  {shown(note)}")
    if issues:
        say(f"  {len(issues)} row(s) skipped, see the warnings above")
    for i, s in summaries.items():
        say(format_summary(i, s))
    say_reuse(setup.store, session.run_id)
    return 0
