"""The report's comparison section (``report RUN --baseline RUN_A``): the differences with intervals
as an SVG plot, every flipped item with both judges' reasons, escaped like the rest of the report."""

from __future__ import annotations

import re
from pathlib import Path

from langrag_eval.cli import main
from langrag_eval.report import build_report, write_report
from langrag_eval import Unscored
from langrag_eval.grading import VragGrade, VragGrader
from langrag_eval.runtime import Judge, RunStore, put_item_index
from langrag_eval.runtime.batch import judgment_payload
from langrag_eval.testing import ScriptedModel

HOSTILE = "<script>alert('x')</script>"
GRADER = VragGrader(Judge(ScriptedModel(["unused"])))


def _runs(tmp_path: Path) -> tuple[RunStore, Path]:
    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    for run, lose in (("main", set()), ("branch", {1, 2, 5})):
        store.open_run("grade", {"run": run}, run_id=run, judge="scripted")
        for i in range(40):
            if run == "branch" and i == 7:
                store.put_judgment(run, f"q{i}", "vrag", judgment_payload(Unscored(
                    reason="judge reply had no score", cause="unparseable", raw=HOSTILE), GRADER.scores), scored=False)
                continue
            score = 2 if i in lose else 5
            store.put_judgment(run, f"q{i}", "vrag", judgment_payload(VragGrade(
                score=score, accepted=score >= 4, reason=f"{run} says {score} {HOSTILE if i == 1 else ''}"),
                GRADER.scores), scored=True)
        put_item_index(store, run, "vrag", [(f"q{i}", f"Question {i} <img src=x onerror=alert(1)>", "Ref.",
                                             "Fraud" if i % 2 else "Token") for i in range(40)])
    return store, path


def test_comparison_section_shows_intervals_flips_and_unscored(tmp_path: Path, own_scripts_removed) -> None:
    store, _ = _runs(tmp_path)
    html = own_scripts_removed(build_report(store, "branch", baseline="main"))
    assert not re.search(r"<script", html, re.I) and "<img" not in html
    section = html[html.index('<section id="comparison">'):]
    section = section[:section.index("</section>")]
    assert '<a href="#comparison">' in html
    assert section.count("<svg") == 2                                  # rates and grades on their own scales
    assert "mcnemar-exact" in section and "wilcoxon" in section and "Holm" in section
    flips = section[section.index('id="comparison-flips"'):]
    flips = flips[:flips.index("</table>")]
    assert flips.count("<tr>") == 1 + 3                                 # header + three lost items
    assert "main says 5" in flips and "branch says 2" in flips and "&lt;script&gt;" in flips
    assert "(grade 5 → 2)" in flips                                     # what else moved, by score name
    assert "unparseable: judge reply had no score" in section           # the unscored item, with why
    assert "<bdi>Fraud</bdi>: accept_rate" in section  # a subject named by the user, isolated


def test_report_without_baseline_has_no_comparison(tmp_path: Path) -> None:
    store, _ = _runs(tmp_path)
    assert 'id="comparison"' not in build_report(store, "branch")


def test_report_cli_with_baseline(tmp_path: Path, capsys) -> None:
    _, path = _runs(tmp_path)
    out = tmp_path / "r.html"
    assert main(["report", "branch", "--baseline", "main", "--store", str(path), "--out", str(out)]) == 0
    assert 'id="comparison-metrics"' in out.read_text(encoding="utf-8")
    assert main(["report", "branch", "--baseline", "nope", "--store", str(path), "--out", str(out)]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_comparison_section_renders_in_chromium(tmp_path: Path, open_report) -> None:
    store, _ = _runs(tmp_path)
    page = open_report(write_report(store, "branch", tmp_path / "cmp.html", baseline="main"))
    assert page.errors == [] and page.dialogs == [] and all(u.startswith("file:") for u in page.requests)
    assert page.page.locator("section#comparison svg").count() == 2
    text = page.page.inner_text("#comparison-flips")
    assert HOSTILE in text                                              # shown as text, not run


def test_difference_chart_escapes_labels_and_colours_by_the_interval() -> None:
    from langrag_eval.report.svg import difference_chart

    svg = difference_chart(["<b>drop</b>", "rise", "none", "missing"], [-0.08, 0.05, 0.0, None],
                           [-0.12, 0.01, -0.03, None], [-0.04, 0.09, 0.03, None], title="<i>t</i>")
    assert "<b>" not in svg and "<i>" not in svg and "&lt;b&gt;drop" in svg
    assert svg.count('stroke="#c0392b"') == 1 and svg.count('stroke="#2e8b57"') == 1   # below / above zero
    assert svg.count("<circle") == 3                                     # the missing value is left blank
