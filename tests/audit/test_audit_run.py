"""The audit as a run: sampling, resuming from the store, failures as data, the card in the report,
and the ``langrag-eval judge audit`` command."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from audit_judges import honest, perfect
from hypothesis import given, settings
from hypothesis import strategies as st

from langrag_eval.audit import ARTIFACT, load_answers, load_pairs, run_audit, stratified_sample
from langrag_eval.cli import main
from langrag_eval.report import build_report
from langrag_eval.runtime import Judge, RetryPolicy, RunStore
from langrag_eval.testing import ScriptedModel


@given(st.lists(st.sampled_from("abcd"), min_size=1, max_size=60), st.integers(min_value=1, max_value=80),
       st.integers(min_value=0, max_value=5))
@settings(max_examples=150, deadline=None)
def test_stratified_sample_keeps_the_label_shares(labels: list[str], max_items: int, seed: int) -> None:
    items = list(enumerate(labels))
    chosen = stratified_sample(items, lambda x: x[1], max_items, seed=seed)
    assert len(chosen) == min(max_items, len(items))
    assert chosen == sorted(chosen) and len(set(chosen)) == len(chosen)
    if max_items < len(items):
        have, total = Counter(lb for _, lb in chosen), Counter(labels)
        for label, count in total.items():
            assert abs(have[label] - max_items * count / len(labels)) < 1 + 1e-9, (label, have, total)


def test_shipped_data_is_as_documented() -> None:
    pairs, answers = load_pairs(), load_answers()
    assert len(pairs) == 150 and len(answers) == 200
    assert Counter(p.majority for p in pairs) == {"b": 71, "a": 63, "tie": 16}
    assert all(p.response1.strip() and p.response2.strip() for p in pairs)
    assert all(a.knowledge for a in answers) and sum(a.correct for a in answers) == 100
    data = Path(__import__("langrag_eval.audit", fromlist=["x"]).__file__).parent / "data"
    assert {"README.md", "LICENSE.pandalm", "LICENSE.halueval"} <= {p.name for p in data.iterdir()}


def test_the_audit_resumes_from_the_store_without_a_model_call(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    first_model = perfect()
    first = run_audit(Judge(first_model, store=store), run_id="audit-1", max_items=12)
    assert first_model.calls > 0
    again = perfect()
    second = run_audit(Judge(again, store=RunStore(tmp_path / "runs.sqlite")),
                               run_id="audit-1", max_items=12)
    assert again.calls == 0
    keep = ("grading.binary_agreement", "pairwise.accuracy", "groundedness.agreement",
            "pairwise.verbosity", "grading.injection", "reliability.latency_p50")
    for key in keep:
        assert first.measure(key).estimate == second.measure(key).estimate, key
    stored = RunStore(tmp_path / "runs.sqlite").get_artifact("audit-1", ARTIFACT)
    assert stored["verdicts"] == [v.model_dump(mode="json") for v in second.verdicts]
    # twelve items cannot show 80 % agreement with confidence, however perfect the judge
    grading = second.verdict("grading")
    assert grading.verdict == "fit with caveats" and "interval" in grading.caveats[0]


def test_failed_calls_are_unscored_by_cause_and_counted(tmp_path: Path) -> None:
    model = ScriptedModel(honest, timeout_rate=0.2, seed=4, latency=0.001)
    judge = Judge(model, retry=RetryPolicy(max_attempts=1, base_delay=0.0))
    card = run_audit(judge, max_items=20, batteries=("correctness", "groundedness"))
    assert card.unscored.get("timeout", 0) > 0
    unscored = card.measure("reliability.unscored").estimate
    assert unscored.value > 0 and unscored.successes == sum(card.unscored.values())
    by_cause = card.measure("reliability.unscored.timeout").estimate
    assert by_cause.successes == card.unscored["timeout"] and by_cause.n == unscored.n
    failed = card.measure("reliability.failed_attempts").estimate
    assert failed.successes == model.failures["timeout"]
    # an unscored item is left out of agreement, never counted as a disagreement
    assert card.measure("grading.binary_agreement").estimate.value == 1.0
    assert card.measure("reliability.latency_p50").estimate.low >= 0.001


def test_latency_and_tokens_are_measured_per_call() -> None:
    model = ScriptedModel(honest, latency=0.02)
    card = run_audit(Judge(model), max_items=8, batteries=("groundedness",))
    p50 = card.measure("reliability.latency_p50").estimate
    assert p50.n == model.calls == 8 and 0.02 <= p50.value < 0.2
    tokens = card.measure("reliability.tokens_per_100").estimate
    assert tokens.low <= tokens.value <= tokens.high and tokens.value > 100


def test_the_report_shows_the_card_of_the_judge_in_use(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    audit_run = "judge-audit-x"
    run_audit(Judge(perfect(), store=store), run_id=audit_run, max_items=6)
    assert store.run(audit_run)["finished"] and store.run(audit_run)["judge"] == "scripted:perfect"
    html = build_report(store, audit_run)
    assert 'id="judge-verdicts"' in html and "grading: FIT" in html
    # another run judged by the same model shows the audit's card, and says where it came from
    other = store.open_run("grade", {"file": "qa.csv"}, "grade-y", judge="scripted:perfect")
    html = build_report(store, other)
    assert "grading: FIT" in html and "audited in run" in html and "judge-audit-x" in html
    stranger = store.open_run("grade", {"file": "qa.csv"}, "grade-z", judge="scripted:other")
    assert "has no audit in the store" in build_report(store, stranger)


def _scripted_file(tmp_path: Path) -> Path:
    path = tmp_path / "replies.json"
    reply = "Both read alike.\n[[C]]\nScore: [[4]], Reason: [[close]]\n<output>1</output>"
    path.write_text(json.dumps([reply]))
    return path


def test_cli_audit_prints_the_card_and_stores_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "runs.sqlite"
    args = ["judge", "audit", "--judge", f"scripted:{_scripted_file(tmp_path)}", "--store", str(store),
            "--max-items", "9", "--json", str(tmp_path / "card.json"), "--report", str(tmp_path / "r.html")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "grading: UNFIT" in out and "pairwise: " in out and "n=9" in out
    card = json.loads((tmp_path / "card.json").read_text())
    assert card["items"] == {"pairwise": 9, "correctness": 9, "groundedness": 9}
    assert 'id="judge"' in (tmp_path / "r.html").read_text()
    assert main(args) == 0   # the same command resumes the same run
    assert "calls" in capsys.readouterr().out
    assert len([r for r in RunStore(store).runs() if r["kind"] == "judge-audit"]) == 1


def test_cli_audit_on_a_users_graded_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "mine.csv"
    rows = ["id,question,answer,label,expert"]
    for i in range(10):
        rows.append(f"q{i},What is {i}?,{i if i % 2 else i + 1},{i},{5 if i % 2 else 1}")
    data.write_text("\n".join(rows) + "\n")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(["Score: [[5]], Reason: [[fine]]"]))
    assert main(["judge", "audit", "--judge", f"scripted:{replies}", "--store", str(tmp_path / "s.sqlite"),
                 "--data", str(data), "--human-col", "expert", "--batteries", "correctness",
                 "--temperature", "0", "--json", str(tmp_path / "c.json")]) == 0
    card = json.loads((tmp_path / "c.json").read_text())
    measures = {m["key"]: m["estimate"] for m in card["measures"]}
    exact = measures["grading.exact_agreement"]
    assert exact["value"] == 0.5 and exact["n"] == 10
    assert measures["grading.binary_agreement"]["value"] == 0.5
    assert "grading.consistency_user" not in measures   # temperature 0: one probe only
    assert "mine.csv" in card["data"]["correctness"]


@pytest.mark.parametrize("extra, message", [
    (["--max-items", "0"], "--max-items must be at least 1"),
    (["--batteries", "pairwise,vibes"], "--batteries"),
    (["--data", "{missing}"], "not found"),
    (["--data", "{nohuman}"], "expert"),
])
def test_cli_audit_bad_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   extra: list[str], message: str) -> None:
    nohuman = tmp_path / "nohuman.csv"
    nohuman.write_text("question,answer,label\nq,a,b\n")
    extra = [e.format(missing=tmp_path / "nope.csv", nohuman=nohuman) for e in extra]
    code = main(["judge", "audit", "--judge", f"scripted:{_scripted_file(tmp_path)}",
                 "--store", str(tmp_path / "s.sqlite"), "--human-col", "expert", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0] and "Traceback" not in err[0]


def test_card_text_from_a_user_is_escaped_in_the_report(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    hostile = "<script>alert(1)</script>"
    model = ScriptedModel(honest, model_id=f"scripted:{hostile}")
    run = store.open_run("judge-audit", {}, "judge-audit-h", judge=model.model_id)
    run_audit(Judge(model, store=store), run_id=run, max_items=4, batteries=("correctness",),
                      answers=load_answers()[:8], data_name=f"{hostile}.csv")
    html = build_report(store, run)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;.csv" in html
