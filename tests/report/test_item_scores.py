"""The item browser reads every capability's typed scores the same way: a run holding vRAG-Eval and
THELMA judgments of the same items, and a run with a THELMA metric registered from outside the
package beside an evaluator the package has never seen, show each item's scores by name (value,
scale, pass call, reason), and an Unscored score with its cause, in headless Chromium, with no
knowledge of either capability in the report. The runs are made by the run layer
(:func:`langrag_eval.run.evaluate`) with scripted judges, as a user's would be."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from langrag_eval import Sample
from langrag_eval.evaluator import Evaluator
from langrag_eval.grading import VragGrader
from langrag_eval.report import build_report, write_report
from langrag_eval.report.items import browser_items, put_item_contents
from langrag_eval.results import ScoreScale, Unscored
from langrag_eval.run import evaluate
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import Metric, Thelma, macro_average, register_metric, unregister_metric

from tests.thelma.test_add_a_metric import PROMPT  # the outside metric's prompt file, one text

SAMPLES = [Sample(id=f"s{i}", question=f"When was person {i} born?", contexts=[f"Person {i} was born in 18{i:02d}."],
                  answer="" if i == 5 else f"Person {i} was born in 18{i:02d}.", reference=f"In 18{i:02d}.")
           for i in range(8)]


def vrag_reply(prompt: str) -> str:
    if "person 3 born" in prompt:
        return "I would rather not say."                        # no score, twice: unparseable
    if "person 1 born" in prompt:
        return "Score: [[2]], Reason: [[misses the year]]"
    return "Score: [[5]], Reason: [[states the year]]"


def thelma_reply(prompt: str) -> str:
    if "<concise_statement>" in prompt:                          # person 2's answer is padded
        return "<output>0</output>" if "person 2" in prompt.lower() else "<output>1</output>"
    if "<passage>" in prompt:
        return "<output>\n- a claim\n</output>"
    if "<message>" in prompt:
        return "<output>\n- a question\n</output>"
    return "<output>1</output>"


async def concision(s):
    if (problem := s.response_problem(needs_query=True)) is not None:
        return problem
    claims = await s.aclaims()
    if isinstance(claims, Unscored):
        return claims
    verdicts = await s.matcher.acheck(claims, one="match_concise", query=s.query)
    return macro_average(verdicts, metric="cc", components=claims, empty="no claims: concision undefined")


class Words(BaseModel):
    n: int


class WordCount(Evaluator[Sample, Words]):
    """An evaluator the package has never seen: the answer's length in words, lower is better."""

    task, result_type = "words", Words

    async def aevaluate(self, sample: Sample) -> Words | Unscored:
        if not sample.answer:
            return Unscored(reason="no answer to count", cause="invalid_input")
        return Words(n=len(sample.answer.split()))

    def index_item(self, sample: Sample) -> tuple[str | None, str | None, str | None]:
        return sample.question, sample.reference, None

    def score_names(self) -> tuple[str, ...]:
        return ("words",)

    def score_scale(self, name: str) -> ScoreScale:
        return ScoreScale(0, 100, higher_is_better=False)

    def result_scores(self, result: Words) -> list:
        return [self.score_scale("words").score("words", min(result.n, 100), reason=f"{result.n} words")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, Path]:
    folder = tmp_path_factory.mktemp("scores")
    store = RunStore(folder / "runs.sqlite")
    store.open_run("grade", {}, run_id="mixed", judge="scripted")
    put_item_contents(store, "mixed", [{"id": s.id, "question": s.question, "answer": s.answer,
                                        "contexts": s.context_texts(), "reference": s.reference} for s in SAMPLES])
    evaluate(SAMPLES, {"vrag": VragGrader(Judge(ScriptedModel(vrag_reply))),
                       "thelma": Thelma(Judge(ScriptedModel(thelma_reply)), metrics=("rp", "gr"))},
             store=store, run_id="mixed")

    (folder / "match_concise.txt").write_text(PROMPT, encoding="utf-8")
    unregister_metric("cc")
    register_metric(Metric("cc", "claim concision", concision, tasks=("decompose_claims", "match_concise"),
                           prompts={"match_concise": folder / "match_concise.txt"}))
    try:
        store.open_run("thelma", {}, run_id="custom", judge="scripted")
        evaluate(SAMPLES, {"thelma": Thelma(Judge(ScriptedModel(thelma_reply)), metrics=("rp", "cc")),
                           "words": WordCount()}, store=store, run_id="custom")
    finally:
        unregister_metric("cc")   # the report reads the stored scores, not the registry
    return store, folder


def _rows(p) -> list[str]:
    rows = p.locator("#item-rows tr.item-row")
    return [rows.nth(i).get_attribute("data-id") for i in range(rows.count())]


def _open(p, item: str) -> dict[str, dict[str, str]]:
    """Open one item's row; its score table as {evaluator/score: {column: text}}."""
    p.fill("#item-search", item)
    p.locator(f"#item-rows tr[data-id='{item}']").click()
    table = p.locator("#item-rows .item-details table.item-scores")
    out = {}
    for i in range(table.locator("tr.score-row").count()):
        r = table.locator("tr.score-row").nth(i)
        out[r.get_attribute("data-score")] = {c: r.locator(f"td.score-{c}").inner_text()
                                              for c in ("name", "value", "scale", "pass", "reason")}
    return out


