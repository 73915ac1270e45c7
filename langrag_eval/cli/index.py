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
import logging
import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError
from ..retrieval.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE
from ..retrieval.ingest import Loaded, ingest, load_path
from ._common import say

__all__ = ["DEFAULT_STORE_DIR", "add_backend_options", "open_backend", "quiet_model_loading", "register"]

DEFAULT_STORE_DIR = Path(".langrag") / "index"


def add_backend_options(p: argparse.ArgumentParser) -> None:
    """Options naming the backend to use; shared by ``index`` and ``search``."""
    p.add_argument("--backend", choices=("embedded", "opensearch"), default="embedded",
                   help="embedded (in-process, saved to --store-dir; default) or opensearch")
    p.add_argument("--store-dir", default=str(DEFAULT_STORE_DIR),
                   help=f"folder of the embedded index (default {DEFAULT_STORE_DIR})")
    p.add_argument("--url", default=None,
                   help="OpenSearch URL, e.g. https://localhost:9200 (default: $OPENSEARCH_URL); "
                        "credentials from $OPENSEARCH_USER / $OPENSEARCH_PASSWORD")
    p.add_argument("--index", default="langrag-chunks", help="OpenSearch index name (default langrag-chunks)")
    p.add_argument("--ca-certs", default=None, help="CA bundle to verify the cluster's TLS certificate")
    p.add_argument("--insecure", action="store_true",
                   help="do not verify the cluster's TLS certificate (test clusters only)")


def open_backend(args: argparse.Namespace, *, must_exist: bool) -> Any:
    """The backend the options name. ``must_exist``: refuse an embedded folder without an index."""
    if args.backend == "embedded":
        from ..retrieval import EmbeddedBackend
        store = Path(args.store_dir)
        if store.exists() and not store.is_dir():
            raise ConfigError(f"--store-dir {store}: is a file; the embedded index is a folder")
        if must_exist and not (store / "manifest.json").exists():
            raise ConfigError(f"no embedded index in {store}: build one with "
                              f"'langrag-eval index PATH... --store-dir {store}'")
        return EmbeddedBackend(store)
    # The client logs each failed request with a traceback; the one-line error says it all.
    logging.getLogger("opensearch").setLevel(logging.CRITICAL)
    logging.getLogger("langrag_eval.retrieval.opensearch").setLevel(logging.ERROR)
    try:
        import opensearchpy  # noqa: F401

        from ..retrieval.opensearch import OpenSearchBackend
    except ImportError:
        raise ConfigError("the OpenSearch backend needs the extra: "
                          "pip install 'langrag-eval[opensearch]'") from None
    kwargs: dict[str, Any] = {"index": args.index, "verify_certs": not args.insecure,
                              "ca_certs": args.ca_certs}
    for option in ("engine", "space"):
        if getattr(args, option, None):
            kwargs["engine" if option == "engine" else "space_type"] = getattr(args, option)
    return OpenSearchBackend(args.url, **kwargs)


def quiet_model_loading() -> None:
    """Keep the embedding model's loading progress bars off the terminal: the CLI prints one
    summary line, and an error must stay one line."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()


def register(subparsers: argparse._SubParsersAction) -> None:
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
    p.set_defaults(handler=handle)


def _load(args: argparse.Namespace) -> Loaded:
    missing = [path for path in args.paths if not Path(path).exists()]
    if missing:
        raise DataError("no such file or folder", path=", ".join(missing))
    loaded = Loaded()
    for path in args.paths:
        loaded.extend(load_path(path, text_field=args.text_field, id_field=args.id_field))
    for error in loaded.errors:
        say(f"WARNING: skipped: {error}", err=True)
    if not loaded.sources:
        raise DataError("no document could be read; nothing to index", path=", ".join(args.paths))
    return loaded


def handle(args: argparse.Namespace) -> int:
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
        say(f"WARNING: chunk {chunk_id} not indexed: {reason}", err=True)
    where = args.store_dir if args.backend == "embedded" else f"index {args.index!r}"
    say(f"indexed {report.indexed} chunks from {len(loaded.sources)} documents into {where} "
        f"({total} in total{'' if args.embeddings else ', text only'}); "
        f"{len(report.failed)} chunks and {len(loaded.errors)} inputs skipped")
    say(f"  {report.added} chunks added, {report.unchanged} unchanged, {report.removed} removed "
        f"(of documents that changed{' or are no longer in these paths' if args.prune else ''})")
    return 1 if report.failed or loaded.errors else 0
