"""A THELMA metric registered from outside the package, as ``tests/thelma/test_add_a_metric.py``
does, reaches LlamaIndex through the one evaluator wrapper with no other edit: its score, its pass
call, its comment, its prompt in ``get_prompts`` and ``update_prompts``, and its share of the mean."""

from __future__ import annotations

import importlib.util
import sys

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.evaluation import BatchEvalRunner
from llama_index.evaluation.langrag import LangragEvaluator

from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import Thelma, unregister_metric

from tests.thelma.test_add_a_metric import MODULE, PROMPT, SAMPLES, replies

QUERY, SOURCES, RESPONSE = SAMPLES[0]["query"], SAMPLES[0]["sources"], SAMPLES[0]["response"]


@pytest.fixture
def concision(tmp_path):
    unregister_metric("cc")
    (tmp_path / "concise.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "match_concise.txt").write_text(PROMPT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("li_concise_metric", tmp_path / "concise.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    yield
    unregister_metric("cc")
    sys.modules.pop("li_concise_metric", None)


@pytest.mark.parametrize("concise", [0, 1])
def test_the_registered_metric_is_a_llamaindex_score(concision, concise: int) -> None:
    ev = LangragEvaluator(Thelma(Judge(ScriptedModel(replies(concise))), metrics=("rp", "cc")), score="cc")
    r = ev.evaluate(query=QUERY, response=RESPONSE, contexts=SOURCES)
    assert (r.score, r.passing, r.invalid_result) == (float(concise), bool(concise), False)
    assert r.feedback == f"claim concision: {concise} of 1 components matched"
    assert r.scores == {"rp": 1.0, "cc": float(concise)}
    both = LangragEvaluator(ev.evaluator).evaluate(query=QUERY, response=RESPONSE, contexts=SOURCES)
    assert both.score == (1.0 + concise) / 2 and f"cc={concise:.3f}" in both.feedback


async def test_its_prompt_is_a_llamaindex_prompt_and_it_runs_in_batch_eval_runner(concision) -> None:
    model = ScriptedModel(replies(1))
    ev = LangragEvaluator(Thelma(Judge(model), metrics=("cc",)), score="cc")
    assert "task: thelma/match_concise" in ev.get_prompts()["match_concise"].get_template()
    ev.update_prompts({"match_concise": PROMPT.replace("Decide whether", "MINE. Decide whether")})
    out = await BatchEvalRunner({"cc": ev}, workers=2).aevaluate_response_strs(
        queries=[s["query"] for s in SAMPLES[:3]], response_strs=[s["response"] for s in SAMPLES[:3]],
        contexts_list=[s["sources"] for s in SAMPLES[:3]])
    assert [r.score for r in out["cc"]] == [1.0, 1.0, 1.0]
    assert any(p.startswith("MINE. Decide whether") for p in model.prompts)
