"""Options every judging command shares, and building a Judge and run store from them."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..models import ResolvedJudge, resolve_judge
from ..runtime import DEFAULT_STORE, Judge, PriceTable, RetryPolicy, RunStore

__all__ = ["add_judge_options", "add_store_options", "JudgeSetup", "setup_judge", "check_call_options",
           "make_judge", "say"]


def add_store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=str(DEFAULT_STORE),
                   help=f"SQLite run store (default: {DEFAULT_STORE})")
    p.add_argument("--run", dest="run_id", default=None,
                   help="run id; by default derived from the command and its settings, "
                        "so the same command resumes the same run")


def add_judge_options(p: argparse.ArgumentParser) -> None:
    add_store_options(p)
    p.add_argument("--judge", default=None,
                   help="provider:model (openai:gpt-4o), local, local:/path/model.gguf, "
                        "scripted:replies.json; default: $LANGRAG_JUDGE, else openai:gpt-4o when "
                        "OPENAI_API_KEY is set, else the local 270M model")
    p.add_argument("--concurrency", type=int, default=16, help="judge calls in flight (default 16)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per judge call (default 120)")
    p.add_argument("--max-attempts", type=int, default=6, help="tries per call, first included (default 6)")
    p.add_argument("--prices", default=None,
                   help='JSON price table, per million tokens: {"openai:gpt-4o": [2.5, 10.0]}')


@dataclass
class JudgeSetup:
    judge: Judge
    store: RunStore
    warning: str | None


def _prices(path: str | None) -> PriceTable | None:
    if path is None:
        return None
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return PriceTable({k: (float(v[0]), float(v[1])) for k, v in raw.items()})
    except FileNotFoundError:
        raise ConfigError(f"{path}: price table not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the price table: {exc.strerror}") from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        raise ConfigError(f'{path}: a price table maps model ids to [input, output] prices per '
                          f'million tokens, e.g. {{"openai:gpt-4o": [2.5, 10.0]}} ({exc})') from None


def check_call_options(args: argparse.Namespace) -> None:
    """The options every judging command shares: checked before anything is opened or loaded."""
    if args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    if not args.timeout > 0:
        raise ConfigError("--timeout must be a positive number of seconds")
    if args.max_attempts < 1:
        raise ConfigError("--max-attempts must be at least 1")


def make_judge(resolved: ResolvedJudge, args: argparse.Namespace, store: RunStore) -> Judge:
    """A Judge over a resolved model with the command's call options; warns about a tiny judge."""
    judge = Judge(resolved.model, store=store, concurrency=args.concurrency,
                  retry=RetryPolicy(max_attempts=args.max_attempts, timeout=args.timeout),
                  prices=_prices(getattr(args, "prices", None)))
    if resolved.warning:
        say(f"WARNING: {resolved.warning}", err=True)
    return judge


def setup_judge(args: argparse.Namespace) -> JudgeSetup:
    check_call_options(args)
    resolved = resolve_judge(args.judge)  # before the store: a bad --judge leaves no file behind
    store = RunStore(args.store)
    return JudgeSetup(judge=make_judge(resolved, args, store), store=store, warning=resolved.warning)


def say(text: str, *, err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout, flush=True)
