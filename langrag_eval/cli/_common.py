"""Options every judging command shares, and building a Judge and run store from them."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..io import parse_json
from ..models import ResolvedJudge, resolve_judge
from ..runtime import DEFAULT_STORE, Judge, PriceTable, RetryPolicy, RunStore, open_store

__all__ = ["add_judge_options", "add_store_options", "JudgeSetup", "setup_judge", "check_call_options",
           "make_judge", "say", "open_cli_run", "say_reuse"]


def add_store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=None,
                   help=f"run store: a SQLite file, or postgresql://user@host/db for a store several "
                        f"workers share (default: $LANGRAG_STORE, else {DEFAULT_STORE})")
    p.add_argument("--run", dest="run_id", default=None,
                   help="run id; by default derived from the command, its settings and the contents "
                        "of its input files, so the same command on the same inputs resumes the same run")
    p.add_argument("--continue", dest="continue_run", action="store_true",
                   help="keep a named --run whose inputs or settings changed: items whose content "
                        "changed are judged again, unchanged ones reused")
    p.add_argument("--no-wait", dest="no_wait", action="store_true",
                   help="when another process is writing the same run, stop at once instead of "
                        "waiting for it to finish")


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
        raw = parse_json(Path(path).read_text(encoding="utf-8"))
        if not isinstance(raw, dict) or not all(isinstance(v, list) and len(v) == 2 for v in raw.values()):
            raise TypeError("not an object of [input, output] pairs")
        return PriceTable.from_mapping(raw, source=str(path))
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
    store = open_store(args.store)
    return JudgeSetup(judge=make_judge(resolved, args, store), store=store, warning=resolved.warning)


def open_cli_run(store: RunStore, args: argparse.Namespace, kind: str, config: dict, *,
                 inputs: dict[str, str] | None = None, judge: str | None = None) -> str:
    """Open (or resume) the command's run under its lease, keyed by settings and input contents."""
    return store.open_run(kind, config, getattr(args, "run_id", None), judge=judge, inputs=inputs,
                          allow_changed=getattr(args, "continue_run", False),
                          wait=not getattr(args, "no_wait", False), on_wait=lambda m: say(m, err=True))


def say_reuse(store: RunStore, run_id: str, indent: str = "  ") -> None:
    """One line on what this pass reused and judged, so a changed input is visibly judged again."""
    counts = store.batch_counts(run_id)
    if counts is not None:
        say(f"{indent}{counts.describe()}")


def say(text: str, *, err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout, flush=True)
