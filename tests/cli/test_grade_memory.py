"""Memory of a ``grade`` run against its size: the Python heap's peak (``tracemalloc``) of the
whole command path, measured at two sizes, grows by a bounded amount per graded item. Both sizes
exceed the judge's in-memory reply cache (1,024 replies) and the chunk graded at once (1,000
items), so their fixed costs cancel out. A second test measures the whole process (peak resident
memory of the command in a child process, C libraries and SQLite included) at 6,000 and 18,000
items: the slope must stay under 1 KiB an item, which keeps a million-item run under 1 GiB."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from langrag_eval.cli import main

REPLY = "Score: [[4]]\nReason: [[The answer states the label's fact.]]"
# Python heap per graded item beyond the fixed cost, measured at 1,200 and 3,600 items: about
# 5.2 KiB while the dataset summary held every item's Score objects at once, about 4.0 KiB with
# both tallied item by item while the samples and results were still held, about 0.5 KiB with the
# run streamed (what is left: the ids read to find repeated ones and their digests).
PER_ITEM_LIMIT = 1024
# Whole-process peak per item between 6,000 and 18,000 items (see the module docstring).
RSS_PER_ITEM_LIMIT = 1024


def _items(tmp_path: Path, n: int) -> tuple[Path, Path]:
    items, judge = tmp_path / f"items{n}.jsonl", tmp_path / "judge.json"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"q{i}", "question": f"What is item {i} about?",
                                 "answer": f"Item {i} is about topic {i % 97}.",
                                 "label": f"It is about topic {i % 97}."}) + "\n")
    judge.write_text(json.dumps({"": REPLY}), encoding="utf-8")
    return items, judge


def _peak(tmp_path: Path, n: int) -> int:
    items, judge = _items(tmp_path, n)
    out = tmp_path / f"out{n}.jsonl"
    tracemalloc.start()
    try:
        code = main(["grade", str(items), "--judge", f"scripted:{judge}", "--store", str(tmp_path / f"run{n}.db"),
                     "--out", str(out)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    assert sum(1 for _ in out.open(encoding="utf-8")) == n
    return peak


def test_grade_peak_memory_grows_by_a_bounded_amount_per_item(tmp_path: Path, capsys) -> None:
    _peak(tmp_path, 10)  # the imports made on the way (statistics, report) are not an item's cost
    small, large = _peak(tmp_path, 1200), _peak(tmp_path, 3600)
    per_item = (large - small) / 2400
    print(f"grade: {per_item / 1024:.2f} KiB of Python heap per item")
    assert per_item <= PER_ITEM_LIMIT, f"{per_item / 1024:.2f} KiB per graded item"


def _peak_rss(tmp_path: Path, n: int) -> int:
    """Peak resident memory in bytes of the ``grade`` command over ``n`` items, in a child process."""
    items, judge = _items(tmp_path, n)
    out = tmp_path / f"out{n}.jsonl"
    # VmHWM, the peak of the child's own address space: Linux carries the parent's peak into a
    # child's ru_maxrss across exec, so beside a large pytest process both sizes read the same
    code = ("import sys\n"
            "from langrag_eval.cli import main\n"
            "code = main(sys.argv[1:])\n"
            "with open('/proc/self/status') as fh:\n"
            "    print('PEAK', *[line.split()[1] for line in fh if line.startswith('VmHWM:')], file=sys.stderr)\n"
            "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, "grade", str(items), "--judge", f"scripted:{judge}",
                           "--store", str(tmp_path / f"rss{n}.db"), "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sum(1 for _ in out.open(encoding="utf-8")) == n
    peak = [line for line in done.stderr.splitlines() if line.startswith("PEAK")]
    return int(peak[-1].split()[1]) * 1024  # VmHWM is in kB


@pytest.mark.skipif(sys.platform != "linux", reason="reads the peak from Linux's /proc/self/status")
def test_grade_resident_memory_per_item_stays_under_a_kibibyte(tmp_path: Path) -> None:
    small, large = _peak_rss(tmp_path, 6_000), _peak_rss(tmp_path, 18_000)
    per_item = (large - small) / 12_000
    print(f"grade: {per_item / 1024:.3f} KiB of resident memory per item")
    assert per_item <= RSS_PER_ITEM_LIMIT, f"{per_item / 1024:.3f} KiB per graded item"
