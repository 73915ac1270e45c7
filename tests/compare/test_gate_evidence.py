"""A gate that passes only because a handful of items cannot show anything says so: n, the interval
and the smallest drop it could have detected; ``--min-n`` turns that into an undecided gate (exit 2)."""

from __future__ import annotations

import re

from compare_helpers import put_grade_run

from langrag_eval.cli import main
from langrag_eval.runtime import RunStore


def _store(tmp_path, n: int, lost: int) -> str:
    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    put_grade_run(store, "grade-main", [5] * n)
    put_grade_run(store, "grade-branch", [2 if i < lost else 5 for i in range(n)])
    store.close()
    return str(path)


def test_four_items_pass_for_lack_of_evidence_and_say_so(tmp_path, capsys) -> None:
    store = _store(tmp_path, 4, 1)  # accept rate 100 % -> 75 %: -25 points on four items
    code = main(["gate", "grade-branch", "--baseline", "grade-main", "--max-drop", "accept_rate=0.02",
                 "--store", store])
    out = capsys.readouterr().out
    assert code == 0
    line = next(l for l in out.splitlines() if "accept_rate" in l and "PASS" in l)
    assert line.split()[0] == "PASS*" and "insufficient evidence" in line and "n=4" in line
    low, high = map(float, re.search(r"interval \[([-+\d.]+) pts, ([-+\d.]+) pts\]", line).groups())
    assert low < -2.0 <= high  # the interval reaches drops larger than the allowed two points
    detectable = float(re.search(r"could have detected is about ([\d.]+) pts", line).group(1))
    change = float(re.search(r"change ([-+\d.]+) pts", line).group(1))
    assert abs(detectable - (2.0 + high - change)) < 0.06
    assert "for lack of evidence on accept_rate" in out.splitlines()[-1]


def test_min_n_makes_a_small_comparison_undecided(tmp_path, capsys) -> None:
    store = _store(tmp_path, 4, 1)
    code = main(["gate", "grade-branch", "--baseline", "grade-main", "--max-drop", "accept_rate=0.02",
                 "--min-n", "30", "--store", store])
    out = capsys.readouterr().out
    assert code == 2
    assert "only 4 item(s) scored in both runs, --min-n asks for 30" in out and "UNDECIDED" in out


def test_enough_items_and_no_change_pass_plainly(tmp_path, capsys) -> None:
    store = _store(tmp_path, 400, 0)
    assert main(["gate", "grade-branch", "--baseline", "grade-main", "--max-drop", "accept_rate=0.02",
                 "--min-n", "30", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "PASS*" not in out and "insufficient" not in out and out.splitlines()[-1] == "gate PASSED (exit 0)"