def test_every_item_carries_its_scores_read_from_the_store(runs) -> None:
    store, _ = runs
    items = {r["id"]: r for r in browser_items(store, "mixed")}
    assert set(items) == {s.id for s in SAMPLES}
    assert [(s["family"], s["name"]) for s in items["s0"]["scores"]] == [
        ("vrag", "accept_rate"), ("vrag", "grade"), ("thelma", "rp"), ("thelma", "gr")]
    assert items["s1"]["status"] == "failed" and items["s0"]["status"] == "passed"
    assert items["s5"]["status"] == "unscored"                    # nothing could be scored
    assert {s["cause"] for s in items["s5"]["scores"]} == {"invalid_input", "undefined"}
    order = [r["id"] for r in browser_items(store, "mixed")]
    assert order.index("s5") < order.index("s1") < order.index("s0")  # worst first


def test_vrag_and_thelma_scores_by_name_in_the_browser(runs, open_report) -> None:
    store, folder = runs
    page = open_report(write_report(store, "mixed", folder / "mixed.html"))
    p = page.page
    assert page.errors == [] and [c for c in page.console if c[0] == "error"] == []
    assert all(url.startswith("file:") for url in page.requests)
    scores = _open(p, "s1")
    assert list(scores) == ["vrag/accept_rate", "vrag/grade", "thelma/rp", "thelma/gr"]
    assert scores["vrag/grade"] == {"name": "grade", "value": "2", "scale": "1–5", "pass": "failed",
                                    "reason": "misses the year"}
    assert scores["vrag/accept_rate"]["scale"] == "0–1 (yes/no)" and scores["vrag/accept_rate"]["value"] == "0"
    assert scores["thelma/rp"]["value"] == "1" and scores["thelma/rp"]["pass"] == "passed"
    assert "1 of 1" in scores["thelma/rp"]["reason"]
    details = p.inner_text("#item-rows .item-details")
    assert "Score: [[2]], Reason: [[misses the year]]" in details    # the judge's whole reply
    # the unparseable item: vRAG's scores unscored with the cause, THELMA's scored
    scores = _open(p, "s3")
    assert scores["vrag/grade"]["value"] == "unscored (unparseable)"
    assert scores["vrag/grade"]["reason"].startswith("unparseable: ") and scores["vrag/grade"]["pass"] == "—"
    assert scores["thelma/rp"]["value"] == "1"
    assert p.locator("#item-rows tr.score-unscored").count() == 2


def test_filters_and_the_score_picker_read_any_score(runs, open_report) -> None:
    store, folder = runs
    p = open_report(write_report(store, "mixed", folder / "filters.html")).page
    p.select_option("#item-filter", "unscored")
    assert set(_rows(p)) == {"s3", "s5"}
    p.select_option("#item-filter", "failed")
    assert _rows(p) == ["s1"]
    p.select_option("#item-filter", "all")
    picker = p.locator("#item-score option")
    assert [picker.nth(i).inner_text() for i in range(picker.count())] == [
        "every score", "accept_rate", "grade", "rp", "gr"]
    p.select_option("#item-score", "vrag/grade")                   # worst first on the grade
    assert _rows(p)[:3] in (["s3", "s5", "s1"], ["s5", "s3", "s1"])
    cells = p.locator("#item-rows tr.item-row td.item-score")
    assert cells.nth(2).inner_text() == "2" and cells.nth(0).inner_text().startswith("unscored (")
    p.select_option("#item-score", "")
    first = p.locator("#item-rows tr[data-id='s0'] td.item-score").inner_text()
    assert first == "accept_rate 1, grade 5, rp 1, gr 1"
    p.fill("#item-search", "misses the year")                      # a score's reason is searched
    assert _rows(p) == ["s1"]


def test_a_metric_registered_from_outside_and_a_new_evaluator_show_with_no_edit(runs, open_report) -> None:
    store, folder = runs
    assert "cc" not in __import__("langrag_eval.thelma", fromlist=["metric_ids"]).metric_ids()
    assert "thelma/cc" in build_report(store, "custom")   # read from the stored scores, not the registry
    page = open_report(write_report(store, "custom", folder / "custom.html"))
    p = page.page
    assert page.errors == []
    picker = p.locator("#item-score option")
    assert [picker.nth(i).inner_text() for i in range(picker.count())] == ["every score", "rp", "cc", "words"]
    p.select_option("#item-filter", "failed")
    assert _rows(p) == ["s2"]                                      # the padded answer fails cc
    assert p.locator("#item-rows tr[data-id='s2'] td").nth(5).inner_text().startswith("claim concision: 0 of 1")
    p.select_option("#item-filter", "all")
    scores = _open(p, "s2")
    assert list(scores) == ["thelma/rp", "thelma/cc", "words/words"]
    assert (scores["thelma/cc"]["value"], scores["thelma/cc"]["scale"], scores["thelma/cc"]["pass"]) == \
        ("0", "0–1", "failed")
    assert scores["words/words"] == {"name": "words", "value": "6", "scale": "0–100, lower is better",
                                     "pass": "—", "reason": "6 words"}
    scores = _open(p, "s5")                                         # no answer: every score unscored
    assert {k: v["value"] for k, v in scores.items()} == {
        "thelma/rp": "unscored (undefined)", "thelma/cc": "unscored (undefined)",
        "words/words": "unscored (invalid_input)"}
    assert "no answer to count" in scores["words/words"]["reason"]
    assert "status-unscored" in p.locator("#item-rows tr[data-id='s5']").get_attribute("class")
