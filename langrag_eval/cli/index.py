"""``langrag-eval index``: chunk, embed and index documents into the embedded or an OpenSearch backend.

    langrag-eval index docs/ faq.jsonl --store-dir .langrag/index
    langrag-eval index docs/ --backend opensearch --url https://search.example:9200 --index rag-chunks

Inputs are ``.txt``, ``.md`` and ``.jsonl`` files or folders of them (see
:mod:`langrag_eval.retrieval.ingest`); chunks are ``--chunk-size`` characters overlapping by
``--chunk-overlap``, embedded with the packaged MiniLM unless ``--no-embeddings`` (then only BM25
search works). OpenSearch credentials come from ``OPENSEARCH_USER`` / ``OPENSEARCH_PASSWORD`` (or
the URL); TLS certificates are verified unless ``--insecure``. Exit status: 0 when everything was
indexed, 1 when some inputs or chunks were skipped (each reported), 2 on an error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import ConfigError, DataError
from ._backend import add_backend_options, open_backend
from ._common import quiet_model_loading, say, shown
from ._files import declare_files

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..retrieval.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE
    from ..retrieval.ingest import Loaded, ingest, load_path

__all__ = ["register"]

def register(subparsers: argparse._SubParsersAction) -> None:
    from ._options import CHUNK_OVERLAP as DEFAULT_OVERLAP, CHUNK_SIZE as DEFAULT_SIZE
    p = subparsers.add_parser(
        "index", help="chunk, embed and index documents (embedded or OpenSearch backend)",
        description="Read .txt / .md / .jsonl files or folders, split them into overlapping chunks "
                    "with stable ids, embed them (packaged MiniLM) and index them for "
                    "'langrag-eval search' and the agents.")
    p.add_argument("paths", nargs="+", metavar="PATH", help=".txt / .md / .jsonl files or folders")
    add_backend_options(p)
    p.add_argument("--chunk-size", type=int, default=DEFAULT_SIZE,
                   help=f"characters per chunk (default {DEFAULT_SIZE})")
    p.add_argument("--chunk-overlap", type=int, default=DEFAULT_OVERLAP,
                   help=f"characters shared by consecutive chunks (default {DEFAULT_OVERLAP})")
    p.add_argument("--prune", action="store_true",
                   help="the paths are the whole corpus: also remove chunks of documents no longer in "
                        "them (a changed document's old chunks are always replaced)")
    p.add_argument("--no-embeddings", "--bm25-only", dest="embeddings", action="store_false",
                   help="index text only (BM25); knn and hybrid search will not work")
    p.add_argument("--text-field", default="text", help="text field of .jsonl inputs (default text)")
    p.add_argument("--id-field", default="id", help="id field of .jsonl inputs (default id)")
    p.add_argument("--engine", choices=("faiss", "lucene"), default=None,
                   help="OpenSearch knn engine (default faiss; faiss + cosinesimil needs 2.19+)")
    p.add_argument("--space", choices=("cosinesimil", "l2", "innerproduct"), default=None,
                   help="OpenSearch knn space (default cosinesimil)")
    p.add_argument("--shards", type=int, default=1,
                   help="primary shards of a new OpenSearch index (default 1: BM25 statistics are "
                        "per shard, so more shards change the scores)")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to wait for each OpenSearch request (default 30)")
    declare_files(p, reads={"PATH": "paths", "--ca-certs": "ca_certs"},
                  writes={"--store-dir": lambda a: a.store_dir if a.backend == "embedded" else None},
                  folders={"PATH", "--store-dir"})
    p.set_defaults(handler=handle)


def _load(args: argparse.Namespace) -> Loaded:
    from ..retrieval.ingest import Loaded, load_path
    missing = [path for path in args.paths if not Path(path).exists()]
    if missing:
        raise DataError("no such file or folder", path=", ".join(missing))
    loaded = Loaded()
    for path in args.paths:
        loaded.extend(load_path(path, text_field=args.text_field, id_field=args.id_field))
    for error in loaded.errors:
        say(f"WARNING: skipped: {shown(error)}", err=True)
    if not loaded.sources:
        raise DataError("no document could be read; nothing to index", path=", ".join(args.paths))
    return loaded


def handle(args: argparse.Namespace) -> int:
    from ..retrieval.ingest import ingest
    if args.shards < 1:
        raise ConfigError("--shards must be at least 1")
    if not args.timeout > 0:
        raise ConfigError("--timeout must be a positive number of seconds")
    if args.chunk_size < 1 or not 0 <= args.chunk_overlap < args.chunk_size:
        raise ConfigError("--chunk-size must be positive and --chunk-overlap between 0 and the chunk size")
    loaded = _load(args)
    backend = open_backend(args, must_exist=False)
    if args.embeddings:
        quiet_model_loading()
    try:
        report = ingest(backend, loaded.sources, vectors=args.embeddings, size=args.chunk_size,
                        overlap=args.chunk_overlap, prune=args.prune)
        total = backend.count()
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    for chunk_id, reason in report.failed:
        say(f"WARNING: chunk {shown(chunk_id)} not indexed: {shown(reason)}", err=True)
    where = args.store_dir if args.backend == "embedded" else f"index {args.index!r}"
    say(f"indexed {report.indexed} chunks from {len(loaded.sources)} documents into {where} "
        f"({total} in total{'' if args.embeddings else ', text only'}); "
        f"{len(report.failed)} chunks and {len(loaded.errors)} inputs skipped")
    say(f"  {report.added} chunks added, {report.unchanged} unchanged, {report.removed} removed "
        f"(of documents that changed{' or are no longer in these paths' if args.prune else ''})")
    return 1 if report.failed or loaded.errors else 0
