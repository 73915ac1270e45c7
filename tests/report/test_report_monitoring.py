"""The report of ``thelma --traces --window``: a week of generated OTLP traces with a drop planted in
one day, scored by the real command with a scripted judge, opened in headless Chromium: one time
series per metric with its intervals, the flagged day marked and no other, each day's worst items
with their trace ids, linked to the item browser; offline, and within a 390 px screen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "traces"))
from test_trace_windows import DROP_DAY, week  # noqa: E402  (the traces suite's own generator)

from langrag_eval.cli import main  # noqa: E402
from langrag_eval.runtime import RunStore  # noqa: E402

FLAGGED = "2026-11-22T00:00:00+00:00"


@pytest.fixture(scope="module")
def monitoring_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("monitoring")
    export = week(folder / "week.jsonl", per_day=12)
    judge = folder / "judge.json"  # a stale passage is extraneous, a fresh one essential
    judge.write_text(json.dumps({"stale": "<output>0</output>", "": "<output>1</output>"}))
    store = folder / "s.sqlite"
    assert main(["thelma", "--traces", str(export), "--window", "1d", "--metrics", "sp1,gr", "--embedder", "none",
                 "--judge", f"scripted:{judge}", "--store", str(store), "--out", str(folder / "out.jsonl")]) == 0
    run = RunStore(store).runs()[0]["id"]
    out = folder / "report.html"
    assert main(["report", run, "--store", str(store), "--out", str(out)]) == 0
    return out


def test_time_series_per_metric_with_the_flagged_day(monitoring_report: Path, open_report) -> None:
    page = open_report(monitoring_report)
    p = page.page
    assert page.errors == [] and all(url.startswith("file:") for url in page.requests)
    charts = p.locator("#window-charts svg")
    assert charts.count() == 2  # sp1 and gr
    sp1 = charts.nth(0)
    assert "SP1" in sp1.locator("text").first.text_content()
    assert sp1.locator("g.window").count() == 7
    assert sp1.locator("g.window.flagged").count() == 1
    assert FLAGGED in sp1.locator("g.window.flagged title").text_content()
    # groundedness reads the same stale passages: flagged on that day or not at all, never another
    gr = charts.nth(1).locator("g.window.flagged title")
    assert all(FLAGGED in gr.nth(i).text_content() for i in range(gr.count()))
    # every window's mean carries an interval (a line from low to high) and the table agrees
    assert sp1.locator("g.window line").count() == 7
    flagged = p.locator("#window-table tr.window-flagged")
    assert flagged.count() == 1 and flagged.locator("td").first.inner_text() == FLAGGED
    assert "1 of 7 windows flagged" in p.inner_text("#windows")
    assert "monitoring" in p.inner_text("#headline")


def test_worst_items_of_each_window_link_to_their_trace(monitoring_report: Path, open_report) -> None:
    p = open_report(monitoring_report).page
    rows = p.locator("#window-worst tr[data-window]")
    assert rows.count() == 7 * 3
    worst = p.locator(f"#window-worst tr[data-window='{FLAGGED}']")
    ids = [worst.nth(i).locator("a.trace-link").inner_text() for i in range(worst.count())]
    # the generator's trace ids: the day (1-based, two hex digits) then the item's number
    assert all(i.startswith(f"{DROP_DAY + 1:02x}") and len(i) == 32 for i in ids), ids
    means = [float(worst.nth(i).locator("td").nth(2).inner_text()) for i in range(3)]
    assert means == sorted(means) and means[0] < 0.5  # lowest first: a stale passage's trace
    worst.first.locator("a.trace-link").click()
    shown = p.locator("#item-rows tr.item-row")
    assert shown.count() == 1 and shown.first.get_attribute("data-id") == ids[0]


def test_monitoring_report_fits_a_phone(monitoring_report: Path, open_report) -> None:
    p = open_report(monitoring_report).page
    p.set_viewport_size({"width": 390, "height": 800})
    assert p.evaluate("document.documentElement.scrollWidth") <= 390
    box = p.locator("#window-charts svg").first.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390
