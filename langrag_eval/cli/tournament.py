"""``langrag-eval tournament``: rank RAG agents by RAGElo games.

    langrag-eval tournament queries.csv documents.csv answers.csv     # RAGElo's CSV layout
    langrag-eval tournament --answers run.jsonl                        # our answers JSONL

Prints the ranking with intervals, the win matrix and MRR@5; writes every judgment and the
``tournament`` summary to the run store. The same command resumes the same run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pydantic import ValidationError

from ..errors import ConfigError
from ..io import read_text
from ..prompts import load_prompt
from ..runtime.identity import content_hash, file_digest
from ..tournament import TournamentConfig, format_summary, load_answers_jsonl, load_ragelo_csv, run_tournament
from ._common import add_judge_options, open_cli_run, say, say_reuse, setup_judge
from ..files import write_text_atomic
from ._files import output_file

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "tournament", help="rank RAG agents by pairwise LLM-judged games (RAGElo)",
        description="Judge retrieved documents, play the agents' answers against each other (both "
                    "orders per game by default, or one with --orders 1), and rank them with Elo and "
                    "Bradley-Terry.")
    p.add_argument("files", nargs="*", metavar="CSV",
                   help="RAGElo layout: queries.csv (qid,query) documents.csv (qid,did,document[,agent,rank]) "
                        "answers.csv (qid,agent,answer); documents.csv may be left out")
    p.add_argument("--answers", dest="answers_jsonl", default=None,
                   help="answers JSONL ({qid, query, agent, answer, documents}) instead of the CSV files")
    p.add_argument("--schedule", choices=("all", "sample", "adaptive"), default="all",
                   help="all pairs per query (default), a seeded sample, or adaptive")
    p.add_argument("--games-per-query", type=int, default=15, help="games per query with --schedule sample")
    p.add_argument("--max-games", type=int, default=None, help="stop after this many games")
    p.add_argument("--threshold", type=int, choices=(0, 1, 2), default=2,
                   help="least relevance a document needs to be shown to the pairwise judge (default 2)")
    p.add_argument("--orders", type=int, choices=(1, 2), default=2,
                   help="judge each game in both orders, a disagreement a tie (2, default), or once with "
                        "the answer shown first chosen by a seeded coin (1, as the RAGElo paper's Table 5)")
    p.add_argument("--ndcg-gain", choices=("linear", "exponential"), default="exponential",
                   help="nDCG gain: 2**rel - 1 (exponential, default) or rel (linear, trec_eval's)")
    p.add_argument("--factors", default=None, help="what the pairwise judge should weigh, in words")
    p.add_argument("--factors-file", default=None, help="read --factors from a file")
    p.add_argument("--pointwise", action="store_true",
                   help="also score each answer on relevance, accuracy, completeness, precision (0-2)")
    p.add_argument("-k", type=int, default=5, help="cut-off of MRR@k and nDCG@k (default 5)")
    p.add_argument("--tournaments", type=int, default=500, help="Elo tournaments to average (default 500)")
    p.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples for intervals (default 200)")
    p.add_argument("--seed", type=int, default=0)
    for name, task in (("relevance", "relevance"), ("pointwise", "pointwise"), ("pairwise", "pairwise")):
        p.add_argument(f"--{name}-prompt", default=f"tournament/{task}",
                       help=f"template for the {name} judge (a shipped name or a file path)")
    add_judge_options(p)
    p.add_argument("--json", dest="json_out", default=None, help="also write the summary to this JSON file")
    p.set_defaults(handler=handle)


# TournamentConfig fields as the options that set them, for error messages.
_OPTIONS = {"k": "-k", "tournaments": "--tournaments", "n_boot": "--bootstrap", "threshold": "--threshold",
            "n_games_per_query": "--games-per-query", "max_games": "--max-games", "factors": "--factors",
            "schedule": "--schedule", "seed": "--seed"}


def _load(args: argparse.Namespace):
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


def handle(args: argparse.Namespace) -> int:
    json_out = output_file(args.json_out, "--json") if args.json_out else None
    data, files = _load(args)
    factors = args.factors
    if args.factors_file:
        factors = read_text(args.factors_file, what="factors file").strip()
    settings = {"schedule": args.schedule, "n_games_per_query": args.games_per_query,
                "threshold": args.threshold, "orders": args.orders, "ndcg_gain": args.ndcg_gain,
                "pointwise": args.pointwise, "k": args.k,
                "tournaments": args.tournaments, "n_boot": args.bootstrap, "seed": args.seed,
                "max_games": args.max_games, "relevance_prompt": args.relevance_prompt,
                "pointwise_prompt": args.pointwise_prompt, "pairwise_prompt": args.pairwise_prompt}
    if factors:
        settings["factors"] = factors
    if args.games_per_query < 1:
        raise ConfigError("--games-per-query must be at least 1")
    if args.max_games is not None and args.max_games < 1:
        raise ConfigError("--max-games must be at least 1")
    try:
        config = TournamentConfig(**settings)
    except ValidationError as exc:
        # pydantic's own message spans several lines; the CLI prints one naming the option
        first = exc.errors()[0]
        option = _OPTIONS.get(str(first["loc"][0]) if first["loc"] else "", "settings")
        raise ConfigError(f"{option} {first.get('input')!r}: {first['msg']}") from None
    for problem in data.problems[:20]:
        say(f"warning: {problem.message}", err=True)
    if len(data.problems) > 20:
        say(f"warning: ... and {len(data.problems) - 20} more problems (listed in the summary)", err=True)
    setup = setup_judge(args)
    run_config = {"files": files, "judge": setup.judge.model_id, **config.model_dump()}
    inputs = {name: file_digest(path, what=f"{name} file") for name, path in files.items() if path}
    # the prompts' text, not their names: an edited prompt file must not reuse the old judgments
    inputs["prompts"] = content_hash([load_prompt(p).body for p in
                                      (config.relevance_prompt, config.pointwise_prompt, config.pairwise_prompt)])
    if factors and args.factors_file:
        inputs["factors"] = file_digest(args.factors_file, what="factors file")
    run_id = open_cli_run(setup.store, args, "tournament", run_config, inputs=inputs,
                          judge=setup.judge.model_id)
    say(f"run {run_id}: {len(data.agents)} agents, {len(data.queries)} queries "
        f"({setup.store.path})", err=True)
    result = run_tournament(data, setup.judge, config, store=setup.store, run_id=run_id,
                            limit=args.concurrency)
    say(format_summary(result.summary))
    say_reuse(setup.store, run_id)
    if json_out is not None:
        write_text_atomic(json_out, json.dumps(result.summary, indent=2, default=str))
    say(f"stored: run {run_id}, artifact 'tournament' in {setup.store.path}", err=True)
    return 0
