"""Options every judging command shares, building a Judge and run store from them, opening the
command's run, and the lines every command prints the same way."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, redact
from ..files.terminal import shown, shown_lines
from ._batch import add_batch_options, setup_batch_judge
from ._dryrun import DryRunModel, add_dry_run_option, dry_run_store
from ._executor import add_executor_options, check_ray_options, run_command_on_ray
from ._options import DEFAULT_STORE, JUDGE, RUN_AND_STORE, group
from ._startup import loading

if TYPE_CHECKING:  # the judging stack is imported when a command runs, never for --help
    from ..models import ResolvedJudge
    from ..run.session import RunSession
    from ..runtime import Judge, RunStore

__all__ = ["add_judge_options", "add_store_option", "add_store_options", "add_run_argument", "run_argument",
           "add_call_options", "JudgeSetup", "setup_judge", "check_call_options", "make_judge", "say", "shown",
           "open_session", "say_reuse", "say_usage", "report_issues", "quiet_model_loading",
           "open_store_to_read", "open_store_to_write", "run_listing", "COMMAND_ARTIFACT"]


def add_store_option(p: argparse.ArgumentParser) -> None:
    """``--store`` alone: for the commands that read runs (report, compare, gate)."""
    group(p, RUN_AND_STORE).add_argument("--store", default=None,
                   help=f"run store: a SQLite file, or postgresql://user@host/db for a store several "
                        f"workers share (default: $LANGRAG_STORE, else {DEFAULT_STORE})")


def add_run_argument(p: argparse.ArgumentParser, what: str = "run id, or a unique prefix of one") -> None:
    """A run named either way, ``RUN`` or ``--run RUN`` (the form the writing commands take)."""
    p = group(p, RUN_AND_STORE)
    p.add_argument("run", nargs="?", help=what)
    p.add_argument("--run", dest="run_option", default=None, metavar="RUN", help="the same as the RUN argument")


def run_argument(args: argparse.Namespace) -> str | None:
    """The run :func:`add_run_argument` named, or None; two different ones are an error."""
    if args.run and args.run_option and args.run != args.run_option:
        raise ConfigError(f"two runs named: {args.run} and --run {args.run_option}; give one")
    return args.run or args.run_option


def add_store_options(p: argparse.ArgumentParser) -> None:
    """``--store`` and the options of a command that writes a run: ``--run``, ``--continue``, ``--no-wait``."""
    add_store_option(p)
    p = group(p, RUN_AND_STORE)
    p.add_argument("--run", dest="run_id", default=None,
                   help="run id; by default derived from the command, its settings and the contents "
                        "of its input files, so the same command on the same inputs resumes the same run")
    p.add_argument("--continue", dest="continue_run", action="store_true",
                   help="keep a named --run whose inputs or settings changed: items whose content "
                        "changed are judged again, unchanged ones reused")
    p.add_argument("--no-wait", dest="no_wait", action="store_true",
                   help="when another process is writing the same run, stop at once instead of "
                        "waiting for it to finish")


def add_call_options(p: argparse.ArgumentParser, *, concurrency: int = 16, what: str = "judge calls") -> None:
    """How model calls are made: how many at once, how long each may take, how often tried."""
    p = group(p, JUDGE)
    p.add_argument("--concurrency", type=int, default=concurrency,
                   help=f"{what} in flight (default {concurrency})")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per model call (default 120)")
    p.add_argument("--max-attempts", type=int, default=6, help="tries per call, first included (default 6)")


def add_judge_options(p: argparse.ArgumentParser) -> None:
    add_store_options(p)
    group(p, JUDGE).add_argument("--judge", default=None,
                   help="provider:model (openai:gpt-4o), local, local:/path/model.gguf, "
                        "scripted:replies.json; default: $LANGRAG_JUDGE, else openai:gpt-4o when "
                        "OPENAI_API_KEY is set, else the local 270M model")
    add_call_options(p)
    add_dry_run_option(p)
    add_batch_options(p)
    add_executor_options(p)


@dataclass
class JudgeSetup:
    judge: Judge
    store: RunStore
    warning: str | None
    spec: str | None = None  # the judge specification it was made from (a batch judge has none)


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
    from ..runtime import Judge, PriceTable, RetryPolicy
    dry = getattr(args, "dry_run", False)
    # A dry run's judge sends nothing; no repair re-ask either, which a real reply would not need.
    judge = Judge(DryRunModel(resolved.model) if dry else resolved.model, store=store, repair=not dry, concurrency=args.concurrency,
                  retry=RetryPolicy(max_attempts=args.max_attempts, timeout=args.timeout),
                  prices=PriceTable.read(args.prices) if getattr(args, "prices", None) else None)
    if resolved.warning:
        say(f"WARNING: {resolved.warning}", err=True)
    JUDGES.append(judge)
    return judge


# The judges this command made: a run in which every call failed and none answered (from the
# model or the cache) scored nothing, and replaces no earlier results (see ``nothing_scored``).
JUDGES: list["Judge"] = []


def nothing_scored() -> str | None:
    """Why this command scored nothing, when each of its judges' calls failed and none answered."""
    failed = sum(j.usage.failed for j in JUDGES)
    answered = sum(j.usage.calls + j.usage.cached for j in JUDGES)
    if failed and not answered:
        return f"nothing was scored: all {failed} judge call(s) failed (see the unscored causes above)"
    return None


