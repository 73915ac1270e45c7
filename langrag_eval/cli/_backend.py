"""The options naming a search backend (the embedded index or an OpenSearch cluster), shared by
``langrag-eval index`` and ``langrag-eval search``, and opening the backend they name."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["DEFAULT_STORE_DIR", "add_backend_options", "open_backend"]

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
    for option in ("shards", "timeout"):  # index's options
        if getattr(args, option, None) is not None:
            kwargs[option] = getattr(args, option)
    return OpenSearchBackend(args.url, **kwargs)
