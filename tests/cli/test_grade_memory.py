"""Memory of a ``grade`` run against its size: the Python heap's peak (``tracemalloc``) of the
whole command path, measured at two sizes, grows by a bounded amount per graded item. Both sizes
exceed the judge's in-memory reply cache (1,024 replies), so its fixed cost cancels out."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from langrag_eval.cli import main

REPLY = "Score: [[4]]\nReason: [[The answer states the label's fact.]]"
# Python heap per graded item beyond the fixed cost, measured at 1,200 and 3,600 items: about
# 5.2 KiB while the dataset summary held every item's Score objects at once (more with the stored
# item contents built as a whole list first), about 4.0 KiB with both tallied item by item.
PER_ITEM_LIMIT = 4.5 * 1024


def _peak(tmp_path: Path, n: int) -> int:
    items, judge = tmp_path / f"items{n}.jsonl", tmp_path / "judge.json"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"q{i}", "question": f"What is item {i} about?",
                                 "answer": f"Item {i} is about topic {i % 97}.",
                                 "label": f"It is about topic {i % 97}."}) + "\n")
    judge.write_text(json.dumps({"": REPLY}), encoding="utf-8")
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
