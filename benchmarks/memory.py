"""Peak memory of a whole ``langrag-eval grade`` run against its size.

    python benchmarks/memory.py                      # 10,000 and 100,000 items
    python benchmarks/memory.py --items 10000,1000000        # the million-item run
    python benchmarks/memory.py --items 1000000 --workers 4 --store postgresql://postgres@127.0.0.1/test

For each size, a JSONL file of that many distinct (question, answer, label) rows is graded by the
command in a child process, with a scripted judge that answers at once (``scripted:FILE``), a fresh
run store and results file. Prints the child's peak resident memory (``VmHWM`` of its own address
space; ``ru_maxrss`` is no measure here, since Linux carries the parent's peak into a child across
``exec``, so a large parent, like ``all.py`` after its KNN section, hid the child's), the seconds the
run took (the whole process, start-up included) and per item, and the memory per item beyond the
smallest run's (the fixed cost: interpreter, imports, caches): ``(peak(N) - peak(N0)) / (N - N0)``.
The target is under 1 GiB at a million items, and at most 1 KiB per item beyond the fixed cost.

``--store postgresql://...`` with ``--workers N``: N ``grade`` processes started at once with the
same command share the run on that PostgreSQL store, each in a schema of its own made for the size
and dropped after (the database must exist; nothing else in it is touched). Prints each worker's
peak RSS and the items it judged, and checks that every results file holds every item and that
the items judged add up to the size: none was judged twice.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REPLY = "Score: [[4]]\nReason: [[The answer states the label's fact.]]"


def write_items(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"q{i}", "question": f"What is item {i} about?",
                                 "answer": f"Item {i} is about topic {i % 97}.",
                                 "label": f"It is about topic {i % 97}."}) + "\n")


_CHILD = ("import sys\n"
          "from langrag_eval.cli import main\n"
          "code = main(sys.argv[1:])\n"
          "with open('/proc/self/status') as fh:\n"
          "    print('PEAK', *[line.split()[1] for line in fh if line.startswith('VmHWM:')], file=sys.stderr)\n"
          "sys.exit(code)")


def peak_rss(n: int, folder: Path, store: str | None = None, workers: int = 1) -> tuple[int, float]:
    """Peak RSS in bytes of one ``grade`` run over ``n`` items (the largest worker's), and its
    seconds."""
    peak, seconds, _ = run_grade(n, folder, store, workers)
    return peak, seconds


def run_grade(n: int, folder: Path, store: str | None = None, workers: int = 1) -> tuple[int, float, list[tuple[int, int]]]:
    """``workers`` ``grade`` processes over ``n`` items on one store: the largest peak RSS in bytes,
    the seconds from their start to the last one's end, and each worker's (peak, items judged)."""
    items, judge = folder / f"items{n}.jsonl", folder / "judge.json"
    write_items(items, n)
    judge.write_text(json.dumps({"": REPLY}), encoding="utf-8")
    outs = [folder / f"out{n}-{w}.jsonl" for w in range(workers)]
    with _fresh_store(store, folder, n) as url:
        start = time.perf_counter()
        children = [subprocess.Popen([sys.executable, "-c", _CHILD, "grade", str(items), "--judge", f"scripted:{judge}",
                                      "--store", url, "--out", str(out)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True) for out in outs]
        # what each printed: its summary (the items it judged) on stdout, its peak on stderr
        errors = ["\n".join(child.communicate()) for child in children]
        seconds = time.perf_counter() - start
    each = []
    for child, err in zip(children, errors):
        if child.returncode != 0:
            raise SystemExit(f"grade over {n} items failed:\n{err[-2000:]}")
        peak = [line for line in err.splitlines() if line.startswith("PEAK")]
        if not peak or len(peak[-1].split()) != 2:
            raise SystemExit("the grade run did not report its peak memory (/proc/self/status has no VmHWM)")
        judged = re.search(r"judged (\d+)", err)
        each.append((int(peak[-1].split()[1]) * 1024, int(judged.group(1)) if judged else -1))
    for out in outs:
        lines = sum(1 for _ in out.open(encoding="utf-8"))
        if lines != n:
            raise SystemExit(f"grade over {n} items wrote {lines} results to {out.name}")
        out.unlink()
    if sum(j for _, j in each) != n:
        raise SystemExit(f"the workers judged {[j for _, j in each]} items, {sum(j for _, j in each)} in all, not {n}")
    items.unlink()
    return max(p for p, _ in each), seconds, each


@contextmanager
def _fresh_store(store: str | None, folder: Path, n: int) -> Iterator[str]:
    """A store no run has used: a new SQLite file, or a new schema of the PostgreSQL database
    ``store`` names (its URL with the schema first on the search path), dropped afterwards."""
    if not store:
        yield str(folder / f"run{n}.db")
        return
    import sqlalchemy

    schema = f"langrag_bench_{n}_{uuid.uuid4().hex[:8]}"
    parts = urlsplit(store)
    engine = sqlalchemy.create_engine("postgresql+psycopg://" + store.split("://", 1)[1], isolation_level="AUTOCOMMIT")
    query = dict(parse_qsl(parts.query))
    query["options"] = (query.get("options", "") + f" -csearch_path={schema}").strip()
    with engine.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        yield urlunsplit(parts._replace(query=urlencode(query)))
    finally:
        with engine.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        engine.dispose()


def main(sizes: list[int], store: str | None = None, workers: int = 1) -> list[tuple[int, int, float]]:
    rows, each = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(sizes):
            peak, seconds, each[n] = run_grade(n, Path(tmp), store, workers)
            rows.append((n, peak, seconds))
    base_n, base_peak, _ = rows[0]
    where = f"{workers} worker(s) on {_shown(store)}" if store else "a SQLite store"
    print(f"langrag-eval grade, scripted judge with no latency, {where} (load {os.getloadavg()[0]:.1f})")
    print(f"{'items':>10}{'peak RSS MiB':>14}{'seconds':>10}{'ms an item':>12}{'KiB/item beyond the smallest':>31}")
    for n, peak, seconds in rows:
        per = "" if n == base_n else f"{(peak - base_peak) / (n - base_n) / 1024:.3f}"
        print(f"{n:>10}{peak / 2**20:>14.1f}{seconds:>10.1f}{1000 * seconds / n:>12.2f}{per:>31}")
        if workers > 1:
            print(" " * 10 + "  each worker: " + ", ".join(f"{p / 2**20:.1f} MiB, judged {j:,}" for p, j in each[n]))
    return rows


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1], query=""))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="10000,100000", help="sizes, comma-separated")
    parser.add_argument("--store", help="a PostgreSQL URL shared by the workers (default: a SQLite file)")
    parser.add_argument("--workers", type=int, default=1, help="grade processes started at once (default 1)")
    args = parser.parse_args()
    if args.workers > 1 and not args.store:
        parser.error("--workers above 1 needs a shared --store postgresql://...")
    main([int(x) for x in args.items.split(",")], args.store, args.workers)
