"""``--dry-run`` on every judging command: what the command would send, before it pays for it.

The command runs as it would, against a throwaway copy of the run store (so what the store has
judged or cached is not counted, and the real store is not changed), with its judge's model
replaced by :class:`DryRunModel`: a model that sends nothing, counts each prompt the judge could
not answer from its cache, and replies with nothing. The command stops at its first file to write
(nothing of the user's is written) and prints one line instead of its summary: the calls not in the
cache, their prompt tokens by the package's estimate, and the price range where ``--prices`` knows
the model. A step that depends on the judge's replies (THELMA's matches after the decomposition,
a tournament's games after the relevance judgments) cannot be counted before the replies exist;
such commands say their count is a lower bound.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ._options import DEFAULT_STORE, JUDGE, group

__all__ = ["add_dry_run_option", "DryRunModel", "DryRunStop", "dry_run_store", "dry_run_line"]

# A reply's length when the generation settings set no limit: the price range's upper end assumes it.
ASSUMED_REPLY_TOKENS = 1000
# Commands whose later judge calls depend on earlier replies: their count is a lower bound.
_STEPWISE = {"thelma", "tournament", "grammar", "agents", "synth", "judge", "quickstart", "conversations", "run"}


def add_dry_run_option(p: argparse.ArgumentParser) -> None:
    """``--prices`` (what the calls cost, for the run's usage line and the dry run's price range)
    and ``--dry-run``: every judging command has both."""
    group(p, JUDGE).add_argument(
        "--prices", default=None, help='JSON price table, per million tokens: {"openai:gpt-4o": [2.5, 10.0]}')
    group(p, JUDGE).add_argument(
        "--dry-run", dest="dry_run", action="store_true",
        help="send nothing and write nothing: print how many judge calls are not in the cache, their "
             "prompt tokens and, with --prices, the price range; exit 0")


class DryRunStop(Exception):
    """Raised at the command's first file to write: its judging is over, nothing is written."""


@dataclass
class DryRunModel:
    """A stand-in for the judge's model that sends nothing: it has the model's id and settings (so
    the cache keys are the real ones), counts the prompts that reach it, and replies with nothing."""

    model: Any
    prompts: int = 0
    prompt_tokens: int = 0
    max_tokens: list[int | None] = field(default_factory=list)

    @property
    def model_id(self) -> str:
        return str(self.model.model_id)

    @property
    def constrained(self) -> bool:
        return bool(getattr(self.model, "constrained", False))

    @property
    def sent_params(self) -> Any:
        return getattr(self.model, "sent_params", None)

    async def generate(self, prompt: str, params: Any, *, schema: dict[str, Any] | None = None) -> Any:
        from ..model import Reply, TokenUsage, estimate_tokens

        tokens = estimate_tokens(str(prompt))
        self.prompts += 1
        self.prompt_tokens += tokens
        self.max_tokens.append(getattr(params, "max_tokens", None))
        return Reply(text="", usage=TokenUsage(prompt_tokens=tokens, completion_tokens=0))


def dry_run_store(spec: str | None) -> Any:
    """A throwaway SQLite store holding a copy of every run and the reply cache of the store
    ``spec`` names (nothing when that store does not exist yet); removed when the process ends."""
    from ..runtime import open_store

    folder = tempfile.mkdtemp(prefix="langrag-dry-run-")
    atexit.register(shutil.rmtree, folder, True)
    copy = open_store(os.path.join(folder, "runs.sqlite"))
    real = spec if spec is not None else os.environ.get("LANGRAG_STORE") or DEFAULT_STORE
    if "://" not in str(real) and (real == ":memory:" or not os.path.exists(real)):
        return copy  # nothing stored yet: every call is new
    try:
        source = open_store(real, read_only=True)
    except ConfigError:
        raise
    source.copy_runs(copy)
    return copy


def dry_run_line(command: str, judges: list[Any], prices: Any, *, batch: bool) -> str:
    """The line a dry run prints: calls not in the cache, their prompt tokens, the price range."""
    models = [j.model for j in judges if isinstance(j.model, DryRunModel)]
    calls = sum(m.prompts for m in models)
    cached = sum(j.usage.cached for j in judges)
    tokens = sum(m.prompt_tokens for m in models)
    bound = "at least " if command in _STEPWISE and calls else ""
    line = (f"dry run: {bound}{calls} judge call(s) not in the cache ({cached} answered from it), "
            f"about {tokens:,} prompt tokens (estimated at 4 characters a token)")
    if bound:
        line += "; later steps depend on the judge's replies and are not counted"
    ids = sorted({m.model_id for m in models})
    if not calls:
        return line + "; nothing would be paid"
    if prices is None:
        return line + f"; price unknown: give --prices FILE with {', '.join(ids)}"
    if batch:
        from ..runtime.batching import batch_prices
        for model_id in ids:
            prices = batch_prices(prices, model_id)
    low = high = 0.0
    for m in models:
        if m.model_id not in prices.prices:
            return line + f"; price unknown: --prices has no entry for {m.model_id}"
        p_in, p_out = prices.prices[m.model_id]
        reply_tokens = sum(t or ASSUMED_REPLY_TOKENS for t in m.max_tokens)
        low += m.prompt_tokens * p_in / 1_000_000
        high += m.prompt_tokens * p_in / 1_000_000 + reply_tokens * p_out / 1_000_000
    assumed = any(t is None for m in models for t in m.max_tokens)
    return (line + f"; price {low:.4f} to {high:.4f}{' at batch prices' if batch else ''} (the prompts alone, "
            f"to replies of {'at most ' + format(ASSUMED_REPLY_TOKENS, ',') + ' tokens each' if assumed else 'their max_tokens'})")
