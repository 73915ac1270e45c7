"""``langrag-eval conversations``: simulate conversations with a chat app, and judge conversations.

    langrag-eval conversations simulate --app myapp:make_chat --personas personas.jsonl \\
        --out conversations.jsonl --judge openai:gpt-4o [--max-turns 5]
    langrag-eval conversations judge conversations.jsonl --judge openai:gpt-4o \\
        [--criteria goal_met,knowledge_retention,role_adherence]

``--app MODULE:FACTORY`` names a function that returns a fresh chat app for each conversation: a
callable taking the user's message and returning the reply (wrap a checkpointer agent with
:func:`~langrag_eval.conversations.checkpointer_chat`, a LlamaIndex chat engine with
:func:`~langrag_eval.conversations.chat_engine_chat`). The ``--judge`` model plays the user. Every
finished conversation is stored in the run store: the same command resumes the same run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..files.writing import write_text_atomic
from ._dryrun import add_dry_run_option
from ._common import add_call_options, add_store_options, make_judge, open_store_to_write, say, shown
from ._files import JUDGE_READS, declare_files, output_file, store_path
from ._options import INPUT, OUTPUT, group

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..runtime.identity import file_digest

__all__ = ["register"]

CRITERIA = ("goal_met", "knowledge_retention", "role_adherence")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("conversations", help="simulate conversations with a chat app, and judge them",
                              description="Drive a chat app with a simulated user holding a persona and a "
                                          "goal, and judge whole conversations.")
    sub = p.add_subparsers(dest="conversations_command", metavar="ACTION")
    s = sub.add_parser("simulate", help="drive a chat app with simulated users; write the conversations")
    s.add_argument("--app", required=True, metavar="MODULE:FACTORY",
                   help="a function returning a fresh chat app (message -> reply) for each conversation")
    group(s, INPUT).add_argument("--personas", required=True, help="JSONL: id, persona, goal (role, opening optional)")
    group(s, OUTPUT).add_argument("--out", required=True, help="conversations JSONL to write")
    s.add_argument("--max-turns", type=int, default=5, help="turns at most per conversation (default 5)")
    s.add_argument("--marker", default="GOAL MET", help="what the simulated user writes when its goal is met")
    _judge_options(s)
    declare_files(s, reads={"--personas": "personas", **JUDGE_READS},
                  writes={"--out": "out", "--store": store_path}, stores={"--store"})
    s.set_defaults(handler=simulate_command)
    j = sub.add_parser("judge", help="judge conversations: goal met, knowledge retention, role adherence")
    group(j, INPUT).add_argument("conversations", help="conversations JSONL (as `conversations simulate` writes it)")
    j.add_argument("--criteria", default=",".join(CRITERIA), help=f"comma-separated, of {', '.join(CRITERIA)}")
    j.add_argument("--role", default=None, help="the assistant's role, for conversations that state none")
    j.add_argument("--threshold", type=int, default=4, help="lowest passing grade, 1 to 5 (default 4)")
    _judge_options(j)
    declare_files(j, reads={"conversations": "conversations", **JUDGE_READS},
                  writes={"--store": store_path}, stores={"--store"})
    j.set_defaults(handler=judge_command)
    p.set_defaults(handler=lambda args: p.print_help() or 2)


def _judge_options(p: argparse.ArgumentParser) -> None:
    add_store_options(p)
    p.add_argument("--judge", default=None, help="provider:model (openai:gpt-4o), local, scripted:replies.json; "
                                                 "default: $LANGRAG_JUDGE, else as the other commands")
    add_call_options(p, concurrency=4)
    add_dry_run_option(p)


def _judge(args: argparse.Namespace) -> Any:
    from ..models import resolve_judge
    resolved = resolve_judge(args.judge)
    store = open_store_to_write(args.store, dry_run=args.dry_run)
    return make_judge(resolved, args, store), store


def _factory(spec: str) -> Any:
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ConfigError(f"--app {spec!r}: expected MODULE:FACTORY, e.g. myapp:make_chat")
    sys.path.insert(0, str(Path.cwd()))  # a module beside the user, as `python -m` would find it
    try:
        factory = getattr(importlib.import_module(module), name, None)
    except ImportError as e:
        raise ConfigError(f"--app {spec!r}: cannot import {module!r}: {e}") from None
    finally:
        sys.path.pop(0)
    if not callable(factory):
        raise ConfigError(f"--app {spec!r}: {module} has no function {name!r}")
    return factory


def simulate_command(args: argparse.Namespace) -> int:
    from ..runtime.identity import file_digest
    from ..conversations import SimulatedUser, read_personas, simulate
    if args.max_turns < 1:
        raise ConfigError("--max-turns must be at least 1")
    output_file(args.out, "--out", inputs=[args.personas])
    personas = read_personas(args.personas)
    factory = _factory(args.app)
    judge, store = _judge(args)
    run_id = args.run_id or f"conversations-{file_digest(args.personas, what='personas file')[:12]}-{args.max_turns}"
    done = simulate(factory, personas, SimulatedUser(judge, args.marker), max_turns=args.max_turns,
                    store=store, run_id=run_id,
                    on_conversation=lambda c: say(f"  {shown(c.id)}: {len(c.turns)} turns, " + (
                        f"stopped: {shown(c.error)}" if c.error else f"goal {'met' if c.goal_met else 'not met'}")))
    write_text_atomic(args.out, "".join(json.dumps(c.model_dump(mode="json"), ensure_ascii=False) + "\n"
                                        for c in done))
    say(f"{len(done)} conversations (run {shown(run_id)}): goal met in {sum(bool(c.goal_met) for c in done)}; "
        f"written to {shown(args.out)}")
    failed = [c for c in done if c.error]
    if failed:  # not stored: the same command plays them again
        say(f"WARNING: {len(failed)} conversations stopped on an error; run the same command again to retry them",
            err=True)
    return 1 if failed else 0


def _read(path: str) -> list[Any]:
    from pydantic import ValidationError
    from ..conversations import Conversation
    out = []
    from ..errors import DataError
    from ..files.tables import jsonl_objects
    # the files' JSONL reader: lines end at line feeds only (U+2028 inside a string is text)
    for n, obj in jsonl_objects(Path(path), what="conversations file"):
        if isinstance(obj, DataError):
            raise ConfigError(str(obj))
        try:
            out.append(Conversation.model_validate(obj))
        except ValidationError as e:
            err = e.errors()[0]
            raise ConfigError(f"{path}:{n}: field {'.'.join(str(p) for p in err['loc'])!r}: {err['msg']}") from None
    if not out:
        raise ConfigError(f"{path}: no conversations")
    return out


def judge_command(args: argparse.Namespace) -> int:
    from ..runtime.identity import file_digest
    from ..conversations import ConversationJudge
    from ..run.session import RunSession
    criteria = [c.strip() for c in args.criteria.split(",") if c.strip()]
    if not criteria or any(c not in CRITERIA for c in criteria):
        raise ConfigError(f"--criteria {args.criteria!r}: choose from {', '.join(CRITERIA)}")
    if not 1 <= args.threshold <= 5:
        raise ConfigError("--threshold must be 1 to 5")
    conversations = _read(args.conversations)
    judge, store = _judge(args)
    evaluators = {c: ConversationJudge(judge, criterion=c, threshold=args.threshold, role=args.role)
                  for c in criteria}
    run_id = args.run_id or f"conversations-judge-{file_digest(args.conversations, what='conversations file')[:12]}"
    # a run of the store like any other: `report` and `store status` find it; each criterion's
    # summary stored as `run` stores an evaluator's: the report's scores read it
    session = RunSession.open(store, "conversations-judge", {"file": args.conversations, "criteria": criteria,
                                                             "threshold": args.threshold, "role": args.role},
                              run_id=run_id, judge=judge.model_id)
    run, _ = session.run_and_record(conversations, evaluators,
                                    finished={"conversations": len(conversations), "criteria": criteria})
    run_id = session.run_id
    say(f"{len(conversations)} conversations (run {shown(run_id)}, judge {shown(judge.model_id)})")
    for c in criteria:
        summary = run.summary(c)
        rate = summary.scores.get(f"{c}_pass_rate")
        unscored = sum(summary.unscored.values())
        grade = summary.scores.get(f"{c}_grade")
        say(f"  {c}: pass rate {rate.mean:.2f}, mean grade {grade.mean:.2f}" if rate and grade
            and rate.mean is not None and grade.mean is not None else f"  {c}: no score")
        if unscored:
            say(f"    unscored: {unscored} ({', '.join(f'{k} {v}' for k, v in summary.unscored.items())})")
    return 0
