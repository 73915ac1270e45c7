"""``langrag-eval agents``: run the RAG-Fusion paper's six agents on the embedded backend.

    langrag-eval agents --corpus docs/ --queries queries.jsonl --out answers.jsonl \\
        --judge openai:gpt-4o [--agents rag-bm25,fusion-bm25] [-k 5] [--variations 4]

Loads the corpus (``.txt``, ``.md``, ``.jsonl`` files or folders), chunks, embeds (the packaged
MiniLM, only when a KNN or hybrid agent runs) and indexes it in an embedded index (in memory, or the
``--index`` folder), then runs every chosen agent on every query with the ``--judge`` model as the
generator. Answers with their passages are written in the answers JSONL layout
(:mod:`langrag_eval.pipelines.io`), ready for ``langrag-eval tournament --answers``. Answers are
stored in the run store as they arrive: the same command resumes the same run.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import ConfigError, DataError
from ._common import add_judge_options, open_session, say, say_reuse, say_usage, setup_judge, shown
from ._files import JUDGE_READS, declare_files, output_file, store_path
from ._options import INPUT, OUTPUT, group

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..pipelines import (
        AGENT_NAMES, AgentAnswer, read_queries, run_agents, select_agents, six_agents, write_answers,
    )
    from ..pipelines.batch import TASK
    from ..retrieval import EmbeddedBackend
    from ..retrieval.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, chunk_sources
    from ..retrieval.ingest import Loaded, ingest, load_path
    from ..runtime.identity import file_digest

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    from ._options import AGENT_NAMES, CHUNK_OVERLAP as DEFAULT_OVERLAP, CHUNK_SIZE as DEFAULT_SIZE
    p = subparsers.add_parser(
        "agents", help="run the RAG and RAG-Fusion agents (BM25, KNN, hybrid) and write their answers",
        description="Index a corpus in the embedded backend and run the six agents of the RAG-Fusion "
                    "paper (rag-bm25, rag-knn, rag-hybrid, fusion-bm25, fusion-knn, fusion-hybrid) on "
                    "each query; the --judge model writes the query variations and the answers.")
    group(p, INPUT).add_argument("--corpus", nargs="+", default=[], metavar="PATH",
                   help=".txt / .md / .jsonl files or folders to index")
    group(p, INPUT).add_argument("--queries", required=True,
                   help="JSONL with qid and query per line, or a text file with one query per line")
    group(p, OUTPUT).add_argument("--out", required=True, help="answers JSONL to write")
    p.add_argument("--agents", default=",".join(AGENT_NAMES),
                   help=f"comma-separated agents to run (default: all six: {','.join(AGENT_NAMES)})")
    p.add_argument("-k", type=int, default=5, help="passages each answer is generated from (default 5)")
    p.add_argument("--variations", type=int, default=4,
                   help="query variations a Fusion agent generates besides the original (default 4)")
    group(p, OUTPUT).add_argument("--index", default=None,
                   help="folder of a persisted embedded index: reused when --corpus is not given, "
                        "otherwise the corpus is (re)indexed into it; default: an in-memory index")
    p.add_argument("--chunk-size", type=int, default=DEFAULT_SIZE,
                   help=f"characters per chunk (default {DEFAULT_SIZE})")
    p.add_argument("--chunk-overlap", type=int, default=DEFAULT_OVERLAP,
                   help=f"characters shared by consecutive chunks (default {DEFAULT_OVERLAP})")
    p.add_argument("--text-field", default="text", help="text field of .jsonl corpus files (default text)")
    p.add_argument("--id-field", default="id", help="id field of .jsonl corpus files (default id)")
    add_judge_options(p)
    declare_files(p, reads={"--corpus": "corpus", "--queries": "queries", **JUDGE_READS},
                  writes={"--out": "out", "--index": "index", "--store": store_path},
                  folders={"--corpus", "--index"}, stores={"--store"})
    p.set_defaults(handler=handle)


def _load_corpus(args: argparse.Namespace) -> Loaded:
    from ..retrieval.ingest import Loaded, load_path
    loaded = Loaded()
    for path in args.corpus:
        loaded.extend(load_path(path, text_field=args.text_field, id_field=args.id_field))
    for error in loaded.errors:
        say(f"WARNING: skipped: {shown(error)}", err=True)
    if not loaded.sources:
        raise DataError("no document could be read from the corpus; nothing to index",
                        path=", ".join(args.corpus))
    return loaded


def _build_index(args: argparse.Namespace, needs_vectors: bool) -> tuple[EmbeddedBackend, str]:
    """The backend and a digest of what it holds, so that a changed corpus starts a new run."""
    from ..retrieval import EmbeddedBackend
    from ..retrieval.chunking import chunk_sources
    from ..retrieval.ingest import ingest
    if not args.corpus and not args.index:
        raise ConfigError("give --corpus PATH... to index, or --index DIR holding an index built before")
    backend = EmbeddedBackend(args.index)
    digest = hashlib.sha256()
    if args.corpus:
        loaded = _load_corpus(args)
        chunks = chunk_sources(loaded.sources, size=args.chunk_size, overlap=args.chunk_overlap)
        report = ingest(backend, chunks, vectors=needs_vectors)
        for chunk_id, reason in report.failed:
            say(f"WARNING: chunk {shown(chunk_id)} not indexed: {shown(reason)}", err=True)
        say(f"indexed {report.indexed} chunks from {len(loaded.sources)} documents")
        for chunk in chunks:  # chunk ids embed a hash of their text
            digest.update(chunk.id.encode("utf-8") + b"\n")
    count = backend.count()
    if count == 0:
        raise ConfigError("the index holds no chunks; give --corpus PATH...")
    digest.update(f"{Path(args.index).resolve() if args.index else ''}|{count}".encode())
    return backend, digest.hexdigest()


def handle(args: argparse.Namespace) -> int:
    from ..pipelines import AGENT_NAMES, AgentAnswer, read_queries, run_agents, select_agents, six_agents, write_answers
    from ..pipelines.batch import TASK
    from ..runtime.identity import file_digest
    if args.k < 1 or args.variations < 1 or args.concurrency < 1:
        raise ConfigError("-k, --variations and --concurrency must be at least 1")
    names = [n.strip() for n in args.agents.split(",") if n.strip()]
    unknown = [n for n in names if n not in AGENT_NAMES]
    if not names or unknown:
        raise ConfigError(f"--agents: unknown agent(s) {', '.join(unknown) or '(none given)'}; "
                          f"choose from {', '.join(AGENT_NAMES)}")
    output_file(args.out, "--out")
    queries = read_queries(args.queries)
    setup = setup_judge(args, role="generator")  # before indexing, so a bad --judge fails fast
    # Only KNN and hybrid agents need vectors; a BM25-only run never loads the embedding model.
    backend, corpus_digest = _build_index(args, any(not n.endswith("-bm25") for n in names))

    config = {"corpus": [str(Path(c).resolve()) for c in args.corpus], "index": args.index,
              "corpus_digest": corpus_digest, "queries": str(Path(args.queries).resolve()),
              "agents": names, "k": args.k, "variations": args.variations,
              "chunking": [args.chunk_size, args.chunk_overlap], "generator": setup.judge.model_id}
    session = open_session(setup.store, args, "agents", config, judge=setup.judge.model_id,
                           inputs={"corpus": corpus_digest,
                                   "queries": file_digest(args.queries, what="queries file")})
    run_id = session.run_id
    generator = setup.judge.for_run(run_id)
    agents = select_agents(six_agents(backend, None, generator, args.k, n_variations=args.variations), names)
    runs = run_agents(agents, queries, store=setup.store, run_id=run_id, concurrency=args.concurrency,
                      description=f"agents ({len(agents)} x {len(queries)} queries)")

    answers = [r.result for r in runs if isinstance(r.result, AgentAnswer)]
    failed = [r for r in runs if not isinstance(r.result, AgentAnswer)]
    for r in failed:
        say(f"WARNING: {shown(r.agent)} on {shown(r.qid)}: no answer ({r.result.cause}): "
            f"{shown(r.result.reason)}", err=True)
    written = write_answers(args.out, answers)
    per_agent = {a.name: sum(1 for r in runs if r.agent == a.name and r.ok) for a in agents}
    session.record({TASK: {"agents": per_agent, "queries": len(queries), "answers": written,
                           "failed": len(failed), "out": args.out}},
                   finished={"answers": written, "failed": len(failed)})
    usage = session.usage()["total"]
    meter = generator.usage
    say(f"agents on {len(queries)} queries (run {shown(run_id)}, generator {shown(generator.model_id)})")
    for name, ok in per_agent.items():
        say(f"  {shown(name):<14} {ok}/{len(queries)} answered")
    say_usage(meter, usage)
    say_reuse(setup.store, run_id)
    say(f"  answers: {shown(args.out)} ({written} written, {len(failed)} failed)")
    return 0
