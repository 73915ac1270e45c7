"""Streaming a run on a shared PostgreSQL store reads each stored judgment a bounded number of times,
however large the run: a chunk reads its own items' rows, never the rows of the chunks before it.
Counted on the connection (rows the server sent back for each SELECT on the judgments table), not
timed. The guarantees stay: every item yielded once, in order; a killed run resumes without judging
a finished item again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from store_backends import postgres_schema
from stream_worker import Measure, expected, items, stream

WORKER = Path(__file__).with_name("stream_worker.py")


def test_a_streamed_run_reads_each_judgment_row_a_bounded_number_of_times(tmp_path: Path) -> None:
    n, chunk = 3000, 50
    with postgres_schema() as url:
        got, reads = asyncio.run(stream(url, n, chunk, Measure(str(tmp_path / "calls.log"))))
        assert got == [(i, expected(i)) for i in items(n)]   # every item once, in input order
        # a chunk reads its items' rows when it starts and its results when done: at most 2 rows an
        # item. Reading the task's rows at every chunk, as before, read 912,000 here.
        assert reads <= 2 * n
        again, reads = asyncio.run(stream(url, n, chunk, Measure(str(tmp_path / "calls.log"))))
        assert again == got and reads <= 2 * n               # all read back, nothing judged again
        assert len((tmp_path / "calls.log").read_text().splitlines()) == n


def _start(url: str, log: Path, n: int, chunk: int, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WORKER), url, str(log), str(n), str(chunk), str(out), "0.005"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def _lines(path: Path) -> list:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()] \
        if path.exists() else []


def test_a_killed_stream_resumes_without_judging_a_finished_item_again(tmp_path: Path) -> None:
    n, chunk = 1200, 40
    log = tmp_path / "calls.log"
    with postgres_schema() as url:
        first = _start(url, log, n, chunk, tmp_path / "first.jsonl")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(_lines(log)) < n // 3 and first.poll() is None:
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.wait()
        import psycopg
        with psycopg.connect(url) as conn:
            stored = {r[0] for r in conn.execute("SELECT item FROM judgments WHERE task='length'")}
        judged_first = [c["item"] for c in _lines(log)]
        assert n // 3 <= len(judged_first) < n and stored <= set(judged_first)

        second = _start(url, log, n, chunk, tmp_path / "second.jsonl")
        assert second.wait(timeout=300) == 0, second.communicate()
        assert _lines(tmp_path / "second.jsonl") == [[i, expected(i)] for i in items(n)]
        judged_second = [c["item"] for c in _lines(log)][len(judged_first):]
        assert not set(judged_second) & stored               # finished work is not done again
        assert set(judged_second) | stored == set(items(n)) and len(judged_second) == len(set(judged_second))
        # judged again: only what was in flight when the process died (8 at once), each once more
        assert len(set(judged_first) - stored) <= 8
        assert Counter(judged_first + judged_second).most_common(1)[0][1] <= 2
        assert int((tmp_path / "second.jsonl.reads").read_text()) <= 2 * n