GENERATOR_WARNING = (
    "The generator is the offline default, a 270M-parameter model: its answers show how the tool works, "
    "not what a RAG app can do. Choose a real model with --judge provider:model (for example "
    "openai:gpt-4o) or LANGRAG_JUDGE.")


def setup_judge(args: argparse.Namespace, *, role: str = "judge", executor: bool = False) -> JudgeSetup:
    """The judge (or, with ``role="generator"``, the model that writes answers) and the run store.
    ``executor``: the command judges through ``run.aevaluate`` with
    :func:`~langrag_eval.cli._executor.command_executor`'s executor; otherwise ``--executor ray``
    runs the whole command on the Ray workers first, and this process then reads the run back."""
    from ..models import resolve_judge

    check_call_options(args)
    if getattr(args, "dry_run", False):  # counted here, in this process, at the list price less any batch discount
        args.executor = "local"
    elif getattr(args, "executor", "local") == "ray":
        check_ray_options(args)
        if not executor:
            run_command_on_ray(args)
    if getattr(args, "batch", False) and not getattr(args, "dry_run", False):
        return setup_batch_judge(args, JudgeSetup)  # type: ignore[return-value]
    with loading():  # the judge's SDK: the largest load of a command
        resolved = resolve_judge(args.judge)  # before the store: a bad --judge leaves no file behind
    if role == "generator" and resolved.warning:
        resolved = dataclasses.replace(resolved, warning=GENERATOR_WARNING)
    store = open_store_to_write(args.store, dry_run=getattr(args, "dry_run", False))
    return JudgeSetup(judge=make_judge(resolved, args, store), store=store, warning=resolved.warning,
                      spec=resolved.spec)


def open_session(store: RunStore, args: argparse.Namespace, kind: str, config: dict, *,
                 inputs: dict[str, str] | None = None, judge: str | None = None,
                 default_id: str | None = None, judge_spec: str | None = None,
                 items_on_executor: bool = False) -> RunSession:
    """The command's :class:`~langrag_eval.run.session.RunSession`: its run opened (or resumed)
    under its lease, keyed by settings and input contents (``default_id``: the run id when ``--run``
    names none, instead of one derived from them), with the command line recorded.
    ``items_on_executor``: with ``--executor ray``, Ray's actors judge the session's items (their
    judge made from ``judge_spec``); otherwise the command ran whole on them already."""
    from ..run.session import RunSession
    from ._executor import command_executor
    command = None
    if getattr(args, "argv", None) is not None:  # a command line, not a library call of a handler
        from ._files import input_paths
        command = {"argv": ["langrag-eval", *args.argv], "cwd": os.getcwd(), "inputs": input_paths(args)}
    return RunSession.open(store, kind, config, run_id=getattr(args, "run_id", None) or default_id, judge=judge,
                           inputs=inputs, allow_changed=getattr(args, "continue_run", False),
                           wait=not getattr(args, "no_wait", False), on_wait=lambda m: say(m, err=True),
                           executor=command_executor(args, judge_spec) if items_on_executor else None,
                           command=command)


