"""``langrag-eval search``: query an index built by ``langrag-eval index`` and print a ranked table.

    langrag-eval search "how long do refunds take" --mode hybrid -k 5
    langrag-eval search "refund" --backend opensearch --url https://localhost:9200 --mode hybrid \\
        --fusion server_rrf

``--mode`` is bm25, knn or hybrid (knn and hybrid embed the query with the packaged MiniLM, so the
index must have been built with embeddings). ``--fusion`` picks how hybrid combines the two lists:
client-side RRF (default), OpenSearch's score-ranker RRF pipeline (``server_rrf``) or its
normalization pipeline (``normalization``); the embedded backend computes all three itself. When
an OpenSearch cluster lacks a server-side fusion, the search falls back to client-side fusion and
says why on stderr.
"""

from __future__ import annotations

import argparse
import json

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._backend import add_backend_options, open_backend
from ._common import quiet_model_loading, say, shown
from ._files import declare_files
from ._options import SettingsOptions

# The options are made from the settings class, a light module of its own (no numpy).
from ..retrieval.settings import HybridSettings  # noqa: E402

if TYPE_CHECKING:  # imported where used: --help loads none of the retrieval stack
    from ..retrieval import Retriever

__all__ = ["format_table", "register"]

_HYBRID = SettingsOptions(HybridSettings)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "search", help="search an index (bm25, knn or hybrid) and print the ranked chunks",
        description="Search an index built by 'langrag-eval index' and print the top-k chunks.")
    p.add_argument("query", help="the question or keywords to search for")
    add_backend_options(p)
    p.add_argument("--mode", choices=("bm25", "knn", "hybrid"), default="bm25",
                   help="bm25 (default), knn or hybrid")
    p.add_argument("-k", type=int, default=10, help="chunks to return (default 10)")
    _HYBRID.add_to(p)
    p.add_argument("--json", action="store_true", help="print one JSON object per hit instead of a table")
    declare_files(p, reads={"--store-dir": lambda a: a.store_dir if a.backend == "embedded" else None,
                            "--ca-certs": "ca_certs"},
                  folders={"--store-dir"})
    p.set_defaults(handler=handle)


def format_table(docs: list, *, width: int = 72) -> str:
    """Rank, score, id and the start of the text, one line per hit.

    >>> from langrag_eval.types import Document
    >>> print(format_table([Document(id="a#0", text="Refunds take\\nfive days.", score=1.5)]))
    rank  score     id   text
       1  1.5000    a#0  Refunds take five days.
    """
    if not docs:
        return "no matching chunks"
    ids = [shown(d.id) for d in docs]
    id_width = max(2, *(len(i) for i in ids))
    lines = [f"rank  score     {'id':<{id_width}}  text"]
    for rank, (doc, doc_id) in enumerate(zip(docs, ids), start=1):
        snippet = shown(" ".join(doc.text.split()))
        if len(snippet) > width:
            snippet = snippet[:width - 3] + "..."
        score = "-" if doc.score is None else f"{doc.score:.4f}"
        lines.append(f"{rank:>4}  {score:<8}  {doc_id:<{id_width}}  {snippet}")
    return "\n".join(lines)


def handle(args: argparse.Namespace) -> int:
    from ..retrieval import Retriever
    if args.k < 1:
        raise ConfigError("-k must be at least 1")
    hybrid = _HYBRID.build(args)
    backend = open_backend(args, must_exist=True)
    if args.mode != "bm25" and args.backend == "embedded" and backend.dimension is None:
        # Say so before loading the embedding model, which takes seconds.
        raise ConfigError(f"the index in {args.store_dir} holds no vectors (built with --no-embeddings): "
                          f"search it with --mode bm25, or index again with embeddings")
    if args.mode != "bm25":
        quiet_model_loading()
    try:
        docs = Retriever(backend, mode=args.mode, k=args.k, hybrid=hybrid).retrieve(args.query)
        for fusion, reason in getattr(backend, "fallbacks", {}).items():
            say(f"note: {fusion} is not available on this cluster ({shown(reason)}); fused client-side instead",
                err=True)
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    if args.json:
        for rank, doc in enumerate(docs, start=1):
            say(json.dumps({"rank": rank, "id": doc.id, "score": doc.score, "text": doc.text,
                            "metadata": doc.metadata}, ensure_ascii=False, default=str))
    else:
        say(format_table(docs))
    return 0
