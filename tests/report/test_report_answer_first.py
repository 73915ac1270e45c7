"""The report leads with the answer and its badges and axes are honest: built from real offline runs
(the ``thelma`` and ``grade`` commands with scripted judges), opened in headless Chromium."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.report import write_report
from langrag_eval.runtime import RunStore

N = 12


def _thelma_run(folder: Path) -> tuple[Path, Path]:
    """THELMA over 12 items; the groundedness judge never answers in the expected shape, so one of
    three metrics is unscored on every item while the other two are scored."""
    data = folder / "qa.csv"
    with data.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "query", "sources", "response"])  # THELMA's names (aliases once renamed)
        for i in range(N):
            sources = [f"The pump {i} warranty is two years."] + (["Stale unrelated notes."] if i % 3 else [])
            w.writerow([f"q{i}", f"How long is the warranty of pump {i}?", json.dumps(sources), "Two years."])
    judge = folder / "judge.json"
    judge.write_text(json.dumps({"fact checker": "I cannot tell.", "Stale unrelated": "<output>0</output>",
                                 "": "<output>1</output>"}), encoding="utf-8")
    store = folder / "runs.sqlite"
    assert main(["thelma", str(data), "--metrics", "sp1,gr,rp", "--embedder", "none",
                 "--judge", f"scripted:{judge}", "--store", str(store)]) == 0
    return store, data


@pytest.fixture(scope="module")
def thelma_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunStore, str]:
    folder = tmp_path_factory.mktemp("answer-first")
    store_path, _ = _thelma_run(folder)
    store = RunStore(store_path)
    run = store.runs()[0]["id"]
    out = folder / "report.html"
    assert main(["report", run, "--store", str(store_path), "--out", str(out)]) == 0
    return out, store, run


def test_the_summary_comes_first_with_intervals_and_counts(thelma_report, open_report) -> None:
    path, store, run = thelma_report
    page = open_report(path)
    p = page.page
    assert page.errors == [] and all(url.startswith("file:") for url in page.requests)
    headings = [h.inner_text() for h in p.locator("section h2").all()]
    assert headings[0] == "Summary"
    assert headings.index("THELMA reference-free metrics") < headings.index("Judge card") < headings.index("Run settings")
    # the summary is on the first screen; the settings and the card's measures are collapsed
    assert p.locator("#headline").bounding_box()["y"] < 700
    assert not p.locator("#settings-details table").is_visible()
    rows = {r.locator("td").nth(0).inner_text(): r for r in p.locator("#headline tbody tr").all()}
    sp1 = rows["THELMA: SP1 source precision (per source)"]
    assert sp1.locator(".headline-n").inner_text() == f"{N} of {N}"
    assert re.fullmatch(r"\[0\.\d+, [01](\.\d+)?\] bootstrap", sp1.locator(".headline-interval").inner_text())
    gr = rows["THELMA: GR groundedness"]
    assert gr.locator(".headline-n").inner_text() == f"0 of {N}"
    assert gr.locator(".headline-unscored").inner_text() == f"{N} (unparseable)"
    assert "finished" in p.inner_text("#run-status")


def test_thelma_interval_is_a_confidence_interval_of_the_mean(thelma_report, open_report) -> None:
    path, store, run = thelma_report
    values = [r["scores"]["sp1"] for r in store.get_artifact(run, "thelma")["samples"]]
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    from scipy.stats import t

    half = t.ppf(0.975, len(values) - 1) * sd / math.sqrt(len(values))  # scipy's t interval, for scale
    p = open_report(path).page
    cell = p.locator("#thelma-metrics tr", has_text="SP1").locator("td").nth(2).inner_text()
    low, high = (float(x) for x in re.findall(r"[\d.]+", cell)[:2])
    assert low < mean < high
    assert high - low < 2 * sd  # narrower than mean ± one SD, what the chart used to draw
    assert abs((high - low) - 2 * half) < 0.6 * half  # about as wide as the t interval
    title = p.locator("#thelma svg text").first.text_content()
    assert "confidence interval" in title and "standard deviation" not in title


def test_an_item_with_an_unscored_metric_is_not_passed(thelma_report, open_report) -> None:
    path, _, _ = thelma_report
    p = open_report(path).page
    badges = [b.inner_text() for b in p.locator("#item-rows tr.item-row td:nth-child(4) .badge").all()]
    assert len(badges) == N
    assert all(b == "incomplete: 1 of 3 unscored (unparseable)" for b in badges), badges
    assert p.locator("#item-rows .badge-passed").count() == 0


def test_a_run_not_finished_says_running_or_stopped(tmp_path: Path, open_report) -> None:
    from langrag_eval.grading import VragGrade, VragGrader
    from langrag_eval.runtime import Judge, put_item_index
    from langrag_eval.runtime.batch import judgment_payload
    from langrag_eval.testing import ScriptedModel

    store = RunStore(tmp_path / "runs.sqlite")
    store.open_run("grade", {}, run_id="open", judge="scripted")
    grade = VragGrade(score=5, accepted=True, reason="ok")
    store.put_judgment("open", "q1", "vrag", judgment_payload(grade, VragGrader(Judge(ScriptedModel(["x"]))).scores),
                       scored=True)
    put_item_index(store, "open", "vrag", [("q1", "Why?", None, None)])
    running = open_report(write_report(store, "open", tmp_path / "running.html")).page.inner_text("#run-status")
    assert "running" in running and "not finished" not in running.split("(")[0]
    store.release("open")  # the process stops without finishing the run
    stopped = open_report(write_report(store, "open", tmp_path / "stopped.html")).page
    assert re.search(r"stopped at \d{4}-\d\d-\d\d \d\d:\d\d UTC", stopped.inner_text("#run-status"))
    stopped.locator("#settings-details summary").click()
    assert stopped.locator("#settings-details tr", has_text="state").inner_text().split("\t")[1].startswith("stopped at")
    assert "finished\tnot finished" not in stopped.inner_text("body")


def test_no_change_draws_a_readable_axis(tmp_path: Path, open_report) -> None:
    rows = tmp_path / "qa.csv"
    with rows.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "label"])
        for i in range(10):
            w.writerow([f"Question {i}?", f"Answer {i}.", f"Answer {i}."])
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"": "Reasoning: fine. Score: [[5]]"}), encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    for out in ("a.jsonl", "b.jsonl"):
        assert main(["grade", str(rows), "--judge", f"scripted:{judge}", "--store", str(store), "--out",
                     str(tmp_path / out), "--run", out[0]]) == 0
    html = tmp_path / "cmp.html"
    assert main(["report", "b", "--baseline", "a", "--store", str(store), "--out", str(html)]) == 0
    p = open_report(html).page
    ends = [t.text_content() for t in p.locator("#comparison svg").first.locator("text").all()][-3:]
    # the paired intervals of "no change" still have a width; the axis reads them, never at ±1e-09
    assert ends[1] == "0" and float(ends[0]) == -float(ends[2]) and 0.05 <= float(ends[2]) < 1, ends
    from langrag_eval.report.svg import difference_chart

    flat = difference_chart(["accept_rate"], [0.0], [0.0], [0.0])  # a zero-width interval: the least axis
    assert re.findall(r">(-?[\d.]+)</text>", flat)[-3:] == ["-0.05", "0", "0.05"]
    assert "e-" not in p.inner_text("#comparison")
