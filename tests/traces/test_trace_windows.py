"""Monitoring production traffic: a generated week of traces scored per day through the real
command, a drop planted in one day flagged and the other days not, a re-run paying for nothing, new
traces paying only for themselves; sampling that keeps the same traces whatever else the export
holds; and the drop test checked against scipy's and statsmodels' own functions."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from test_otlp_reader import rag_trace, request

from langrag_eval.errors import ConfigError
from langrag_eval.traces.windows import choose, compare_windows, parse_window, window_start
from langrag_eval.types import Sample

DAY = 86_400 * 10**9
START = 1_795_000_000 * 10**9 // DAY * DAY
DROP_DAY = 4


def week(path: Path, *, seed: int = 1, per_day: int = 25, drop_day: int = DROP_DAY) -> Path:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for day in range(7):
            for i in range(per_day):
                good = rng.random() < (0.2 if day == drop_day else 0.85)
                doc = ("fresh: the pump warranty is two years" if good else "stale: unrelated notes") + f" #{day}-{i}"
                fh.write(request(*rag_trace(f"{day + 1:02x}{i + 1:030x}", f"Warranty question {day}-{i}?", doc,
                                            "Two years.", start=START + day * DAY + i * 10**12)) + "\n")
    return path


def thelma(tmp_path: Path, export: Path, *extra: str) -> subprocess.CompletedProcess:
    judge = tmp_path / "judge.json"  # source precision: a stale passage is extraneous, a fresh one essential
    judge.write_text(json.dumps({"stale": "<output>0</output>", "": "<output>1</output>"}))
    return subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                           "thelma", "--traces", str(export), "--window", "1d", "--metrics", "sp1",
                           "--embedder", "none", "--judge", f"scripted:{judge}", "--store", str(tmp_path / "s.sqlite"),
                           *extra], capture_output=True, text=True, cwd=tmp_path)


def _windows(tmp_path: Path, export: Path) -> list[dict]:
    out = Path(str(export) + ".thelma.jsonl")
    assert out.exists()
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_planted_drop_is_flagged_and_a_rerun_pays_nothing(tmp_path: Path) -> None:
    export = week(tmp_path / "week.jsonl")
    first = thelma(tmp_path, export)
    assert first.returncode == 0, first.stderr
    flagged = [line for line in first.stdout.splitlines() if "DROPPED" in line]
    assert len(flagged) == 1 and flagged[0].strip().startswith("2026-11-22T00:00:00+00:00")
    assert "reused 0 finished judgment(s), judged 175" in first.stdout
    again = thelma(tmp_path, export)
    assert "reused 175 finished judgment(s), judged 0" in again.stdout  # the same run, read back
    with export.open("a") as fh:  # the next day's traffic: only it is paid for
        for i in range(5):
            fh.write(request(*rag_trace(f"ff{i + 1:030x}", f"New question {i}?", f"fresh doc {i}", "Two years.",
                                        start=START + 7 * DAY + i)) + "\n")
    more = thelma(tmp_path, export)
    assert "(cached 175, failed 0)" in more.stdout and "2026-11-25T00:00:00+00:00  5 traces" in more.stdout
    records = _windows(tmp_path, export)
    assert len(records) == 180 and all(r["line"] is None for r in records)


def test_a_baseline_that_is_no_window_and_a_bad_window_are_one_line(tmp_path: Path) -> None:
    export = week(tmp_path / "week.jsonl", per_day=3)
    bad = thelma(tmp_path, export, "--baseline", "2020-01-01")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "--baseline '2020-01-01': no window starts there" in bad.stderr
    with pytest.raises(ConfigError, match="expected a positive number and a unit"):
        parse_window("daily")


def _samples(n: int, *, stratum=lambda i: "a") -> list[Sample]:
    return [Sample(id=f"t{i}", question="q", metadata={"trace_id": f"t{i}", "root": stratum(i),
                                                      "started": f"2026-11-{1 + i % 3:02d}T05:00:00+00:00"})
            for i in range(n)]


def test_sampling_keeps_the_same_traces_when_the_export_grows() -> None:
    size = parse_window("1d")
    few = {s.id for s in choose(_samples(200), size, rate=0.3, seed=7)}
    many = {s.id for s in choose(_samples(400), size, rate=0.3, seed=7)}
    assert few == {i for i in many if int(i[1:]) < 200} and 30 < len(few) < 90
    capped = choose(_samples(300, stratum=lambda i: "x" if i % 2 else "y"), size, cap=4, stratify="root")
    per = {}
    for s in capped:
        per.setdefault((s.metadata["window"], s.metadata["root"]), []).append(s.id)
    assert len(per) == 6 and all(len(v) == 4 for v in per.values())


def test_windows_start_on_the_epoch_grid() -> None:
    assert window_start("2026-11-28T23:59:59+00:00", parse_window("1d")).isoformat() == "2026-11-28T00:00:00+00:00"
    assert window_start("2026-11-28T06:44:00+02:00", parse_window("30m")).isoformat() == "2026-11-28T04:30:00+00:00"


def test_the_drop_test_is_scipys_with_statsmodels_holm() -> None:
    from scipy.stats import mannwhitneyu
    from statsmodels.stats.multitest import multipletests

    rng = random.Random(3)
    base = {"sp1": [rng.random() for _ in range(30)], "gr": [rng.random() for _ in range(30)]}
    low = {"sp1": [rng.random() * 0.5 for _ in range(30)], "gr": [rng.random() for _ in range(30)]}
    rows = compare_windows({"w1": base, "w2": low})
    ps = [mannwhitneyu(base[m], low[m], alternative="two-sided").pvalue for m in ("sp1", "gr")]
    adjusted = multipletests(ps, method="holm")[1]
    got = rows[1]["metrics"]
    assert [got[m]["p"] for m in ("sp1", "gr")] == pytest.approx(ps)
    assert [got[m]["p_holm"] for m in ("sp1", "gr")] == pytest.approx(list(adjusted))
    assert rows[1]["dropped"] == ["sp1"] and rows[0]["baseline"]


def _gate(tmp_path: Path, run: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())",
                           "gate", run, "--latest-window", "--max-drop", "sp1=0.1", "--store",
                           str(tmp_path / "s.sqlite"), *extra], capture_output=True, text=True, cwd=tmp_path)


def _run_id(output: str) -> str:
    return output.split("(run ", 1)[1].split(",", 1)[0]


def test_gate_fails_a_latest_window_that_dropped_and_passes_one_that_held(tmp_path: Path) -> None:
    # the drop planted in the last day of the week: the gate exits 1 (its documented failure)
    dropped = week(tmp_path / "dropped.jsonl", per_day=30, drop_day=6)
    run = thelma(tmp_path, dropped)
    assert run.returncode == 0, run.stderr
    failed = _gate(tmp_path, _run_id(run.stdout), "--junit", str(tmp_path / "gate.xml"))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "FAIL" in failed.stdout and "2026-11-24T00:00:00+00:00" in failed.stdout
    assert "<failure" in (tmp_path / "gate.xml").read_text()
    # the same week with the drop in the middle: its last day held up against the first, exit 0
    held = thelma(tmp_path, week(tmp_path / "held.jsonl", per_day=30))
    passed = _gate(tmp_path, _run_id(held.stdout))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "gate PASSED" in passed.stdout
    # against the dropped day as baseline, the last day rose: still a pass
    against_drop = _gate(tmp_path, _run_id(held.stdout), "--baseline", "2026-11-22T00:00:00+00:00")
    assert against_drop.returncode == 0 and "baseline window 2026-11-22" in against_drop.stdout
    # a run without windows, and a baseline that is no window: one line each, exit 2
    nowhere = _gate(tmp_path, _run_id(held.stdout), "--baseline", "2020-01-01")
    assert nowhere.returncode == 2 and "no window of run" in nowhere.stderr and "Traceback" not in nowhere.stderr


def test_a_capped_choice_holds_only_what_it_keeps() -> None:
    import tracemalloc

    def stream(n: int):
        for i in range(n):
            yield Sample(id=f"t{i}", question=f"question {i} " * 20, answer="answer " * 20,
                         metadata={"trace_id": f"t{i}", "started": f"2026-11-{1 + i % 3:02d}T05:00:00+00:00"})

    tracemalloc.start()
    try:
        kept = choose(stream(20_000), parse_window("1d"), cap=10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(kept) == 30
    # 20,000 samples of about 1 KiB each would take 20 MB held; the heaps hold 30
    assert peak < 3 * 2**20, peak
    assert kept == choose(list(stream(20_000)), parse_window("1d"), cap=10)  # the same choice as held whole
