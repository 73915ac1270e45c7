"""``--batch`` on every judging command: the judge answers through the provider's batch API."""

from __future__ import annotations

import argparse
import os

from ..errors import ConfigError
from ._options import BATCH_AND_RAY, group

__all__ = ["add_batch_options", "setup_batch_judge"]


def add_batch_options(p: argparse.ArgumentParser) -> None:
    p = group(p, BATCH_AND_RAY)  # type: ignore[assignment]
    p.add_argument("--batch", action="store_true",
                   help="judge through the provider's batch API (openai:MODEL or anthropic:MODEL): half "
                        "the price, replies within 24 hours; run the same command again to resume")
    p.add_argument("--batch-poll", type=float, default=30.0, metavar="SECONDS",
                   help="with --batch: seconds between two looks at a batch (default 30)")


def setup_batch_judge(args: argparse.Namespace, setup_type: type) -> object:
    """The command's judge and store for ``--batch``: ``setup_type`` is the command's JudgeSetup."""
    from ..models.batch import resolve_batch
    from ..runtime import PriceTable, open_store
    from ..runtime.batching import batch_judge
    from ._common import say
    if not args.batch_poll > 0:
        raise ConfigError("--batch-poll must be a positive number of seconds")
    spec = (args.judge or os.environ.get("LANGRAG_JUDGE") or
            ("openai:gpt-4o" if os.environ.get("OPENAI_API_KEY") else "")).strip()
    model = resolve_batch(spec, poll_interval=args.batch_poll, on_status=lambda line: say(line, err=True))
    store = open_store(args.store)
    prices = PriceTable.read(args.prices) if getattr(args, "prices", None) else None
    judge = batch_judge(model, store=store, prices=prices)
    return setup_type(judge=judge, store=store, warning=None)
