"""``langrag-eval quickstart``: the whole tool once, offline, on a corpus shipped with the package.

    langrag-eval quickstart                        # local judge: runs anywhere, grades NOT meaningful
    langrag-eval quickstart --judge openai:gpt-4o  # the real thing

Indexes the shipped corpus, runs the six RAG / RAG-Fusion agents, grades their answers with
vRAG-Eval, scores them with THELMA, plays the tournament, and writes the HTML report. Ends with the
report's path and a five-line summary. Running it again resumes the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._common import add_judge_options, say, setup_judge, shown
from ._files import JUDGE_READS, declare_files, store_path
from ._options import OUTPUT, group

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..quickstart import QuickstartSettings, run_quickstart

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "quickstart", help="run every capability end to end on a shipped corpus and write the report",
        description="Index a shipped corpus, run the six RAG/RAG-Fusion agents, grade (vRAG-Eval), "
                    "score (THELMA), rank (tournament) and write the HTML report.")
    group(p, OUTPUT).add_argument("--out", default="langrag-quickstart", help="folder for the report and answers "
                                                               "(default: ./langrag-quickstart)")
    p.add_argument("--questions", type=int, default=None,
                   help="how many of the 8 shipped questions to use (default 8; 3 with the offline "
                        "270M judge)")
    p.add_argument("-k", type=int, default=None, help="passages per answer (default 3; 2 offline)")
    p.add_argument("--games", type=int, default=None,
                   help="pairwise games per question, each judged in both orders (default 5; 2 offline)")
    add_judge_options(p)
    declare_files(p, reads=JUDGE_READS, writes={"--out": "out", "--store": store_path},
                  folders={"--out"}, stores={"--store"})
    p.set_defaults(handler=handle, concurrency=4)


def _prepare_folder(out: Path) -> None:
    """Say where the output goes; a folder the quickstart makes gets a ``.gitignore`` of ``*``, so
    running it inside a repository leaves nothing untracked behind."""
    if out.exists():
        say(f"writing into {shown(out)}/", err=True)
        return
    out.mkdir(parents=True)
    (out / ".gitignore").write_text("# made by langrag-eval quickstart: keep its output out of version control\n*\n",
                                    encoding="utf-8")
    say(f"writing into {shown(out)}/ (new folder; its .gitignore keeps it out of version control)", err=True)


def handle(args: argparse.Namespace) -> int:
    from ..quickstart import QuickstartSettings, run_quickstart
    if (args.questions is not None and not 1 <= args.questions <= 8) or (args.k is not None and args.k < 1) \
            or (args.games is not None and args.games < 1):
        raise ConfigError("--questions must be 1..8, -k and --games at least 1")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise ConfigError(f"--out {args.out}: is a file; the quickstart writes a folder")
    setup = setup_judge(args)
    if args.dry_run:  # the steps write their files as they go: into a throwaway folder
        import tempfile
        args.out = tempfile.mkdtemp(prefix="langrag-dry-run-")
    else:
        _prepare_folder(Path(args.out))
    # The offline 270M judge needs seconds a call, so by default it runs every step on fewer items.
    base = QuickstartSettings.small() if setup.warning else QuickstartSettings()
    chosen = {k: v for k, v in (("questions", args.questions), ("k", args.k), ("games", args.games))
              if v is not None}
    settings = dataclasses.replace(base, **chosen)
    result = run_quickstart(setup.judge, setup.store, args.out, settings=settings, run_id=args.run_id,
                            warning=setup.warning, progress=lambda line: say(f"-> {line}", err=True))
    say("")
    for line in result.lines:
        say(line)
    if setup.warning:
        say(f"NOTE: {setup.warning}")
    if result.card is not None:
        card = result.card
        items = ", ".join(f"{k} {v}" for k, v in card.items.items())
        say(f"judge card ({items} human-labelled items; langrag-eval judge audit for more):")
        for verdict in card.verdicts:
            say(f"  {verdict.line}")
        flips = next((m for m in card.measures if m.key == "pairwise.position_flips"), None)
        if flips is not None and flips.estimate.value is not None:
            say(f"  position flips when the answers swap places: {flips.estimate.value:.0%} "
                f"(n={flips.estimate.n})")
    say(f"report: {shown(result.report)}   (run {shown(result.run_id)}, {result.seconds:.0f} s)")
    return 0
