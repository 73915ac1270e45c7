"""How a THELMA result reads, the same in every adapter: the mean of the scored metrics, one comment
per metric, the feedback lines, passing against the thresholds; which prompt files each metric
renders (checked against the prompts the evaluator really loads, in both modes); prompt updates;
a single source handed over alone."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import langrag_eval.thelma.decompose as decompose
import langrag_eval.thelma.match as match
from langrag_eval.errors import ConfigError, PromptError
from langrag_eval.results import Unscored
from langrag_eval.runtime import Judge
from langrag_eval.testing import ThelmaScript
from langrag_eval.thelma import (
    METRIC_NAMES, METRICS, get_metric, MetricScore, Thelma, ThelmaResult, Thresholds, diagnose,
    select_metrics,
)
from langrag_eval.types import Sample

SAMPLE = Sample(question="When was Ada born? What did she write?",
                      contexts=["Ada was born in 1815.", "Ada wrote the first program."],
                      answer="Ada was born in 1815. Ada wrote a program. Ada liked horses.")

verdict_lists = st.lists(st.integers(0, 1), min_size=1, max_size=6)
outcomes = st.one_of(
    verdict_lists.map(lambda v: ("scored", v)),
    st.sampled_from(["undefined", "unparseable", "model_error"]).map(lambda c: ("unscored", c)))


def result_from(drawn: dict[str, tuple[str, object]]) -> ThelmaResult:
    metrics = {}
    for m, (kind, value) in drawn.items():
        if kind == "scored":
            metrics[m] = MetricScore(metric=m, score=sum(value) / len(value), verdicts=value,  # type: ignore[arg-type]
                                     components=[f"c{i}" for i in range(len(value))])  # type: ignore[arg-type]
        else:
            metrics[m] = Unscored(reason="no verdict", cause=value)  # type: ignore[arg-type]
    scores = {m: v.score for m, v in metrics.items() if isinstance(v, MetricScore)}
    return ThelmaResult(metrics=metrics, diagnosis=diagnose(scores))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(METRICS), outcomes, min_size=1))
def test_mean_comment_feedback_and_passing(drawn) -> None:
    r = result_from(drawn)
    scored = {m: sum(v) / len(v) for m, (k, v) in drawn.items() if k == "scored"}  # type: ignore[arg-type]
    assert r.mean() == (pytest.approx(sum(scored.values()) / len(scored)) if scored else None)
    lines = r.feedback().splitlines()
    assert len(lines) == len(drawn) + len(r.diagnosis)
    t = Thresholds()
    for line, (m, (kind, value)) in zip(lines, drawn.items()):
        if kind == "scored":
            what = "repeated" if m == "sd" else "matched"
            assert r.comment(m) == f"{METRIC_NAMES[m]}: {sum(value)} of {len(value)} components {what}"  # type: ignore[arg-type]
            assert line == f"{m}={scored[m]:.3f} ({r.comment(m)})"
            assert r.passes(t, m) is (scored[m] >= 0.5)
        else:
            assert r.comment(m) == f"{value}: no verdict" and line == f"{m}=unscored ({r.comment(m)})"
            assert r.passes(t, m) is None
    expected = None if not scored else (not r.diagnosis and all(s >= 0.5 for s in scored.values()))
    assert r.passes(t) is expected
    assert r.components_to_improve() == list(dict.fromkeys(f.component for f in r.diagnosis))


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("metric", [m for m in METRICS if m != "sd"])
def test_metric_tasks_are_the_prompts_each_metric_loads(metric: str, batched: bool, monkeypatch) -> None:
    loaded: list[str] = []
    real = decompose.load_task_prompt

    def spy(task, overrides):
        loaded.append(task)
        return real(task, overrides)

    monkeypatch.setattr(decompose, "load_task_prompt", spy)
    monkeypatch.setattr(match, "load_task_prompt", spy)
    ev = Thelma(Judge(ThelmaScript(default=1).model()), metrics=(metric,), batched=batched)
    assert ev.evaluate(SAMPLE).score(metric) is not None
    assert set(loaded) <= set(get_metric(metric).tasks)
    kind = "batch_" if batched else "match_"
    assert {t for t in get_metric(metric).tasks if not t.startswith(("match_", "batch_")) or t.startswith(kind)} \
        == set(loaded)
    assert list(ev.prompts()) == list(get_metric(metric).tasks)


def test_prompt_updates_are_checked_when_given() -> None:
    ev = Thelma(Judge(ThelmaScript(default=1).model()), metrics=("gr",))
    mine = ("{#\ntask: mine\nvariables: claim, sources\noutput: 0 or 1\n#}\n"
            "Is <claim>{{ claim }}</claim> backed? {% for s in sources %}<source n=\"1\">{{ s }}</source>{% endfor %}")
    mine_ev = ev.with_prompts(match_supported=mine)
    assert mine_ev.prompts()["match_supported"].task == "mine"
    assert mine_ev.prompts()["decompose_claims"].task == "thelma/decompose_claims"
    assert ev.prompts()["match_supported"].task == "thelma/match_supported"  # the original is left as it was
    with pytest.raises(ConfigError, match="its prompts: decompose_claims, match_supported"):
        mine_ev.with_prompts(match_essential=mine)
    with pytest.raises(PromptError):
        mine_ev.with_prompts(match_supported="Grade {answer}")
    assert mine_ev.prompts()["match_supported"].task == "mine"  # a refused update changes nothing


def test_select_metrics() -> None:
    assert select_metrics("sd") == ("sd",) and select_metrics(metrics=["gr", "rp"]) == ("gr", "rp")
    assert select_metrics() == METRICS
    with pytest.raises(ConfigError, match="not both"):
        select_metrics("gr", ["gr"])
    with pytest.raises(ConfigError, match="unknown THELMA metric 'sp3'"):
        select_metrics("sp3")


def test_one_source_alone_is_one_source() -> None:
    text = "Ada was born in 1815."
    assert Sample(contexts=text).context_texts() == [text]
    assert Sample(contexts={"text": text}).context_texts() == [text]
    assert Sample(contexts=None).contexts == [] and Sample(contexts=(text, text)).context_texts() == [text, text]
