"""Comparisons of runs made by the package's own commands and batch APIs: grade files whose rows are
renumbered and reordered still pair by content; THELMA and GRAMMAR runs compare per metric; runs
stored before the item index pair by id and say so; nothing unscored or unpaired goes unlisted."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from compare_helpers import put_grade_run
from scipy import stats as sps

from langrag_eval.cli import main
from langrag_eval.compare import compare_runs, load_observations
from langrag_eval.errors import ConfigError
from langrag_eval.grammar import GrammarQuery, ReferenceGrader, evaluate_answers
from langrag_eval.pipelines import AgentAnswer
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel, ThelmaScript
from langrag_eval import Sample
from langrag_eval.thelma import Thelma

JUDGE = {"GOOD": "Score: [[5]], Reason: [[states the label]]",
         "": "Score: [[2]], Reason: [[misses the label]]"}


def _csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "question", "answer", "label", "area"])
        w.writerows(rows)
    return path


def test_grade_runs_pair_by_content_across_renumbered_files(tmp_path, capsys):
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(JUDGE), encoding="utf-8")
    questions = [(f"What is rule {i}?", f"Rule {i} is the {i}th rule.", ["Fraud", "Token"][i % 2]) for i in range(60)]
    main_rows = [[f"m{i}", q, "GOOD answer" if i % 5 else "vague", label, area]
                 for i, (q, label, area) in enumerate(questions)]
    # the branch's file: other ids, reversed order, extra whitespace, one question dropped, one new
    branch_rows = [[f"b{i}", f"  {q} ", "GOOD answer" if i % 5 and i % 3 else "vague", label + "\n", area]
                   for i, (q, label, area) in list(enumerate(questions))[:0:-1]]
    branch_rows.append(["b-new", "A new question?", "GOOD", "New.", "Fraud"])
    branch_rows.append(["b-empty", questions[0][0], "", questions[0][1], "Fraud"])  # unscored: empty answer
    store = tmp_path / "runs.sqlite"
    for name, rows in (("main", main_rows), ("branch", branch_rows)):
        assert main(["grade", str(_csv(tmp_path / f"{name}.csv", rows)), "--judge", f"scripted:{judge}",
                     "--store", str(store), "--run", f"grade-{name}", "--subject-col", "area",
                     "--out", str(tmp_path / f"{name}.jsonl")]) == 0
    capsys.readouterr()
    c = compare_runs(RunStore(store), "grade-main", "grade-branch")
    assert c.pairing["vrag"] == {"by": "content", "pairs": 60, "only_a": 0, "only_b": 1, "repeated": 0,
                                 "metrics_only_a": [], "metrics_only_b": []}
    acc = c.metric("accept_rate")
    # lost: i % 5 != 0 and i % 3 == 0 among i = 1..59 -> 16; q0 is unscored in the branch (empty answer)
    lost = sum(1 for i in range(1, 60) if i % 5 and i % 3 == 0)
    assert (acc.lost, acc.gained, acc.n, acc.unscored_b) == (lost, 0, 59, 1)
    assert c.unscored[0]["id_a"] == "m0" and c.unscored[0]["id_b"] == "b-empty"
    assert "answer empty" in c.unscored[0]["b"]["accept_rate"]
    assert [u["id"] for u in c.unpaired] == ["b-new"]
    assert {f["a"]["id"]: f["b"]["id"] for f in c.flips}["m3"] == "b3"
    assert all(f["a"]["reason"] == "states the label" and f["b"]["reason"] == "misses the label" for f in c.flips)
    assert {s.subject for s in c.subjects} == {"Fraud", "Token"}
    assert main(["compare", "grade-main", "grade-branch", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "1 item(s) in one run only: B:b-new" in out and "m0: accept_rate, grade: B: invalid_input" in out


def test_runs_without_an_item_index_pair_by_id_and_say_so(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    put_grade_run(store, "old", [5, 5, 2, 4], index=False)
    put_grade_run(store, "new", [5, 2, 2, 4])
    c = compare_runs(store, "old", "new")
    assert c.pairing["vrag"]["by"] == "id" and c.metric("accept_rate").lost == 1
    r = main(["gate", "new", "--baseline", "old", "--max-drop", "accept_rate=0.5", "--store",
              str(tmp_path / "runs.sqlite")])
    assert r == 0


def test_repeated_questions_pair_in_order(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    put_grade_run(store, "a", [5, 2], ids=["x1", "x2"])
    put_grade_run(store, "b", [2, 5], ids=["y1", "y2"])
    # both items of each run ask question 0 (same content key)
    from langrag_eval.runtime import put_item_index
    for run, ids in (("a", ["x1", "x2"]), ("b", ["y1", "y2"])):
        put_item_index(store, run, "vrag", [(i, "Same question?", "Same label.", None) for i in ids])
    c = compare_runs(store, "a", "b")
    assert c.pairing["vrag"]["repeated"] == 1 and c.pairing["vrag"]["pairs"] == 2
    assert [(f["a"]["id"], f["b"]["id"], f["direction"]) for f in c.flips] == [("x1", "y1", "lost"),
                                                                               ("x2", "y2", "gained")]


def test_thelma_runs_compare_every_metric_with_wilcoxon(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    samples = [Sample(id=f"s{i}", question=f"Who founded company {i}?", contexts=[f"Ada founded company {i}."],
                            answer=f"Ada founded company {i}.") for i in range(30)]
    for run, grounded in (("thelma-a", 1), ("thelma-b", 0)):
        store.open_run("thelma", {"run": run}, run_id=run)
        script = ThelmaScript(default=1, supported=lambda k, g=grounded: g)
        thelma = Thelma(Judge(script.model(model_id=f"scripted:{run}"), store=store), metrics=("rp", "gr"))
        thelma.evaluate_many(samples, store=store, run_id=run)
    c = compare_runs(store, "thelma-a", "thelma-b")
    assert [m.metric for m in c.metrics] == ["rp", "gr"] and c.pairing["thelma"]["by"] == "content"
    gr, rp = c.metric("gr"), c.metric("rp")
    assert gr.diff == pytest.approx(-1.0) and gr.test == "wilcoxon-normal" and gr.n == 30   # 30 tied ranks
    ref = sps.wilcoxon([-1.0] * 30, zero_method="wilcox", correction=False, method="approx")
    assert gr.p_value == pytest.approx(float(ref.pvalue)) and gr.p_adjusted == pytest.approx(2 * float(ref.pvalue))
    assert rp.diff == 0.0 and rp.p_value == 1.0 and rp.test.startswith("wilcoxon")
    assert c.flips == []                                                # scores, not accept/reject
    falls = [m for m in c.movers if m["metric"] == "gr"]
    assert len(falls) == 10 and {m["change"] for m in falls} == {-1.0}    # the ten largest, listed
    assert not [m for m in c.movers if m["metric"] == "rp"]             # rp did not fall
    from langrag_eval.compare import format_comparison
    from langrag_eval.report import build_report
    assert "largest score falls: s0 gr -1.00" in format_comparison(c)
    html = build_report(store, "thelma-b", baseline="thelma-a")
    assert html.count("<tr>", html.index('id="comparison-movers"')) >= 11


def test_grammar_runs_compare_correctness_of_an_agent(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    queries = [GrammarQuery(id=f"t1:{i}/short-1", logic_id=f"t1:{i}", template_id="t1", text_id="short-1",
                            style="short" if i % 2 else "long", question=f"Where is office {i}?",
                            answer=f"City{i}", sql="SELECT 1", params={}) for i in range(20)]
    grader = ReferenceGrader(Judge(ScriptedModel(lambda p: "Judgement: [[Correct]]" if "<response>\nCity"
                                                 in p else "Judgement: [[Incorrect]]"), store=store))
    for run, good in (("g-a", range(20)), ("g-b", range(10))):
        store.open_run("grammar", {"run": run}, run_id=run)
        answers = [AgentAnswer(id=q.id, question=q.question, agent="rag" if run == "g-a" else "rag-v2",
                               answer=f"City{i}" if i in good else "Unknown") for i, q in enumerate(queries)]
        answers += [AgentAnswer(id=q.id, question=q.question, agent="other", answer="x") for q in queries[:2]] \
            if run == "g-b" else []
        evaluate_answers(queries, answers, grader, store=store, run_id=run)
    with pytest.raises(ConfigError, match="name one with --agent"):
        load_observations(store, "g-b")
    assert [o.id for o in load_observations(store, "g-b", agent="rag-v2")["grammar"]][:2] == [
        "t1:0/short-1", "t1:1/short-1"]                                  # the agent's prefix is not part of the id
    c = compare_runs(store, "g-a", "g-b", agent="rag", agent_b="rag-v2")
    m = c.metric("correct")
    assert (m.lost, m.gained, m.n, m.test) == (10, 0, 20, "mcnemar-exact")
    assert c.pairing["grammar"]["by"] == "content"
    assert {s.subject for s in c.subjects} == {"short", "long"}
    assert all(f["metric"] == "correct" and "Incorrect" in f["b"]["reason"] for f in c.flips)
    assert main(["gate", "g-b", "--baseline", "g-a", "--agent", "rag", "--agent-b", "rag-v2", "--max-drop",
                 "correct=0.1", "--store", str(tmp_path / "runs.sqlite")]) == 1
    assert main(["compare", "g-a", "g-b", "--store", str(tmp_path / "runs.sqlite")]) == 2   # which agent?


def test_a_metric_only_one_run_computed_is_named_not_compared(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    samples = [Sample(id=f"s{i}", question=f"Who founded company {i}?", contexts=[f"Ada founded company {i}."],
                            answer=f"Ada founded company {i}.") for i in range(5)]
    for run, metrics in (("t-a", ("rp", "gr")), ("t-b", ("gr", "rqc"))):
        store.open_run("thelma", {"run": run}, run_id=run)
        thelma = Thelma(Judge(ThelmaScript(default=1).model(), store=store), metrics=metrics)
        thelma.evaluate_many(samples, store=store, run_id=run)
    c = compare_runs(store, "t-a", "t-b")
    assert [m.metric for m in c.metrics] == ["gr"] and c.unscored == []
    assert c.pairing["thelma"]["metrics_only_a"] == ["rp"] and c.pairing["thelma"]["metrics_only_b"] == ["rqc"]
