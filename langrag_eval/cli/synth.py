"""``langrag-eval synth queries``: InPars-style synthetic test queries from a corpus.

Example::

    langrag-eval synth queries --corpus docs/ --examples user_questions.txt \\
        --generator openai:gpt-4o=100 --generator anthropic:claude-3-opus-20240229=50 \\
        --passages 40 --per-passage 10 --out synthetic.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._dryrun import add_dry_run_option
from ._common import (
    add_call_options, add_store_options, check_call_options, make_judge, open_session,
    open_store_to_write, say, shown,
)
from ._files import declare_files, judge_file, output_file, store_path
from ._options import INPUT, OUTPUT, group

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..runtime.identity import content_hash

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("synth", help="synthetic test data for a RAG app",
                                   description="Synthetic test data for a RAG app.")
    sub = parser.add_subparsers(dest="synth_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda args: (parser.print_help(), 2)[1])
    q = sub.add_parser("queries", help="InPars-style questions from corpus passages (RAGElo section 4)",
                       description="Sample long passages from a corpus, ask each generator model for "
                                   "questions with real user questions as examples, drop near-duplicates "
                                   "and sample each generator by quota.")
    group(q, INPUT).add_argument("--corpus", required=True,
                   help="JSON {id: text}, JSON list, JSONL with id/text, a folder of .txt/.md, or a text file")
    group(q, INPUT).add_argument("--examples", required=True,
                   help="real user questions shown as few-shot examples: one a line, or JSONL with query")
    q.add_argument("--generator", action="append", required=True, metavar="SPEC[=QUOTA]",
                   help="a generator model (provider:model, local, scripted:FILE), optionally with how many "
                        "of its questions to keep, e.g. openai:gpt-4o=100; repeat for several models")
    group(q, OUTPUT).add_argument("--out", default="synthetic_queries.jsonl", help="output JSONL (qid, query, provenance)")
    group(q, OUTPUT).add_argument("--pool-out", default=None, help="also write the whole pool before dedup and quotas")
    q.add_argument("--passages", type=int, default=None, help="passages to sample (default: all)")
    q.add_argument("--passage-tokens", type=int, default=2000, help="tokens per passage (default 2000)")
    q.add_argument("--min-tokens", type=int, default=50, help="drop passages shorter than this (default 50)")
    q.add_argument("--token-count", choices=("whitespace", "estimate"), default="whitespace",
                   help="count tokens as whitespace-separated words (default) or about 4 characters each")
    q.add_argument("--per-passage", type=int, default=10, help="questions asked per passage (default 10)")
    q.add_argument("--max-examples", type=int, default=10, help="few-shot examples in the prompt (default 10)")
    q.add_argument("--similarity", type=float, default=0.8,
                   help="token-set Jaccard at or above which two questions are duplicates (default 0.8)")
    q.add_argument("--embeddings", action="store_true",
                   help="compare questions by embedding cosine (offline MiniLM) instead of token sets")
    q.add_argument("--embedding-threshold", type=float, default=0.92)
    q.add_argument("--prompt", default="synth/queries", help="prompt template name or file")
    q.add_argument("--seed", type=int, default=0)
    add_call_options(q, concurrency=8, what="model calls per generator")
    add_dry_run_option(q)
    add_store_options(q)
    declare_files(q, reads={"--corpus": "corpus", "--examples": "examples", "--prompt": "prompt",
                            "--generator": lambda a: [judge_file(_generator_spec(g)[0]) for g in a.generator]},
                  writes={"--out": "out", "--pool-out": "pool_out", "--store": store_path},
                  folders={"--corpus"}, stores={"--store"})
    q.set_defaults(handler=_queries)


def _generator_spec(text: str) -> tuple[str, int | None]:
    spec, sep, tail = text.rpartition("=")
    if sep and tail.strip().isdigit():
        return spec.strip(), int(tail)
    if sep and tail.strip().lstrip("-").isdigit():
        raise ConfigError(f"--generator {text!r}: the quota after '=' must be 0 or more")
    return text.strip(), None


def _queries(args: argparse.Namespace) -> int:
    # Imported on use: every langrag-eval command imports this module to register its subcommand.
    from ..runtime.identity import content_hash
    from ..models import resolve_judge
    from ..pipelines import read_queries
    from ..runtime import Judge
    from ..synth import QueryGenerator, load_corpus, sample_passages, split_passages, write_queries

    check_call_options(args)
    if args.max_examples < 0:
        raise ConfigError("--max-examples must be 0 or more")
    output_file(args.out, "--out")
    if args.pool_out:
        output_file(args.pool_out, "--pool-out")
    specs = [_generator_spec(g) for g in args.generator]
    store = open_store_to_write(args.store, dry_run=args.dry_run)
    judges: list[Judge] = []
    quotas: dict[str, int | None] = {}
    for spec, quota in specs:
        judge = make_judge(resolve_judge(spec), args, store)
        judges.append(judge)
        quotas[judge.model_id] = quota
    examples = [q.query for q in read_queries(args.examples)][: args.max_examples]
    docs = load_corpus(args.corpus)
    passages = split_passages(docs, tokens=args.passage_tokens, min_tokens=args.min_tokens,
                              counter=args.token_count)
    if not passages:
        raise ConfigError(f"{args.corpus}: no passage reaches --min-tokens {args.min_tokens}")
    chosen = sample_passages(passages, args.passages, seed=args.seed)
    config = {"corpus": str(Path(args.corpus).resolve()), "examples": examples,
              "generators": [s for s, _ in specs], "quotas": quotas, "passages": args.passages,
              "passage_tokens": args.passage_tokens, "token_count": args.token_count,
              "per_passage": args.per_passage, "similarity": args.similarity, "embeddings": args.embeddings,
              "prompt": args.prompt, "seed": args.seed}
    session = open_session(store, args, "synth", config,
                           inputs={"corpus": content_hash([(d.id, d.text) for d in docs])})
    run_id = session.run_id
    judges = [j.for_run(run_id) for j in judges]
    embedder = None
    if args.embeddings:
        from ..models.embeddings import default_embedder  # heavy import only when asked for
        embedder = default_embedder()
    generator = QueryGenerator(judges, examples, per_passage=args.per_passage, prompt=args.prompt,
                               concurrency=args.concurrency * len(judges))
    result = generator.synthesize(
        chosen, quotas=quotas if any(v is not None for v in quotas.values()) else None,
        similarity=args.similarity, embedder=embedder, embedding_threshold=args.embedding_threshold,
        seed=args.seed, store=store, run_id=run_id)
    write_queries(args.out, result.queries)
    if args.pool_out:
        write_queries(args.pool_out, result.pool)
    report = result.report.model_dump(mode="json")
    session.record({"synth": report}, finished=report)
    say(f"run {shown(run_id)}: {len(chosen)} of {len(passages)} passages ({args.passage_tokens} "
        f"{args.token_count} tokens max), {args.per_passage} questions asked per passage and generator")
    say(f"pool {report['pool_size']}, duplicates dropped {report['duplicates_dropped']}, "
        f"unique {report['unique']}, selected {report['selected']} -> {shown(args.out)}")
    for gid, s in report["generators"].items():
        quota = "all" if s["quota"] is None else s["quota"]
        short = f", short by {s['shortfall']}" if s["shortfall"] else ""
        say(f"  {shown(gid)}: generated {s['generated']}, duplicates {s['duplicates']}, unique {s['unique']}, "
            f"quota {quota}, selected {s['selected']}{short}")
    for failure in report["failures"]:
        say(f"  failed: {shown(failure)}", err=True)
    say(json.dumps({"run": run_id, "selected": report["selected"]}))
    return 0
