"""``langrag-eval trajectories FILE``: agents' trajectories matched against their references and/or
graded by an LLM judge, as one run in the store. Each evaluator's summary is printed and stored
(artifact ``summary/<id>``), so ``report``, ``compare`` and ``gate`` read it as any run's::

    langrag-eval trajectories runs.jsonl --match strict,superset --args subset
    langrag-eval trajectories runs.jsonl --match none --judge openai:gpt-4o

The file is JSONL, one run a line: ``trajectory`` (a list of messages, or a state holding
``messages``: what :class:`~langrag_eval.trajectories.TrajectorySample` reads, what
``cap.trajectories`` holds), and optionally ``id``, ``question`` and ``reference`` (a trajectory).
A match needs the reference (a line without one is unscored for it, never a silent 0); the judge
runs when ``--judge`` is given, against the reference when the line has one. A line that cannot be
read stops the command with one line naming the file, the line and the field."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError
from ..files.reading import read_text
from ._common import add_call_options, add_store_options, make_judge, open_session, open_store_to_write, say, \
    say_reuse
from ._dryrun import add_dry_run_option
from ._files import JUDGE_READS, declare_files, store_path
from ._summaries import format_summary

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..runtime.identity import file_digest

__all__ = ["read_trajectories", "register"]

MODES = ("strict", "unordered", "subset", "superset")
ARGS = ("exact", "ignore", "subset", "superset")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "trajectories", help="match agents' trajectories against references, or judge them, as one run",
        description="Score agents' trajectories (JSONL: trajectory, reference, question, id) by "
                    "deterministic matches against their references and/or an LLM judge, as one run "
                    "in the store for report, compare and gate.")
    p.add_argument("file", metavar="FILE", help="JSONL, one run a line: trajectory, and reference, question, id")
    p.add_argument("--match", default=",".join(MODES), metavar="MODES",
                   help=f"comma-separated match modes, of {', '.join(MODES)}; 'none' for none (default: all)")
    p.add_argument("--args", default="exact", choices=ARGS, help="how tool arguments compare (default exact)")
    p.add_argument("--threshold", type=int, default=4, help="the judge's lowest passing grade, 1 to 5 (default 4)")
    add_store_options(p)
    p.add_argument("--judge", default=None, help="provider:model (openai:gpt-4o), local, scripted:replies.json: "
                                                 "grade each trajectory 1-5 too (default: no judge)")
    add_call_options(p, concurrency=4)
    add_dry_run_option(p)
    declare_files(p, reads={"FILE": "file", **JUDGE_READS}, writes={"--store": store_path}, stores={"--store"})
    p.set_defaults(handler=handle)


def read_trajectories(path: str) -> list[Any]:
    """The file's trajectory samples; the first line that cannot be read is a DataError naming it."""
    from pydantic import ValidationError

    from ..trajectories import TrajectorySample
    samples = []
    for n, line in enumerate(read_text(Path(path), what="trajectories file").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise DataError(f"not JSON ({exc})", path=path, line=n) from None
        if not isinstance(row, dict) or "trajectory" not in row:
            raise DataError("expected an object with a 'trajectory'", path=path, line=n, field="trajectory")
        try:
            samples.append(TrajectorySample(**{k: row[k] for k in ("id", "question", "trajectory", "reference")
                                               if row.get(k) is not None}))
        except ConfigError as exc:  # the message at fault, as Trajectory.of names it
            field = re.match(r"[a-z_]*", str(exc)).group(0)  # type: ignore[union-attr]  # the message names it first
            raise DataError(str(exc), path=path, line=n, field=field or None) from None
        except ValidationError as exc:
            err = exc.errors()[0]
            raise DataError(err["msg"], path=path, line=n, field=".".join(str(p) for p in err["loc"])) from None
    if not samples:
        raise DataError("no trajectories", path=path)
    return samples


def _modes(text: str) -> list[str]:
    if text.strip() == "none":
        return []
    modes = list(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    if not modes or any(m not in MODES for m in modes):
        raise ConfigError(f"--match {text!r}: choose from {', '.join(MODES)}, or none")
    return modes


def handle(args: argparse.Namespace) -> int:
    from ..runtime.identity import file_digest
    from ..trajectories import TrajectoryJudge, TrajectoryMatch
    modes = _modes(args.match)
    if not modes and args.judge is None:
        raise ConfigError("nothing to score: give --match modes, or --judge to grade the trajectories")
    if not 1 <= args.threshold <= 5:
        raise ConfigError("--threshold must be 1 to 5")
    samples = read_trajectories(args.file)
    evaluators: dict[str, Any] = {f"match/{m}": TrajectoryMatch(mode=m, args=args.args) for m in modes}  # type: ignore[arg-type]
    judge_id = None
    if args.judge is not None:
        from ..models import resolve_judge
        resolved = resolve_judge(args.judge)  # before the store: a bad --judge leaves no file behind
        store = open_store_to_write(args.store, dry_run=args.dry_run)
        judge = make_judge(resolved, args, store)
        judge_id = judge.model_id
        evaluators["judge"] = TrajectoryJudge(judge, threshold=args.threshold)
    else:
        store = open_store_to_write(args.store, dry_run=args.dry_run)
    config = {"file": args.file, "evaluators": list(evaluators), "judge": judge_id,
              "tasks": {i: e.task_name() for i, e in evaluators.items()}}
    session = open_session(store, args, "trajectories", config, judge=judge_id,
                           inputs={"file": file_digest(args.file, what="trajectories file")})
    _, summaries = session.run_and_record(samples, evaluators)
    say(f"run {session.run_id} over {args.file}" + (f" (judge {judge_id})" if judge_id else ""))
    for i, s in summaries.items():
        say(format_summary(i, s))
    say_reuse(store, session.run_id)
    return 0
