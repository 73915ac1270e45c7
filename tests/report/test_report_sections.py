"""The report's capability sections come from what the run's evaluators declared (their
``Declaration.sections``, stored with the run), in the order the run stored them: the package's own
evaluators declare theirs and draw exactly what a run stored before sections were declared draws
from its artifacts; an evaluator the package has never seen gets a titled section of its scores."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from markupsafe import Markup
from pydantic import BaseModel

from langrag_eval import Evaluator, Sample
from langrag_eval.errors import ConfigError
from langrag_eval.grading import VragGrade, VragGrader, summarize
from langrag_eval.grammar.grading import ReferenceGrader
from langrag_eval.report import SECTIONS, build_report
from langrag_eval.report import sections as report_sections
from langrag_eval.results import Declaration, ScoreScale, Section
from langrag_eval.run import evaluate
from langrag_eval.run.batch import declare_in_run
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import Thelma
from langrag_eval.tournament.pairwise import PairwiseEvaluator

OWN = ("vrag", "thelma", "windows", "tournament", "grammar")


def _artifacts(store: RunStore, run: str) -> None:
    """What the package's capabilities store for the report, one of each."""
    grades = [VragGrade(score=5, accepted=True, reason="right"), VragGrade(score=2, accepted=False, reason="wrong")]
    store.put_artifact(run, "vrag", summarize(grades, ids=["a", "b"], subjects=["x", "y"]))
    store.put_artifact(run, "thelma", {
        "metrics": {"gr": {"name": "groundedness", "mean": 0.5, "std": 0.1, "min": 0.4, "max": 0.6, "n": 2,
                           "unscored": 0}},
        "windows": [{"window": "d1", "baseline": True, "dropped": [],
                     "metrics": {"gr": {"n": 3, "mean": 0.9, "low": 0.8, "high": 1.0}}},
                    {"window": "d2", "baseline": False, "dropped": ["gr"],
                     "metrics": {"gr": {"n": 3, "mean": 0.3, "low": 0.1, "high": 0.5}}}],
        "samples": [{"id": "t1", "trace_id": "t1", "window": "d2", "scores": {"gr": 0.0}}]})
    store.put_artifact(run, "tournament", {
        "agents": ["p", "q"], "games": {"played": 2, "scheduled": 2},
        "ranking": [{"rank": 1, "agent": "p", "bt_rating": 1010.0, "wins": 2, "ties": 0, "losses": 0},
                    {"rank": 2, "agent": "q", "bt_rating": 990.0, "wins": 0, "ties": 0, "losses": 2}]})
    store.put_artifact(run, "grammar", {"agents": {"p": {"items": 4, "overall": {"accuracy": 0.5}}}})


def _own_evaluators() -> dict[str, object]:
    judge = Judge(ScriptedModel(["unused"]))
    return {"vrag": VragGrader(judge), "thelma": Thelma(judge), "tournament": PairwiseEvaluator(judge),
            "grammar": ReferenceGrader(judge)}


def _nav(html: str) -> list[tuple[str, str]]:
    nav = re.search(r"<nav>(.*?)</nav>", html, re.S)
    assert nav is not None
    return re.findall(r'<a href="#([^"]+)">([^<]*)</a>', nav.group(1))


def _section(html: str, anchor: str) -> str:
    found = re.search(rf'<section id="{re.escape(anchor)}">.*?</section>', html, re.S)
    assert found is not None, anchor
    return found.group(0)


def _run(store: RunStore, name: str, declared: list[str]) -> str:
    run = store.open_run("demo", {}, name)
    _artifacts(store, run)
    evaluators = _own_evaluators()
    for capability in declared:
        declare_in_run(evaluators[capability], store, run)
    return run


