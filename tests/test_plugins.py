"""One plugin seam, proved with a package the core has never seen: ``mypkg`` is written into
``tmp_path`` with a ``.dist-info`` whose ``entry_points.txt`` declares one THELMA metric
(``langrag_eval.metrics``) and one evaluator (``langrag_eval.evaluators``), and put on the path of a
child process. With no edit to the package, its scores show through ``langrag-eval run``,
``thelma --metrics gr,mypkg/cc``, the report (a titled section each evaluator declares, drawn by the
package's own renderer where it is installed, ``langrag_eval.report_sections``), ``compare`` and
``gate``; the evaluator raising on one
sample gives that sample's ``Unscored`` and the rest scored; the metric's namespaced id is gated
like any score name (``gate --max-drop mypkg/cc=0.1``). Finding the entry points is
``importlib.metadata``'s work, reading the dist-info as pip would have written it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.compare import compare_runs
from langrag_eval.report import build_report
from langrag_eval.runtime import RunStore

REPO = Path(__file__).resolve().parents[1]

EVALUATORS = '''
from dataclasses import dataclass

from pydantic import BaseModel

from langrag_eval import Evaluator, Sample
from langrag_eval.results import Declaration, ScoreScale, Section


class Cited(BaseModel):
    cited: bool


class Counted(BaseModel):
    words: int


@dataclass
class Citations(Evaluator[Sample, Cited]):
    """Does the answer cite a source ([1], [2] ...)?"""
    task = "mypkg/citations"
    result_type = Cited
    description = "Does the answer cite a source?"
    declaration = Declaration({"cited": ScoreScale(0, 1, binary=True)}, sections=(Section("Citations"),))

    async def aevaluate(self, sample):
        if "BOOM" in sample.answer:
            raise ValueError("cannot read this answer")
        return Cited(cited="[" in sample.answer)


@dataclass
class Words(Evaluator[Sample, Counted]):
    """How many words the answer has: its section is drawn by mypkg.report."""
    task = "mypkg/words"
    result_type = Counted
    declaration = Declaration({"words": ScoreScale(0, 1000, higher_is_better=False)},
                              sections=(Section("Answer length <words>", "mypkg/lengths"),))

    async def aevaluate(self, sample):
        return Counted(words=len(sample.answer.split()))
'''

REPORT = '''
from markupsafe import Markup


def lengths(view):
    words = view.summary.scores.get("words")
    if words is None:
        return None
    return view.heading + Markup('<p class="answer-lengths">{:.2f} words on average over {} answers, {:g} at most</p>'
                                 ).format(words.mean, words.n, words.max)
'''

METRICS = '''
from pathlib import Path

from langrag_eval.results import Unscored
from langrag_eval.thelma import Metric, macro_average


async def concision(s):
    if (problem := s.response_problem(needs_query=True)) is not None:
        return problem
    claims = await s.aclaims()
    if isinstance(claims, Unscored):
        return claims
    verdicts = await s.matcher.acheck(claims, one="match_concise", query=s.query)
    return macro_average(verdicts, metric="cc", components=claims, empty="no claims: concision undefined")


CONCISION = Metric("cc", "claim concision", concision, tasks=("decompose_claims", "match_concise"),
                   prompts={"match_concise": Path(__file__).with_name("match_concise.txt")})
'''

PROMPT = """{#
task: thelma/match_concise
paper: our own metric, in the manner of THELMA (Patel et al., 2025) section 4
variables: query, component
output: <output>1</output> if the statement is concise, <output>0</output> if it is padded
#}
Decide whether the statement answers part of the query without padding. Reply with the digit only,
inside <output> and </output>.

<query>
{{ query }}
</query>
<concise_statement>
{{ component }}
</concise_statement>
"""

ENTRY_POINTS = """[langrag_eval.evaluators]
citations = mypkg.evaluators:Citations
words = mypkg.evaluators:Words

[langrag_eval.report_sections]
lengths = mypkg.report:lengths

[langrag_eval.metrics]
cc = mypkg.metrics:CONCISION
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "mypkg").mkdir(parents=True)
    (site / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    (site / "mypkg" / "evaluators.py").write_text(EVALUATORS, encoding="utf-8")
    (site / "mypkg" / "metrics.py").write_text(METRICS, encoding="utf-8")
    (site / "mypkg" / "report.py").write_text(REPORT, encoding="utf-8")
    (site / "mypkg" / "match_concise.txt").write_text(PROMPT, encoding="utf-8")
    info = site / "mypkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mypkg\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    return site


def _cli(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    paths = [str(site), str(REPO), str(REPO / "integrations" / "langchain"), str(REPO / "integrations" / "llamaindex")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.run([sys.executable, "-c", "import sys; from langrag_eval.cli import main; sys.exit(main())", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def _rows(answers: list[str]) -> str:
    return "\n".join(json.dumps({"id": f"q{i}", "question": f"When was person {i} born?", "reference": f"18{i:02d}",
                                 "contexts": [f"Person {i} was born in 18{i:02d}."], "answer": a})
                     for i, a in enumerate(answers)) + "\n"


def test_an_installed_evaluator_and_metric_reach_every_command(site: Path, tmp_path: Path, capsys) -> None:
    store = tmp_path / "runs.sqlite"
    grader = tmp_path / "grader.json"
    grader.write_text(json.dumps({"": "Score: [[4]], Reason: [[Close.]]"}), encoding="utf-8")
    runs = {}
    for name, answers in (("cited", [f"Born in 18{i:02d} [1]." for i in range(8)]),
                          ("uncited", [f"Born in 18{i:02d}." for i in range(8)])):
        data = tmp_path / f"{name}.jsonl"
        data.write_text(_rows(answers), encoding="utf-8")
        done = _cli(site, "run", str(data), "--evaluator", "mypkg/citations", "--evaluator", "vrag",
                    "--judge", f"scripted:{grader}", "--store", str(store))
        assert done.returncode == 0, done.stderr
        assert "mypkg/citations: 8 of 8 item(s) scored" in done.stdout
        assert f"cited                mean {1.0 if name == 'cited' else 0.0:.3f}" in done.stdout
        assert "vrag: 8 of 8 item(s) scored" in done.stdout
        runs[name] = done.stdout.split()[1]

    # the report, compare and gate read the stored run: nothing of mypkg is imported here
    s = RunStore(store)
    html = build_report(s, runs["uncited"])
    assert 'id="scores"' in html and "mypkg/citations" in html and ">cited<" in html
    c = compare_runs(s, runs["cited"], runs["uncited"])
    cited = c.metric("cited")     # beside vRAG's indexed items, the unindexed evaluator stays in
    assert (cited.mean_a, cited.mean_b, cited.n) == (1.0, 0.0, 8)
    assert c.metric("grade").diff == 0.0
    assert main(["compare", runs["cited"], runs["uncited"], "--store", str(store)]) == 0
    assert "cited" in capsys.readouterr().out
    code = main(["gate", runs["uncited"], "--baseline", runs["cited"], "--max-drop", "cited=0.1",
                 "--store", str(store)])
    out = capsys.readouterr().out
    assert code == 1 and "cited" in out and "unknown metric" not in out


def test_an_installed_metric_is_scored_by_thelma(site: Path, tmp_path: Path) -> None:
    data = tmp_path / "traffic.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"s{i}", "query": f"When was person {i} born?",
                                          "sources": [f"Person {i} was born in 18{i:02d}."],
                                          "response": f"Person {i} was born in 18{i:02d}."}) for i in range(4)) + "\n",
                    encoding="utf-8")
    judge = tmp_path / "thelma.json"
    judge.write_text(json.dumps({"<passage>": "<output>\n- a claim\n</output>",
                                 "<message>": "<output>\n- a question\n</output>",
                                 "<concise_statement>": "<output>0</output>", "": "<output>1</output>"}),
                     encoding="utf-8")
    done = _cli(site, "thelma", str(data), "--judge", f"scripted:{judge}", "--store", str(tmp_path / "runs.sqlite"),
                "--embedder", "none", "--metrics", "gr,mypkg/cc", "--out", str(tmp_path / "out.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "claim concision" in done.stdout
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {r["scores"]["mypkg/cc"] for r in records} == {0.0} and {r["scores"]["gr"] for r in records} == {1.0}
    # a metric id that no installed package declares is refused in one line
    missing = _cli(site, "thelma", str(data), "--judge", f"scripted:{judge}", "--embedder", "none",
                   "--store", str(tmp_path / "runs.sqlite"), "--metrics", "gr,otherpkg/cc")
    assert missing.returncode != 0 and "otherpkg/cc" in missing.stderr and "Traceback" not in missing.stderr


def _nav(html: str) -> list[tuple[str, str]]:
    nav = re.search(r"<nav>(.*?)</nav>", html, re.S)
    assert nav is not None
    return re.findall(r'<a href="#([^"]+)">([^<]*)</a>', nav.group(1))


def test_an_installed_evaluator_declares_its_own_report_section(site: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    data = tmp_path / "answers.jsonl"
    data.write_text(_rows(["Born in 1800 [1].", "Born in 1801.", "Born, they say, in 1802 [2]."]), encoding="utf-8")
    unused = tmp_path / "unused.json"   # neither evaluator asks a judge
    unused.write_text(json.dumps(["never asked"]), encoding="utf-8")
    done = _cli(site, "run", str(data), "--evaluator", "mypkg/words", "--evaluator", "mypkg/citations",
                "--judge", f"scripted:{unused}", "--store", str(store))
    assert done.returncode == 0, done.stderr
    run = done.stdout.split()[1]

    # built where mypkg is installed: its own renderer draws the length section, after the answer
    # and in the order the run stored the evaluators' declarations, before the judge and settings
    out = tmp_path / "report.html"
    done = _cli(site, "report", run, "--store", str(store), "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert _nav(html) == [("summary", "summary"), ("scores", "scores"),
                          ("evaluator-mypkg-words", "Answer length &lt;words&gt;"),
                          ("evaluator-mypkg-citations", "Citations"), ("judge", "judge card"),
                          ("settings", "settings")]
    assert ('<section id="evaluator-mypkg-words">\n<h2>Answer length &lt;words&gt;</h2>'
            '<p class="answer-lengths">4.33 words on average over 3 answers, 6 at most</p>') in html
    cited = html.split('<section id="evaluator-mypkg-citations">')[1].split("</section>")[0]
    assert "<h2>Citations</h2>" in cited and "Does the answer cite a source?" in cited
    assert re.search(r"<td><bdi>cited</bdi></td><td>0\.\.1 \(yes/no\)</td>\s*<td class=\"num\">3 of 3</td>"
                     r"<td class=\"num\">0\.667</td>", cited), cited

    # built where mypkg is not installed (this process imports none of it): the same run draws the
    # length section as the generic one, its scores from the stored judgments, and says why
    here = build_report(RunStore(store), run)
    assert _nav(here) == _nav(html)
    words = here.split('<section id="evaluator-mypkg-words">')[1].split("</section>")[0]
    assert "answer-lengths" not in words and "<code><bdi>mypkg/lengths</bdi></code>, which is not installed here" in words
    assert re.search(r"<td><bdi>words</bdi></td><td>0\.\.1000 \(lower is better\)</td>\s*"
                     r"<td class=\"num\">3 of 3</td><td class=\"num\">4\.33</td>", words), words


def test_an_installed_evaluator_raising_on_one_sample_leaves_that_sample_unscored(site: Path, tmp_path: Path) -> None:
    data = tmp_path / "boom.jsonl"
    data.write_text(_rows(["Born in 1800 [1].", "BOOM", "Born in 1802."]), encoding="utf-8")
    unused = tmp_path / "unused.json"   # the evaluator asks no judge
    unused.write_text(json.dumps(["never asked"]), encoding="utf-8")
    done = _cli(site, "run", str(data), "--evaluator", "mypkg/citations", "--judge", f"scripted:{unused}",
                "--store", str(tmp_path / "runs.sqlite"))
    assert done.returncode == 0, done.stderr
    assert "mypkg/citations: 2 of 3 item(s) scored (unscored: evaluator_error 1)" in done.stdout
    s = RunStore(tmp_path / "runs.sqlite")
    [run] = s.runs()
    judged = {j["item"]: j for j in s.judgments(run["id"], "mypkg/citations")}
    assert not judged["q1"]["scored"] and "ValueError: cannot read this answer" in json.dumps(judged["q1"]["result"])
    assert judged["q0"]["scored"] and judged["q2"]["scored"]


def test_an_unknown_evaluator_is_refused_in_one_line(site: Path, tmp_path: Path) -> None:
    data = tmp_path / "one.jsonl"
    data.write_text(_rows(["Born in 1800."]), encoding="utf-8")
    done = _cli(site, "run", str(data), "--evaluator", "otherpkg/citations", "--store", str(tmp_path / "r.sqlite"))
    assert done.returncode != 0 and "otherpkg/citations" in done.stderr and "mypkg/citations" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_installed_metric_reaches_the_report_compare_and_gate(site: Path, tmp_path: Path, capsys) -> None:
    data = tmp_path / "traffic.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"s{i}", "query": f"When was person {i} born?",
                                          "sources": [f"Person {i} was born in 18{i:02d}."],
                                          "response": f"Person {i} was born in 18{i:02d}."}) for i in range(6)) + "\n",
                    encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    runs = {}
    for name, concise in (("concise", "1"), ("padded", "0")):
        judge = tmp_path / f"{name}.json"
        judge.write_text(json.dumps({"<passage>": "<output>\n- a claim\n</output>",
                                     "<message>": "<output>\n- a question\n</output>",
                                     "<concise_statement>": f"<output>{concise}</output>", "": "<output>1</output>"}),
                         encoding="utf-8")
        done = _cli(site, "thelma", str(data), "--judge", f"scripted:{judge}", "--store", str(store),
                    "--embedder", "none", "--metrics", "gr,mypkg/cc", "--out", str(tmp_path / f"{name}.jsonl"))
        assert done.returncode == 0, done.stderr
        [runs[name]] = {r["id"] for r in RunStore(store).runs()} - set(runs.values())   # the run just made
    # read with nothing of mypkg imported in this process: the stored scores carry their scales
    s = RunStore(store)
    assert "mypkg/cc" in build_report(s, runs["padded"])
    cc = compare_runs(s, runs["concise"], runs["padded"]).metric("mypkg/cc")
    assert (cc.mean_a, cc.mean_b, cc.n) == (1.0, 0.0, 6)
    code = main(["gate", runs["padded"], "--baseline", runs["concise"], "--max-drop", "mypkg/cc=0.1",
                 "--store", str(store)])
    captured = capsys.readouterr()
    assert code == 1 and "mypkg/cc" in captured.out and "unknown metric" not in captured.out, captured
