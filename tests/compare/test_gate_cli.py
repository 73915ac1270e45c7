"""``langrag-eval gate`` and ``compare`` as CI runs them: exit codes 0/1/2, the JUnit XML parsed back,
the one-screen summary; and ``assert_no_regression`` for test suites."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from compare_helpers import put_grade_run

from langrag_eval.cli import main
from langrag_eval.errors import ConfigError
from langrag_eval.runtime import RunStore
from langrag_eval.testing import assert_no_regression

N = 400


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    base = [5 if i % 4 else 2 for i in range(N)]                 # 75 % accepted
    dropped = [2 if (i % 4 and i < 160) else s for i, s in enumerate(base)]  # 120 of 300 lost: -30 points
    dropped = [s if i % 10 else 2 for i, s in enumerate(dropped)]
    same = list(base)
    put_grade_run(store, "grade-main", base, subjects=["Fraud" if i % 2 else "Token" for i in range(N)])
    put_grade_run(store, "grade-branch-bad", dropped, reason="branch judge: grade {s}")
    put_grade_run(store, "grade-branch-same", same)
    store.close()
    return str(path)


def _junit(path):
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite


def test_gate_passes_with_exit_0_and_a_passing_junit(store_path, tmp_path, capsys):
    junit = tmp_path / "ci" / "gate.xml"
    code = main(["gate", "grade-branch-same", "--baseline", "grade-main", "--max-drop", "accept_rate=0.02",
                 "--max-drop", "grade=0.1", "--store", store_path, "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 0
    assert "gate PASSED (exit 0)" in out and "PASS" in out and "accept_rate" in out
    assert len(out.splitlines()) <= 25                                  # one screen
    suite = _junit(junit)
    assert suite.get("tests") == "2" and suite.get("failures") == "0" and suite.get("errors") == "0"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["accept_rate drops by at most 0.02", "grade drops by at most 0.1"]
    assert all(c.find("failure") is None for c in cases)
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["run"] == "grade-branch-same" and props["baseline"] == "grade-main"


def test_gate_fails_with_exit_1_and_a_junit_failure(store_path, tmp_path, capsys):
    junit = tmp_path / "gate.xml"
    code = main(["gate", "grade-branch-bad", "--baseline", "grade-main", "--max-drop", "ACCEPT_RATE=0.02",
                 "--max-drop", "grade=5", "--store", store_path, "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 1
    assert "gate FAILED (exit 1)" in out and "FAIL" in out and "item(s) lost" in out
    assert "branch judge: grade 2" in out                               # the reasons of a lost item
    suite = _junit(junit)
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    acc, grade = suite.findall("testcase")
    failure = acc.find("failure")
    assert failure is not None and "dropped by more than" in failure.get("message")
    assert grade.find("failure") is None                                # 5 grade points allowed


@pytest.mark.parametrize("argv, message", [
    (["--max-drop", "accept_rate"], "expected METRIC=DROP"),
    (["--max-drop", "accept_rate=lots"], "is not a number"),
    (["--max-drop", "accept_rate=-0.1"], "must be a number >= 0"),
    (["--max-drop", "precision=0.1"], "unknown metric"),
    (["--max-drop", "gr=0.1"], "neither run has it"),
    ([], "give at least one --max-drop"),
    (["--max-drop", "accept_rate=0.02", "--confidence", "1.5"], "--confidence"),
])
def test_gate_bad_input_exits_2_with_one_line(store_path, tmp_path, capsys, argv, message):
    junit = tmp_path / "gate.xml"
    code = main(["gate", "grade-branch-same", "--baseline", "grade-main", "--store", store_path,
                 "--junit", str(junit), *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    suite = _junit(junit)                                               # CI still gets a report
    assert suite.get("errors") == "1" and message in suite.find("testcase/error").get("message")


def test_gate_unknown_run_exits_2(store_path, capsys):
    code = main(["gate", "grade-nope", "--baseline", "grade-main", "--max-drop", "accept_rate=0.02",
                 "--store", store_path])
    assert code == 2 and "no run 'grade-nope'" in capsys.readouterr().err


def test_gate_without_any_item_scored_in_both_runs_is_undecided(tmp_path, capsys):
    store = RunStore(tmp_path / "runs.sqlite")
    put_grade_run(store, "a", [5, 4, 2])
    put_grade_run(store, "b", [None, None, None])
    store.close()
    junit = tmp_path / "gate.xml"
    code = main(["gate", "b", "--baseline", "a", "--max-drop", "accept_rate=0.02", "--store",
                 str(tmp_path / "runs.sqlite"), "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 2 and "UNDECIDED" in out and "no item scored in both runs" in out
    assert "up to 0 in the baseline, 3 in the run, 3 more in the run" in out
    assert _junit(junit).find("testcase/error").get("type") == "undecided"


def test_compare_prints_the_table_and_writes_every_flip_to_json(store_path, tmp_path, capsys):
    out_json = tmp_path / "cmp.json"
    code = main(["compare", "grade-main", "grade-branch-bad", "--store", store_path, "--json", str(out_json)])
    out = capsys.readouterr().out
    assert code == 0
    assert "400 items paired by content" in out and "Holm" in out and "mcnemar-chi2" in out
    assert "wilcoxon-normal" in out and "flipped:" in out and "Fraud: accept_rate" in out
    data = json.loads(out_json.read_text(encoding="utf-8"))
    acc = next(m for m in data["metrics"] if m["metric"] == "accept_rate")
    lost = [f for f in data["flips"] if f["direction"] == "lost" and f["metric"] == "accept_rate"]
    assert len(lost) == acc["lost"] > 10                               # all of them, not the first ten
    assert lost[0]["a"]["reason"] == "judge says 5" and lost[0]["b"]["reason"] == "branch judge: grade 2"
    assert data["correction"] == "holm"
    assert {s["subject"] for s in data["subjects"]} == {"Fraud", "Token"}


def test_assert_no_regression(store_path):
    store = RunStore(store_path)
    result = assert_no_regression("grade-branch-same", "grade-main", {"accept_rate": 0.02}, store=store)
    assert result.exit_code == 0
    with pytest.raises(AssertionError, match="gate FAILED"):
        assert_no_regression("grade-branch-bad", "grade-main", ["accept_rate=0.02"], store=store_path)


def test_answers_that_become_ungradable_cannot_sneak_past_the_gate(tmp_path, capsys):
    """A branch whose app returns empty answers for 80 of 400 questions: they are Unscored
    (invalid input), left out of the accept rate, which holds. The gate warns without being asked,
    and fails on --max-drop scored_rate=0."""
    store = RunStore(tmp_path / "runs.sqlite")
    base = [5 if i % 4 else 2 for i in range(N)]
    put_grade_run(store, "main", base)
    put_grade_run(store, "branch", [None if i % 5 == 0 else s for i, s in enumerate(base)])
    store.close()
    argv = ["gate", "branch", "--baseline", "main", "--store", str(tmp_path / "runs.sqlite"),
            "--max-drop", "accept_rate=0.02"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "WARNING: the run has more unscored items than the baseline (scored_rate -20.0 pts" in out
    assert "up to 0 in the baseline, 80 in the run" in out
    assert main(argv + ["--max-drop", "scored_rate=0"]) == 1
    assert "FAIL      scored_rate" in capsys.readouterr().out


def test_an_installed_metrics_namespaced_id_is_a_gate_metric() -> None:
    from langrag_eval.compare.gate import parse_max_drop
    assert parse_max_drop(["MyPkg/CC=0.1", "gr=0.05", "pkg_a/x.y-z=0"]) == {"mypkg/cc": 0.1, "gr": 0.05,
                                                                          "pkg_a/x.y-z": 0.0}
    for bad in ("a/b/c=0.1", "/cc=0.1", "mypkg/=0.1", "my pkg/cc=0.1", "../cc=0.1", "cc;rm=0.1"):
        with pytest.raises(ConfigError, match="a metric is a score name"):
            parse_max_drop([bad])
