"""The paper's Table 2, row by row: each metric pattern names its component; rows do not fire on the
opposite pattern, on scores in the neutral band, or on unscored metrics; thresholds are the user's."""

from __future__ import annotations

import pytest

from langrag_eval.thelma import RULES, Thresholds, diagnose, diagnose_dataset

LOW, HIGH = 0.2, 0.9

# (row, scores that should fire exactly that row, component, the opposite pattern that must not fire)
TABLE_2 = [
    ("SD-low RP-high", {"sd": LOW, "rp": HIGH}, "prompt or generator", {"sd": HIGH, "rp": HIGH}),
    ("SQC-low RQC-low", {"sqc": LOW, "rqc": LOW}, "retriever or source corpus", {"sqc": LOW, "rqc": 0.6}),
    ("SP-low SQC-high", {"sp1": LOW, "sqc": HIGH}, "retriever", {"sp1": HIGH, "sqc": HIGH}),
    ("SP-low SQC-high", {"sp2": LOW, "sqc": HIGH}, "retriever", {"sp2": LOW, "sqc": 0.6}),
    ("RQC-low SQC-high", {"rqc": LOW, "sqc": HIGH}, "prompt or generator", {"rqc": HIGH, "sqc": HIGH}),
    ("RP-low SP1-high", {"rp": LOW, "sp1": HIGH}, "prompt or source chunking", {"rp": LOW, "sp1": LOW}),
    ("SQC-low GR-low RQC-high", {"sqc": LOW, "rqc": HIGH, "gr": LOW}, "prompt",
     {"sqc": LOW, "rqc": HIGH, "gr": HIGH}),
]


@pytest.mark.parametrize("row,scores,component,opposite", TABLE_2, ids=[r[0] + f"#{i}" for i, r in enumerate(TABLE_2)])
def test_table_2_row(row, scores, component, opposite):
    findings = diagnose(scores)
    assert [(f.rule, f.component) for f in findings] == [(row, component)]
    assert set(findings[0].evidence) == set(scores)
    assert row not in [f.rule for f in diagnose(opposite)]


def test_every_row_is_tested():
    assert {r.name for r in RULES} == {row for row, *_ in TABLE_2}
    assert len(RULES) == 6


def test_unscored_metric_never_fires_a_rule():
    assert diagnose({"sqc": LOW, "rqc": None}) == []
    assert diagnose({"sqc": LOW}) == []


def test_thresholds_are_the_users():
    scores = {"sqc": 0.6, "rqc": 0.6}
    assert diagnose(scores) == []                                   # default low is 0.5
    assert diagnose(scores, Thresholds(default_low=0.7, default_high=0.8))[0].component == (
        "retriever or source corpus")
    strict_gr = Thresholds(low={"gr": 0.95}, high={"gr": 0.95})
    assert [f.rule for f in diagnose({"sqc": 0.3, "rqc": 0.9, "gr": 0.9}, strict_gr)] == [
        "SQC-low GR-low RQC-high"]
    with pytest.raises(ValueError):
        Thresholds(default_low=0.8, default_high=0.6)


def test_dataset_diagnosis_on_means_and_by_sample():
    samples = [{"sqc": 0.0, "rqc": 0.0, "sp1": 1.0}, {"sqc": 0.2, "rqc": 0.1, "sp1": 1.0},
               {"sqc": 1.0, "rqc": 1.0, "sp1": 0.0}, {"sqc": 0.3, "rqc": None, "sp1": None}]
    d = diagnose_dataset(samples)
    assert [f["rule"] for f in d["on_means"]] == ["SQC-low RQC-low"]   # means: sqc .375, rqc .367
    by_rule = {f["rule"]: f for f in d["by_sample"]}
    assert by_rule["SQC-low RQC-low"]["samples"] == 2 and by_rule["SQC-low RQC-low"]["share"] == 0.5
    assert by_rule["SP-low SQC-high"]["samples"] == 1
    assert d["samples"] == 4
    assert diagnose_dataset([])["by_sample"] == []
