"""The report's item browser, driven in headless Chromium as a user would: every item with its
question, answer, contexts, reference and the judge's reply, worst first; the filters (failed,
unscored, flipped against the baseline, disagreeing with the humans, per agent) and the paging
work; hostile text stays text; 10,000 items open quickly because only one page is drawn."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from langrag_eval.grading import VragGrade, VragGrader, summarize
from langrag_eval.report import build_report, write_report
from langrag_eval.report.items import put_item_contents
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge, RunStore, put_item_index
from langrag_eval.runtime.batch import judgment_payload
from langrag_eval.testing import ScriptedModel

HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)>"
GRADER = VragGrader(Judge(ScriptedModel(["unused"])))


def _grade_run(store: RunStore, run: str, n: int, *, lose: set[int] = frozenset(), unscored: set[int] = frozenset(),
               humans: bool = True) -> list[VragGrade | Unscored]:
    store.open_run("grade", {"run": run, "confidence": False, "examples": [], "prompt": "{{ rubric }} ..."},
                   run_id=run, judge="scripted")
    results: list[VragGrade | Unscored] = []
    for i in range(n):
        if i in unscored:
            r: VragGrade | Unscored = Unscored(reason=f"no score in reply {i}", cause="unparseable", raw=f"reply {i}")
        else:
            score = 2 if i in lose or i % 7 == 0 else 5
            r = VragGrade(score=score, accepted=score >= 4, reason=f"reason {i} {HOSTILE if i == 3 else ''}",
                          raw=f"Score: [[{score}]] reply {i}")
        results.append(r)
        store.put_judgment(run, f"q{i}", "vrag", judgment_payload(r, GRADER.scores), scored=not isinstance(r, Unscored))
    put_item_index(store, run, "vrag", [(f"q{i}", f"Question {i}?", f"Reference {i}.", None) for i in range(n)])
    put_item_contents(store, run, [{
        "id": f"q{i}", "question": f"Question {i}? {HOSTILE if i == 3 else ''}", "answer": f"Answer {i}.",
        "contexts": [f"Context {i}a.", f"Context {i}b."], "reference": f"Reference {i}.",
        "agent": "alpha" if i % 2 else "beta",
        "human": {"score": "grade", "value": 5, "passed": True} if humans and i % 5 == 0 else None}
        for i in range(n)])
    store.put_artifact(run, "vrag", summarize(results, ids=[f"q{i}" for i in range(n)]))
    return results


@pytest.fixture(scope="module")
def browser_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    folder = tmp_path_factory.mktemp("browser")
    store = RunStore(folder / "runs.sqlite")
    _grade_run(store, "main", 120)
    results = _grade_run(store, "branch", 120, lose={1, 2, 4}, unscored={8, 9})
    return write_report(store, "branch", folder / "report.html", baseline="main"), results


def _count(page) -> str:
    return page.inner_text("#item-count")


def test_items_worst_first_with_every_field(browser_report, open_report) -> None:
    path, results = browser_report
    page = open_report(path)
    assert page.errors == [] and [c for c in page.console if c[0] == "error"] == []
    assert all(url.startswith("file:") for url in page.requests)
    p = page.page
    rows = p.locator("#item-rows tr.item-row")
    assert rows.count() == 50
    assert "of 120" in _count(p)
    statuses = [rows.nth(i).get_attribute("class").split("status-")[1] for i in range(rows.count())]
    worst = ["unscored"] * 2 + ["failed"] * sum(1 for r in results if getattr(r, "accepted", True) is False)
    assert statuses[:len(worst)] == worst  # unscored first, then failed, then the rest
    # one row opened: everything about the item is there, and hostile text is text
    p.fill("#item-search", "q3")
    p.locator("#item-rows tr[data-id='q3']").click()
    details = p.inner_text("#item-rows .item-details")
    for text in ("Question 3?", "Answer 3.", "Context 3a.", "Context 3b.", "Reference 3.", "reply 3",
                 "<script>alert('x')</script>"):
        assert text in details
    assert page.dialogs == [] and p.locator("#items img").count() == 0


def test_filters_select_what_they_say(browser_report, open_report) -> None:
    path, results = browser_report
    p = open_report(path).page
    rows = p.locator("#item-rows tr.item-row")
    rejected = sum(1 for r in results if getattr(r, "accepted", None) is False)
    p.select_option("#item-filter", "failed")
    assert f"of {rejected} " in _count(p) and rows.count() == min(50, rejected)
    assert all("status-failed" in rows.nth(i).get_attribute("class") for i in range(rows.count()))
    p.select_option("#item-filter", "unscored")
    assert {rows.nth(i).get_attribute("data-id") for i in range(rows.count())} == {"q8", "q9"}
    p.select_option("#item-filter", "flipped")
    assert {rows.nth(i).get_attribute("data-id") for i in range(rows.count())} == {"q1", "q2", "q4"}
    p.select_option("#item-filter", "disagree")  # humans gave 5 to q0, q5, ...; the judge rejected q0, q35, q70, q105
    disagreeing = {rows.nth(i).get_attribute("data-id") for i in range(rows.count())}
    assert disagreeing == {"q0", "q35", "q70", "q105"}
    p.select_option("#item-filter", "all")
    p.select_option("#item-agent", "alpha")
    assert "of 60 " in _count(p)
    assert all(rows.nth(i).locator("td").nth(1).inner_text() == "alpha" for i in range(rows.count()))
    p.select_option("#item-agent", "")
    p.fill("#item-search", "q11")
    assert rows.count() == 1 and rows.first.get_attribute("data-id") == "q11"  # the id, not q110-q119
    p.fill("#item-search", "")
    p.click("#item-next")
    assert "items 51–100 of 120" in _count(p)
    p.click("#item-next")
    assert "items 101–120" in _count(p) and p.locator("#item-next").is_disabled()


def test_flipped_items_of_the_comparison_link_to_the_browser(browser_report, open_report) -> None:
    path, _ = browser_report
    p = open_report(path).page
    links = p.locator("#comparison-flips a[data-item]")
    assert links.count() == 3
    links.first.click()
    rows = p.locator("#item-rows tr.item-row")
    assert rows.count() == 1 and rows.first.get_attribute("data-id") == links.first.get_attribute("data-item")


def test_ten_thousand_items_open_quickly(tmp_path: Path, open_report) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    start = time.perf_counter()
    _grade_run(store, "big", 10_000)
    path = write_report(store, "big", tmp_path / "big.html")
    built = time.perf_counter() - start
    assert path.stat().st_size < 12_000_000
    start = time.perf_counter()
    page = open_report(path)
    p = page.page
    assert p.locator("#item-rows tr.item-row").count() == 50
    opened = time.perf_counter() - start
    assert "of 10000" in _count(p) and page.errors == []
    p.select_option("#item-filter", "failed")
    assert "of 1429 " in _count(p)  # every seventh item
    assert built < 60 and opened < 15, (built, opened)


def test_report_without_items_has_no_browser(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("demo", {}, judge="scripted")
    html = build_report(store, run)
    assert 'id="items"' not in html and "<script" not in html
