"""Peak memory of a whole ``langrag-eval grade`` run against its size.

    python benchmarks/memory.py                      # 10,000 and 100,000 items
    python benchmarks/memory.py --items 10000,1000000        # the million-item run

For each size, a JSONL file of that many distinct (question, answer, label) rows is graded by the
command in a child process, with a scripted judge that answers at once (``scripted:FILE``), a fresh
run store and results file. Prints the child's peak resident memory (``VmHWM`` of its own address
space; ``ru_maxrss`` is no measure here, since Linux carries the parent's peak into a child across
``exec``, so a large parent, like ``all.py`` after its KNN section, hid the child's), the seconds the
run took (the whole process, start-up included) and per item, and the memory per item beyond the
smallest run's (the fixed cost: interpreter, imports, caches): ``(peak(N) - peak(N0)) / (N - N0)``.
The target is under 1 GiB at a million items, and at most 1 KiB per item beyond the fixed cost.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPLY = "Score: [[4]]\nReason: [[The answer states the label's fact.]]"


def write_items(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"q{i}", "question": f"What is item {i} about?",
                                 "answer": f"Item {i} is about topic {i % 97}.",
                                 "label": f"It is about topic {i % 97}."}) + "\n")


def peak_rss(n: int, folder: Path) -> tuple[int, float]:
    """Peak RSS in bytes of one ``grade`` run over ``n`` items, and its seconds."""
    items, judge = folder / f"items{n}.jsonl", folder / "judge.json"
    write_items(items, n)
    judge.write_text(json.dumps({"": REPLY}), encoding="utf-8")
    cmd = [sys.executable, "-c",
           "import sys\n"
           "from langrag_eval.cli import main\n"
           "code = main(sys.argv[1:])\n"
           "with open('/proc/self/status') as fh:\n"
           "    print('PEAK', *[line.split()[1] for line in fh if line.startswith('VmHWM:')], file=sys.stderr)\n"
           "sys.exit(code)",
           "grade", str(items), "--judge", f"scripted:{judge}", "--store", str(folder / f"run{n}.db"),
           "--out", str(folder / f"out{n}.jsonl")]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"grade over {n} items failed:\n{done.stderr[-2000:]}")
    peak = [line for line in done.stderr.splitlines() if line.startswith("PEAK")]
    if not peak or len(peak[-1].split()) != 2:
        raise SystemExit("the grade run did not report its peak memory (/proc/self/status has no VmHWM)")
    kib = int(peak[-1].split()[1])
    lines = sum(1 for _ in (folder / f"out{n}.jsonl").open(encoding="utf-8"))
    if lines != n:
        raise SystemExit(f"grade over {n} items wrote {lines} results")
    for p in (items, folder / f"out{n}.jsonl"):
        p.unlink()
    return kib * 1024, seconds


def main(sizes: list[int]) -> list[tuple[int, int, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(sizes):
            peak, seconds = peak_rss(n, Path(tmp))
            rows.append((n, peak, seconds))
    base_n, base_peak, _ = rows[0]
    print(f"langrag-eval grade, scripted judge with no latency (load {os.getloadavg()[0]:.1f})")
    print(f"{'items':>10}{'peak RSS MiB':>14}{'seconds':>10}{'ms an item':>12}{'KiB/item beyond the smallest':>31}")
    for n, peak, seconds in rows:
        per = "" if n == base_n else f"{(peak - base_peak) / (n - base_n) / 1024:.3f}"
        print(f"{n:>10}{peak / 2**20:>14.1f}{seconds:>10.1f}{1000 * seconds / n:>12.2f}{per:>31}")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="10000,100000", help="sizes, comma-separated")
    args = parser.parse_args()
    main([int(x) for x in args.items.split(",")])