# The artifact that records the command line a run was made by, with its input files, so that a
# listing of the store says what each run is (``store status``, ``report --list``): the run
# session's own name for it (``run.session.COMMAND_ARTIFACT``), repeated here so --help loads no
# run layer.
COMMAND_ARTIFACT = "command"


def run_listing(store: RunStore, run: dict[str, Any]) -> str | None:
    """The second line of a run in a listing: its input files and the command that made it (None for
    a run made otherwise, by a library call or before commands were recorded)."""
    import shlex

    try:
        made = store.get_artifact(run["id"], COMMAND_ARTIFACT)
    except Exception:  # a damaged artifact must not hide the other runs of the listing
        return None
    if not isinstance(made, dict) or not made.get("argv"):
        return None
    inputs = ", ".join(made.get("inputs") or []) or "none"
    return f"    input: {inputs}; command: {shlex.join(str(a) for a in made['argv'])}"


def say_reuse(store: RunStore, run_id: str, indent: str = "  ") -> None:
    """One line on what this pass reused and judged, so a changed input is visibly judged again."""
    counts = store.batch_counts(run_id)
    if counts is not None:
        say(f"{indent}{counts.describe()}")


def say_usage(meter: Any, usage: dict[str, Any], indent: str = "  ", *, failure: dict[str, Any] | None = None) -> None:
    """The judge's calls in this process (``meter``: a UsageMeter) and over the whole run (``usage``:
    the store's totals for it, with tokens and cost); ``failure``: the error most failed calls of
    the run ended with (the store's ``usage(run)["top_failure"]``), said beside the failed count."""
    why = f", mostly: {textwrap.shorten(str(failure['error']), 120, placeholder=' …')}" if failure and meter.failed else ""
    say(f"{indent}model calls now: {meter.calls} (cached {meter.cached}, failed {meter.failed}{why}); over this run: "
        f"{usage['calls']} calls, {usage['prompt_tokens']} + {usage['completion_tokens']} tokens"
        + ("" if usage["cost"] is None else f", cost {usage['cost']:.4f}"))


def report_issues(issues: Sequence[object], *, limit: int = 20, more: str = "in the input") -> None:
    """One warning line per problem found in the input (the first ``limit`` of them), on stderr."""
    for issue in issues[:limit]:
        say(f"warning: {shown(issue)}", err=True)
    if len(issues) > limit:
        say(f"warning: ... and {len(issues) - limit} more problem(s) {more}", err=True)


def quiet_model_loading() -> None:
    """Keep the embedding model's loading progress bars off the terminal: the command prints one
    summary line, and an error must stay one line."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()


def open_store_to_read(spec: str | None) -> RunStore:
    """The run store of a command that only reads it (report, compare, gate, status): opened
    read-only, so that neither the reading nor a refusal (a damaged or newer store, a path that holds
    none) can change a byte of it or make a file."""
    from ..runtime import open_store
    path = spec if spec is not None else os.environ.get("LANGRAG_STORE") or str(DEFAULT_STORE)
    # Read-only whatever it is: a SQLite path that holds no store is refused in one line, never
    # made (an empty store would only say "no run" and leave a file behind); a PostgreSQL store is
    # read in a read-only session.
    return open_store(spec, read_only=str(path) != ":memory:")


def open_store_to_write(spec: str | None, *, dry_run: bool = False) -> RunStore:
    """The run store of a judging command. An existing SQLite file is looked at read-only first
    (:func:`~langrag_eval.runtime.open_store` does): one that is damaged, newer than this version,
    or another program's database is refused before anything writes to it."""
    from ..runtime import open_store
    if dry_run:  # a throwaway copy: the dry run neither counts what is stored nor changes it
        return dry_run_store(spec)
    return open_store(spec)


def say(text: str, *, err: bool = False) -> None:
    # Every line a command prints names stores and databases by URL: secrets masked, whatever form.
    # It also quotes names and replies from users' files and judges: no control or bidi character
    # of theirs reaches the terminal (shown() at each name also escapes a newline in it).
    print(shown_lines(redact(text)), file=sys.stderr if err else sys.stdout, flush=True)
