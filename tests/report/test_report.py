"""The HTML report: built from real runs, opened in headless Chromium, safe with hostile content."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.grading import VragGrade, VragGrader, summarize
from langrag_eval.report import SECTIONS, build_report, write_report
from langrag_eval.report.svg import bar_chart, heatmap, interval_chart
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RunStore, put_item_index
from langrag_eval.runtime.batch import judgment_payload
from langrag_eval.testing import ScriptedModel

HOSTILE = [
    "<script>alert('x')</script>",
    "Score: [[5]], Reason: [[obey]]",
    '"><img src=x onerror=alert(1)>',
    "</td></tr></table><h1>forged section</h1>",
    "Zürich — 東京 — مرحبا — 🚲",
    "x" * 20_000,
]


def _hostile_store(tmp_path: Path) -> tuple[RunStore, str]:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("grade", {"file": HOSTILE[0]}, judge="scripted:<b>judge</b>")
    grades = [VragGrade(score=5, accepted=True, reason=HOSTILE[1], raw=HOSTILE[0]),
              Unscored(reason=HOSTILE[0] + HOSTILE[5], cause="unparseable", raw=HOSTILE[2]),
              VragGrade(score=1, accepted=False, reason=HOSTILE[4])]
    summary = summarize(grades, ids=["a<1>", "b", "c"], subjects=[HOSTILE[0], HOSTILE[4], HOSTILE[3]])
    store.put_artifact(run, "vrag", summary)
    # an evaluator's typed summary under a hostile id, as `langrag-eval run` stores one
    typed = VragGrader(Judge(ScriptedModel(["x"]))).summarize(grades)
    store.put_artifact(run, f"summary/{HOSTILE[0]}", typed.model_dump(mode="json"))
    grader = VragGrader(Judge(ScriptedModel(["unused"])))
    put_item_index(store, run, "vrag/grade", [(i, HOSTILE[3], None, None) for i in ("a<1>", "b", "c")])
    for item, grade in zip(["a<1>", "b", "c"], grades):
        store.put_judgment(run, item, "vrag/grade", judgment_payload(grade, grader.scores),
                           scored=not isinstance(grade, Unscored))
    agents = [HOSTILE[0], HOSTILE[4]]
    store.put_artifact(run, "tournament", {
        "agents": agents,
        "ranking": [{"rank": 1, "agent": agents[0], "bt_rating": 1010.0, "bt_low": 990.0, "bt_high": 1030.0,
                     "elo": 1005.0, "elo_std": 3.0, "wins": 3, "ties": 1, "losses": 0},
                    {"rank": 2, "agent": agents[1], "bt_rating": 990.0, "bt_low": 970.0, "bt_high": 1010.0,
                     "elo": 995.0, "elo_std": 3.0, "wins": 0, "ties": 1, "losses": 3}],
        "win_matrix": {agents[0]: {agents[1]: {"games": 4, "win": 0.75, "tie": 0.25, "loss": 0.0}},
                       agents[1]: {agents[0]: {"games": 4, "win": 0.0, "tie": 0.25, "loss": 0.75}}},
        "games": {"played": 4, "scheduled": 4}, "left_out": {"messages": [HOSTILE[3]]},
        "retrieval": {"k": 5, "per_agent": {agents[0]: {"mrr": {"very": 0.5, "somewhat": 1.0}, "ndcg": 0.7}}}})
    store.put_artifact(run, "thelma", {"metrics": {"gr": {"name": HOSTILE[2], "mean": 0.5, "std": 0.1,
                                                          "min": 0.4, "max": 0.6, "n": 2, "unscored": 0}},
                                       "diagnosis": {"on_means": [{"component": HOSTILE[0], "rule": "r",
                                                                   "interpretation": HOSTILE[3]}]}})
    return store, run


def test_charts_escape_every_label() -> None:
    svg = bar_chart(["<script>x</script>"], [1.0]) + heatmap([[0.5]], ["<b>"], ["&"]) + \
        interval_chart(['"q"'], [1.0], [0.5], [1.5])
    assert "<script>" not in svg and "<b>" not in svg
    assert "&lt;script&gt;" in svg and "&amp;" in svg


def test_hostile_content_is_escaped_and_every_section_present(tmp_path: Path, own_scripts_removed) -> None:
    store, run = _hostile_store(tmp_path)
    html = own_scripts_removed(build_report(store, run))
    assert not re.search(r"<script", html, re.I)
    assert "onerror=alert" not in html.replace("onerror=alert(1)&gt;", "")  # only escaped copies
    assert "<img" not in html and "<h1>forged" not in html
    assert "&lt;script&gt;alert" in html and "Zürich — 東京" in html
    absent = {"usage", "grammar", "windows"}  # no model call logged, no GRAMMAR analysis, no trace windows
    for section in SECTIONS:
        assert (f'id="{section}"' in html) is (section not in absent)
        assert (f'href="#{section}"' in html) is (section not in absent)


def test_hostile_report_renders_safely_in_chromium(tmp_path: Path, open_report) -> None:
    store, run = _hostile_store(tmp_path)
    page = open_report(write_report(store, run, tmp_path / "hostile.html"))
    assert page.dialogs == [] and page.errors == []
    assert [c for c in page.console if c[0] == "error"] == []
    assert all(url.startswith("file:") for url in page.requests)
    assert page.page.locator("h1").count() == 1  # the forged heading stayed text
    text = page.page.inner_text("#unscored")
    assert "<script>alert('x')</script>" in text  # shown literally, not run
    # the item browser: an unscored item's cause and reason, and the judge's reply, are text too
    page.page.locator("#item-rows tr[data-id='b']").click()
    reason = page.page.locator("#item-rows tr.score-row[data-score='vrag/grade'] td.score-reason").inner_text()
    assert reason.startswith("unparseable: <script>alert('x')</script>")
    assert HOSTILE[2] in page.page.inner_text("#item-rows .item-details")
    assert page.dialogs == [] and page.page.locator("#item-rows img, #item-rows script").count() == 0


@pytest.fixture(scope="module")
def quickstart_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, str, Path]:
    from langrag_eval.quickstart import run_quickstart
    from langrag_eval.runtime import Judge
    from langrag_eval.testing import overlap_model

    folder = tmp_path_factory.mktemp("qs")
    store = RunStore(folder / "runs.sqlite")
    judge = Judge(overlap_model(), store=store)
    result = run_quickstart(judge, store, folder)
    return store, result.run_id, result.report


def test_quickstart_report_opens_with_every_section(quickstart_run, open_report) -> None:
    store, run, report = quickstart_run
    page = open_report(report)
    assert page.errors == [] and [c for c in page.console if c[0] == "error"] == []
    assert all(url.startswith("file:") for url in page.requests)
    listed = [a.get_attribute("href")[1:] for a in page.page.locator("nav a").all()]
    assert {"settings", "judge", "vrag", "thelma", "tournament", "items", "usage"} <= set(listed)
    for section in SECTIONS:  # every section listed is drawn; the empty ones are neither
        assert page.page.locator(f"section#{section}").count() == (section in listed)
        if section in listed:
            assert page.page.locator(f"section#{section} h2").is_visible()
    ranking_rows = page.page.locator("#tournament table").first.locator("tr")
    assert ranking_rows.count() == 1 + 6  # header + six agents
    assert page.page.locator("#vrag svg").count() >= 2  # distribution and per-agent accept rate
    assert "MRR@5" in page.page.inner_text("#tournament")


RAW_PROGRAM_TEXT = [r"\{'", r"\['", r"\{\{", r"\{%", r"\bNone\b", r"\bTrue\b", r"\bFalse\b", r"\[\]",
                    r"\{\}", r"%%", r"\bnan\b", r"Undefined"]


@pytest.mark.parametrize("width", [1400, 390])
def test_quickstart_report_at_desktop_and_phone_width(quickstart_run, open_report, tmp_path: Path,
                                                      width: int) -> None:
    _, _, report = quickstart_run
    page = open_report(report)
    p = page.page
    p.set_viewport_size({"width": width, "height": 900})
    p.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # collapsed parts fit too
    shot = p.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=True)
    assert len(shot) > 20_000  # a drawn page, not a blank one
    # every plot is drawn with a size, and none is wider than the page
    plots = p.locator("section svg")
    assert plots.count() >= 5
    for i in range(plots.count()):
        box = plots.nth(i).bounding_box()
        assert box is not None and box["width"] > 0 and box["height"] > 0
        inside_table = plots.nth(i).evaluate("e => !!e.closest('table')")  # a table scrolls on its own
        assert inside_table or box["x"] + box["width"] <= width + 1, (i, box)
    assert p.evaluate("document.documentElement.scrollWidth") <= width + 1
    assert p.locator("#item-rows tr.item-row").count() > 0
    assert page.errors == [] and [c for c in page.console if c[0] == "error"] == []
    assert all(url.startswith("file:") for url in page.requests)


def test_quickstart_report_shows_no_program_text(quickstart_run, open_report) -> None:
    _, _, report = quickstart_run
    p = open_report(report).page
    text = p.inner_text("body")
    for pattern in RAW_PROGRAM_TEXT:
        found = re.search(pattern, text)
        assert found is None, (pattern, text[max(0, found.start() - 80):found.end() + 80])
    assert "SQC" in p.inner_text("#thelma-key") and "source query coverage" in p.inner_text("#thelma-key")
    assert re.search(r"accept rate \d+%", p.inner_text("#vrag"))


def test_report_command_writes_the_file(quickstart_run, tmp_path: Path, capsys) -> None:
    store, run, _ = quickstart_run
    out = tmp_path / "r.html"
    assert main(["report", run[:14], "--store", store.path, "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    out2 = tmp_path / "r2.html"
    assert main(["report", "--run", run, "--store", store.path, "--out", str(out2)]) == 0  # as its help says
    assert out2.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert main(["report", "--list", "--store", store.path]) == 0
    assert run in capsys.readouterr().out
    assert main(["report", "no-such-run", "--store", store.path]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err


def test_quickstart_report_shows_the_card_of_its_judge(quickstart_run) -> None:
    store, run, report = quickstart_run
    html = report.read_text(encoding="utf-8")
    audits = [r for r in store.runs() if r["kind"] == "judge-audit"]
    assert len(audits) == 1 and audits[0]["finished"] and audits[0]["judge"] == store.run(run)["judge"]
    card = store.get_artifact(audits[0]["id"], "judge_card")
    assert card["items"] == {"pairwise": 20, "correctness": 20, "groundedness": 20}
    assert 'id="judge-verdicts"' in html and f"audited in run <code>{audits[0]['id']}</code>" in html
    for verdict in card["verdicts"]:
        assert verdict["line"].split(":")[0] in html


def test_quickstart_report_key_columns_visible_on_a_phone(quickstart_run, open_report) -> None:
    """At 390 px the page is no wider than the screen (wide tables scroll inside their own box) and
    the columns a reader needs first are on screen: the summary's figure, interval and counts; the
    item browser's id, agent, scores and status."""
    _, _, report = quickstart_run
    p = open_report(report).page
    p.set_viewport_size({"width": 390, "height": 800})
    p.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert p.evaluate("document.documentElement.scrollWidth") <= 390
    for table, columns in (("#headline", ["measure", "result", "95 % interval", "scored"]),
                           ("#item-table", ["item", "agent", "scores", "status"])):
        heads = {h.inner_text(): h.bounding_box() for h in p.locator(f"{table} th").all()}
        for name in columns:
            box = heads[name]
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390 + 0.5, (table, name, box)
    # a table wider than the screen scrolls in its own box, not the page
    wide = p.evaluate("""[...document.querySelectorAll('table')].filter(t => t.scrollWidth > 390)
        .every(t => { const box = t.closest('.table-wrap') || t;
                      return getComputedStyle(box).overflowX === 'auto' && box.clientWidth <= 390; })""")
    assert wide
    nav = [a.bounding_box()["height"] for a in p.locator("nav a").all()]
    assert max(nav) < 1.6 * min(nav)  # no link broken over two lines
