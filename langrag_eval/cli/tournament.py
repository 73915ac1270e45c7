"""``langrag-eval tournament``: rank RAG agents by RAGElo games.

    langrag-eval tournament queries.csv documents.csv answers.csv     # RAGElo's CSV layout
    langrag-eval tournament --answers run.jsonl                        # our answers JSONL

Prints the ranking with intervals, the win matrix and MRR@5; writes every judgment and the
``tournament`` summary to the run store. The same command resumes the same run.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError
from ..files.reading import read_text
from ._common import add_judge_options, open_session, report_issues, say, say_reuse, setup_judge, shown
from ._files import JUDGE_READS, declare_files, store_path
from ._options import INPUT, SettingsOptions, add_json_option, group, json_output, write_json

# The options are made from the settings class, a module of its own (with pydantic).
from ..tournament.config import TournamentConfig  # noqa: E402

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..prompting.templates import load_prompt
    from ..runtime.identity import content_hash, file_digest
    from ..tournament import TournamentConfig, format_summary, load_answers_jsonl, load_ragelo_csv, run_tournament

__all__ = ["register"]

# One option per TournamentConfig field; two options are named otherwise than their fields.
_SETTINGS = SettingsOptions(TournamentConfig, flags={"n_games_per_query": "--games-per-query",
                                                     "n_boot": "--bootstrap"})


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "tournament", help="rank RAG agents by pairwise LLM-judged games (RAGElo)",
        description="Judge retrieved documents, play the agents' answers against each other (both "
                    "orders per game by default, or one with --orders 1), and rank them with Elo and "
                    "Bradley-Terry.")
    group(p, INPUT).add_argument("files", nargs="*", metavar="CSV",
                   help="RAGElo layout: queries.csv (qid,query) documents.csv (qid,did,document[,agent,rank]) "
                        "answers.csv (qid,agent,answer); documents.csv may be left out")
    group(p, INPUT).add_argument("--answers", dest="answers_jsonl", default=None,
                   help="answers JSONL ({qid, query, agent, answer, documents}) instead of the CSV files")
    _SETTINGS.add_to(p)
    group(p, INPUT).add_argument("--factors-file", default=None, help="read --factors from a file")
    add_judge_options(p)
    add_json_option(p, "the summary")
    declare_files(p, reads={"CSV": "files", "--answers": "answers_jsonl", "--factors-file": "factors_file",
                            **{_SETTINGS.flag(f): _prompt_file(f) for f in _PROMPTS}, **JUDGE_READS},
                  writes={"--json": "json_out", "--store": store_path}, stores={"--store"})
    p.set_defaults(handler=handle)


_PROMPTS = ("relevance_prompt", "pointwise_prompt", "pairwise_prompt")


def _prompt_file(name: str):  # a prompt given as a file (not a packaged prompt's name)
    return lambda args: getattr(args, name, None) if Path(str(getattr(args, name, ""))).suffix else None


def _load(args: argparse.Namespace):
    from ..tournament import load_answers_jsonl, load_ragelo_csv
    if args.answers_jsonl:
        if args.files:
            raise ConfigError("give either the three CSV files or --answers, not both")
        return load_answers_jsonl(args.answers_jsonl), {"answers": str(Path(args.answers_jsonl).resolve())}
    if len(args.files) == 3:
        q, d, a = args.files
    elif len(args.files) == 2:
        (q, a), d = args.files, None
    else:
        raise ConfigError("expected queries.csv [documents.csv] answers.csv, or --answers run.jsonl")
    files = {"queries": q, "documents": d, "answers": a}
    return load_ragelo_csv(q, d, a), {k: str(Path(v).resolve()) if v else None for k, v in files.items()}


def _check_playable(data: Any, answers: str | None) -> None:
    """Exit 2 before any judge call when no answer could be read (exit 0 would read as a ranking).
    One agent alone still has its documents and answers judged (its MRR), as the loader warns."""
    if not data.agents:
        raise DataError("no row could be read; nothing to rank (see the warnings above)", path=answers)


def handle(args: argparse.Namespace) -> int:
    from ..prompting.templates import load_prompt
    from ..runtime.identity import content_hash, file_digest
    from ..tournament import format_summary, run_tournament
    json_out = json_output(args)
    data, files = _load(args)
    factors = read_text(args.factors_file, what="factors file").strip() if args.factors_file else None
    config = _SETTINGS.build(args, **({"factors": factors} if factors else {}))
    report_issues([p.message for p in data.problems], more="listed in the summary")
    _check_playable(data, files.get("answers"))
    setup = setup_judge(args)
    run_config = {"files": files, "judge": setup.judge.model_id, **config.model_dump()}
    inputs = {name: file_digest(path, what=f"{name} file") for name, path in files.items() if path}
    # the prompts' text, not their names: an edited prompt file must not reuse the old judgments
    inputs["prompts"] = content_hash([load_prompt(p).body for p in
                                      (config.relevance_prompt, config.pointwise_prompt, config.pairwise_prompt)])
    if factors:
        inputs["factors"] = file_digest(args.factors_file, what="factors file")
    run_id = open_session(setup.store, args, "tournament", run_config, inputs=inputs,
                          judge=setup.judge.model_id).run_id
    say(f"run {shown(run_id)}: {len(data.agents)} agents, {len(data.queries)} queries "
        f"({shown(setup.store.path)})", err=True)
    result = run_tournament(data, setup.judge, config, store=setup.store, run_id=run_id,
                            concurrency=args.concurrency)
    say(format_summary(result.summary))
    say_reuse(setup.store, run_id)
    if json_out is not None:
        write_json(json_out, result.summary)
    say(f"stored: run {shown(run_id)}, artifact 'tournament' in {shown(setup.store.path)}", err=True)
    return 0
