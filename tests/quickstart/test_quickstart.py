"""The quickstart, the README's main command: end to end, resumable, honest about a tiny judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.models import TINY_MODEL_WARNING
from langrag_eval.quickstart import QuickstartSettings, run_quickstart
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import overlap_model


def test_every_step_runs_and_a_second_run_costs_no_model_call(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    settings = QuickstartSettings(questions=4, games=2, tournaments=50)
    model = overlap_model()
    first = run_quickstart(Judge(model, store=store), store, tmp_path / "out", settings=settings)
    calls = model.calls
    assert calls > 0 and len(first.lines) == 5
    answers = [json.loads(line) for line in first.answers.read_text(encoding="utf-8").splitlines()]
    assert len(answers) == 6 * 4 and {a["agent"] for a in answers} >= {"rag-bm25", "fusion-hybrid"}
    assert all(a["documents"] for a in answers)
    artifacts = store.artifacts(first.run_id)
    assert {"vrag", "thelma", "tournament", "settings"} <= set(artifacts)
    assert artifacts["vrag"]["scored"] == 24 and len(artifacts["tournament"]["ranking"]) == 6
    assert first.report.is_file()

    again_model = overlap_model()
    second = run_quickstart(Judge(again_model, store=store), store, tmp_path / "out", settings=settings)
    assert second.run_id == first.run_id
    assert again_model.calls == 0  # every judgment read back from the run store
    assert store.artifacts(second.run_id)["tournament"]["ranking"] == artifacts["tournament"]["ranking"]


def test_small_profile_limits_thelma_to_two_agents(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    settings = QuickstartSettings.small()
    result = run_quickstart(Judge(overlap_model(), store=store), store, tmp_path, settings=settings)
    thelma = store.get_artifact(result.run_id, "thelma")
    assert {s["id"].split("/")[0] for s in thelma["samples"]} == {"rag-hybrid", "fusion-hybrid"}
    assert len(thelma["samples"]) == 2 * settings.questions


@pytest.mark.slow
def test_offline_quickstart_with_the_local_default_judge(tmp_path: Path, capsys) -> None:
    """The README's first command, on one question: the real 270M model through llama.cpp."""
    pytest.importorskip("llama_cpp", reason="the local judge needs the extra 'local' (llama-cpp-python)")
    code = main(["quickstart", "--questions", "1", "--games", "1", "--out", str(tmp_path / "out"),
                 "--store", str(tmp_path / "runs.sqlite")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert TINY_MODEL_WARNING in captured.err and "NOT meaningful" in captured.out
    assert (tmp_path / "out" / "report.html").is_file()
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "NOT meaningful" in html and "local:gemma-3-270m" in html
    lines = [ln for ln in captured.out.splitlines() if ln.startswith(("answers:", "vRAG-Eval:", "THELMA",
                                                                      "tournament:", "judge calls:"))]
    assert len(lines) == 5