def test_the_package_order_is_unchanged_and_declared_sections_draw_what_stored_ones_did(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    before = build_report(store, _run(store, "before-declarations", []))
    declared = build_report(store, _run(store, "declared", ["vrag", "thelma", "tournament", "grammar"]))
    expected = [("summary", "summary"), ("vrag", "vRAG-Eval"), ("thelma", "THELMA"), ("windows", "monitoring"),
                ("tournament", "tournament"), ("grammar", "GRAMMAR"), ("judge", "judge card"),
                ("settings", "settings")]
    assert _nav(before) == _nav(declared) == expected
    assert [a for a, _ in expected] == [s for s in SECTIONS if s in dict(expected)]
    for anchor in OWN:   # each section drawn the same from the declaration as from the stored artifact
        assert _section(declared, anchor) == _section(before, anchor)
    assert "groundedness" in _section(declared, "thelma") and "d2 (gr)" in _section(declared, "windows")


def test_declared_sections_come_in_the_order_the_run_stored_them(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    html = build_report(store, _run(store, "reordered", ["grammar", "tournament", "vrag", "thelma"]))
    assert [a for a, _ in _nav(html)] == ["summary", "grammar", "tournament", "vrag", "thelma", "windows",
                                          "judge", "settings"]
    assert html.index('<section id="grammar">') < html.index('<section id="tournament">') \
        < html.index('<section id="vrag">') < html.index('<section id="judge">')


def test_a_declared_section_with_nothing_to_show_is_left_out(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("demo", {}, "bare")
    for evaluator in _own_evaluators().values():
        declare_in_run(evaluator, store, run)    # declared, but no capability stored its summary
    html = build_report(store, run)
    assert [a for a, _ in _nav(html)] == ["summary", "judge", "settings"]
    assert not any(f'id="{a}"' in html for a in OWN)


class Length(BaseModel):
    words: int


@dataclass
class Words(Evaluator[Sample, Length]):
    """An evaluator the package has never seen, declaring a section under a title with markup in it."""

    task = "mine/words"
    result_type = Length
    description = "Words in the answer"
    declaration = Declaration({"words": ScoreScale(0, 100, higher_is_better=False)},
                              sections=(Section("Length <b>in words</b>"),))

    async def aevaluate(self, sample: Sample) -> Length:
        if sample.answer == "BOOM":
            raise ValueError("no words here")
        return Length(words=len(sample.answer.split()))


def test_an_evaluator_of_its_own_gets_a_titled_section_of_its_scores(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("demo", {}, "own")
    samples = [Sample(id=f"s{i}", question="Q?", answer=a) for i, a in enumerate(["one two", "one two three four", "BOOM"])]
    evaluate(samples, {"words": Words()}, store=store, run_id=run)
    html = build_report(store, run)
    assert ("evaluator-mine-words", "Length &lt;b&gt;in words&lt;/b&gt;") in _nav(html)
    section = _section(html, "evaluator-mine-words")
    assert "<h2>Length &lt;b&gt;in words&lt;/b&gt;</h2>" in section and "<b>" not in section
    assert "Words in the answer" in section and "2 of 3 item(s) scored (unscored: evaluator_error 1)" in section
    assert re.search(r'<td><bdi>words</bdi></td><td>0\.\.100 \(lower is better\)</td>\s*<td class="num">2 of 3</td>'
                     r'<td class="num">3</td>', section), section
    # its order among the others: after the answer, before the items
    anchors = [a for a, _ in _nav(html)]
    assert anchors.index("summary") < anchors.index("evaluator-mine-words") < anchors.index("unscored")


def test_a_renderer_registered_for_a_kind_draws_it_or_leaves_it_out(tmp_path, monkeypatch) -> None:
    seen = []

    def counts(view: report_sections.SectionView) -> str | None:
        seen.append((view.task, view.anchor, view.declaration.names()))
        words = view.summary.scores["words"]
        return None if words.n == 0 else view.heading + Markup('<p class="mine">{:g} words at most</p>').format(words.max)

    monkeypatch.setitem(report_sections._KINDS, "mine/counts", report_sections._Kind(counts, None, None))
    monkeypatch.setattr(Words, "declaration", Words.declaration._replace(sections=(Section("Counts", "mine/counts"),)))
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("demo", {}, "registered")
    evaluate([Sample(id="s", question="Q?", answer="one two three")], {"words": Words()}, store=store, run_id=run)
    html = build_report(store, run)
    assert '<section id="evaluator-mine-words">\n<h2>Counts</h2><p class="mine">3 words at most</p></section>' in html
    assert seen == [("mine/words", "evaluator-mine-words", ("words",))]
    # the renderer finds nothing to show: no section, no link
    empty = store.open_run("demo", {}, "nothing")
    evaluate([Sample(id="s", question="Q?", answer="BOOM")], {"words": Words()}, store=store, run_id=empty)
    assert "evaluator-mine-words" not in build_report(store, empty)


def test_an_installed_renderer_that_raises_is_named_in_one_line(tmp_path, monkeypatch) -> None:
    def broken(view: report_sections.SectionView) -> str:
        return view.summary.scores["no such score"]

    monkeypatch.setitem(report_sections._KINDS, "mine/broken",
                        report_sections._Kind(broken, None, None, "mine.report:broken"))
    monkeypatch.setattr(Words, "declaration", Words.declaration._replace(sections=(Section("Broken", "mine/broken"),)))
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("demo", {}, "broken")
    evaluate([Sample(id="s", question="Q?", answer="one")], {"words": Words()}, store=store, run_id=run)
    with pytest.raises(ConfigError, match=r"report section 'mine/broken' \(mine\.report:broken\) failed on "
                                          r"'mine/words': KeyError: 'no such score'"):
        build_report(store, run)


def test_the_headline_rows_come_from_each_kind_in_the_order_of_the_sections(tmp_path) -> None:
    from langrag_eval.report.headline import headline

    store = RunStore(tmp_path / "runs.sqlite")
    run = _run(store, "reordered", ["grammar", "tournament", "vrag", "thelma"])
    links = [r["link"] for r in headline(store.artifacts(run))]
    assert links == ["#grammar", "#tournament", "#vrag", "#thelma", "#windows"]
    before = _run(store, "before-declarations", [])
    assert [r["link"] for r in headline(store.artifacts(before))] == \
        ["#vrag", "#thelma", "#windows", "#tournament", "#grammar"]


def test_a_kind_registered_from_outside_gives_its_own_headline_row(tmp_path, monkeypatch) -> None:
    from langrag_eval.report.headline import row

    def counts(view: report_sections.SectionView) -> str:
        return view.heading + Markup("<p>counted</p>")

    def rows(artifacts) -> list[dict]:
        words = artifacts.get("declared/mine/words") or {}
        return [row("Counts", "words declared", str(len(words.get("scores") or {})), None, None, 1, 1, 0, None,
                    link="#evaluator-mine-words")]

    monkeypatch.setitem(report_sections._KINDS, "mine/counts",
                        report_sections._Kind(counts, None, None, headline=rows))
    monkeypatch.setattr(Words, "declaration", Words.declaration._replace(sections=(Section("Counts", "mine/counts"),)))
    store = RunStore(tmp_path / "runs.sqlite")
    run = store.open_run("demo", {}, "headline")
    evaluate([Sample(id="s", question="Q?", answer="one two")], {"words": Words()}, store=store, run_id=run)
    html = build_report(store, run)
    assert "words declared" in html and 'href="#evaluator-mine-words"' in html


def test_a_reports_thelma_intervals_are_bootstrapped_once_and_follow_the_scores(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The THELMA section and the headline both show each metric's interval: the bootstrap runs once
    per metric for the report, and scores that differ get their own interval, never a remembered one."""
    from langrag_eval.report import headline
    from langrag_eval.stats import intervals

    calls: list[int] = []
    bootstrap = intervals.bootstrap_values
    monkeypatch.setattr(intervals, "bootstrap_values", lambda v, **k: calls.append(len(v)) or bootstrap(v, **k))
    store = RunStore(tmp_path / "runs.sqlite")
    scores = [round(0.37 * i % 1, 3) for i in range(40)]
    mean = sum(scores) / len(scores)
    thelma = {"metrics": {"gr": {"name": "groundedness", "mean": mean, "std": 0.3, "n": 40, "unscored": 0},
                          "sp1": {"name": "source precision", "mean": 1 - mean, "std": 0.3, "n": 40, "unscored": 0}},
              "samples": [{"id": f"s{i}", "scores": {"gr": v, "sp1": 1 - v}} for i, v in enumerate(scores)]}
    run = store.open_run("demo", {}, "many")
    store.put_artifact(run, "thelma", thelma)
    declare_in_run(Thelma(Judge(ScriptedModel(["unused"]))), store, run)
    html = build_report(store, run)
    assert calls == [40, 40] and "THELMA" in html  # one bootstrap per metric, not one per drawing
    shifted = {**thelma, "samples": [{"id": r["id"], "scores": {"gr": r["scores"]["gr"] / 2, "sp1": r["scores"]["sp1"]}}
                                     for r in thelma["samples"]]}
    again = headline.thelma_intervals(shifted)
    assert len(calls) == 3 and again["gr"] != headline.thelma_intervals(thelma)["gr"]
    assert again["sp1"] == headline.thelma_intervals(thelma)["sp1"] and len(calls) == 3
