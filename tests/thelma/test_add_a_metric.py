"""A metric is one record: a module that registers it and the prompt file of its own task, both
outside the package. Registered, it is scored by the evaluator and read as a typed score, and it
shows in the command line's summary and results, the HTML report, ``compare`` and the gate with no
other edit anywhere."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from langrag_eval.cli import main
from langrag_eval.compare import compare_runs
from langrag_eval.report import build_report
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import Thelma, metric_ids, unregister_metric
from langrag_eval.types import Sample

MODULE = '''
"""Claim concision: the share of the response's claims stated without padding."""
from pathlib import Path

from langrag_eval.results import Unscored
from langrag_eval.thelma import Metric, macro_average, register_metric


async def concision(s):
    if (problem := s.response_problem(needs_query=True)) is not None:
        return problem
    claims = await s.aclaims()
    if isinstance(claims, Unscored):
        return claims
    verdicts = await s.matcher.acheck(claims, one="match_concise", query=s.query)
    return macro_average(verdicts, metric="cc", components=claims, empty="no claims: concision undefined")


register_metric(Metric("cc", "claim concision", concision, tasks=("decompose_claims", "match_concise"),
                       prompts={"match_concise": Path(__file__).with_name("match_concise.txt")}))
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

SAMPLES = [{"id": f"s{i}", "query": f"When was person {i} born?", "sources": [f"Person {i} was born in 18{i:02d}."],
            "response": f"Person {i} was born in 18{i:02d}."} for i in range(8)]


def replies(concise: int) -> dict[str, str]:
    return {"<passage>": "<output>\n- a claim\n</output>", "<message>": "<output>\n- a question\n</output>",
            "<concise_statement>": f"<output>{concise}</output>", "": "<output>1</output>"}


@pytest.fixture
def metric_module(tmp_path):
    unregister_metric("cc")  # the README's example registers one of the same id in this process
    folder = tmp_path / "mymetric"
    folder.mkdir()
    (folder / "concise.py").write_text(MODULE, encoding="utf-8")
    (folder / "match_concise.txt").write_text(PROMPT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("concise_metric", folder / "concise.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    unregister_metric("cc")
    sys.modules.pop("concise_metric", None)


def test_a_registered_metric_is_scored_and_read_as_a_typed_score(metric_module):
    assert "cc" in metric_ids()
    thelma = Thelma(Judge(ScriptedModel(replies(0))), metrics=("rp", "cc"))
    assert list(thelma.prompts()) == ["decompose_claims", "match_essential", "batch_essential", "match_concise"]
    result = thelma.evaluate(Sample(id=SAMPLES[0]["id"], question=SAMPLES[0]["query"], contexts=SAMPLES[0]["sources"],
                                    answer=SAMPLES[0]["response"]))
    assert result.score("cc") == 0.0 and result.score("rp") == 1.0
    assert result.comment("cc") == "claim concision: 0 of 1 components matched"
    scores = {s.name: s for s in thelma.scores(result)}
    assert list(scores) == ["rp", "cc"] == list(thelma.score_names())
    assert scores["cc"].value == 0.0 and scores["cc"].passed is False and (scores["cc"].low, scores["cc"].high) == (0, 1)
    empty = thelma.evaluate(Sample(question="Who?", contexts=["x"], answer=""))
    assert {s.name: s.cause for s in thelma.scores(empty)} == {"rp": "undefined", "cc": "undefined"}


def test_a_registered_metric_shows_in_the_cli_report_compare_and_gate(metric_module, tmp_path, capsys):
    data = tmp_path / "traffic.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in SAMPLES) + "\n", encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    for name, concise in (("good", 1), ("padded", 0)):
        judge = tmp_path / f"{name}.json"
        judge.write_text(json.dumps(replies(concise)), encoding="utf-8")
        code = main(["thelma", str(data), "--judge", f"scripted:{judge}", "--store", str(store), "--embedder",
                     "none", "--metrics", "rp,cc", "--threshold", "cc=0.5", "--out", str(tmp_path / f"{name}.jsonl")])
        out = capsys.readouterr().out
        assert code == 0
        assert f"  cc       {concise:.3f}  0.000       8         0  claim concision" in out
        records = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
        assert {r["scores"]["cc"] for r in records} == {float(concise)}

    s = RunStore(store)
    padded, good = [r["id"] for r in s.runs()]           # newest first
    html = build_report(s, padded)
    assert "claim concision" in html and "<dt>CC</dt>" in html

    c = compare_runs(s, good, padded)
    cc = c.metric("cc")
    assert (cc.mean_a, cc.mean_b, cc.diff, cc.n, cc.kind) == (1.0, 0.0, -1.0, 8, "score")
    assert main(["compare", good, padded, "--store", str(store)]) == 0
    assert "cc" in capsys.readouterr().out
    code = main(["gate", padded, "--baseline", good, "--max-drop", "cc=0.1", "--store", str(store)])
    assert code == 1 and "cc" in capsys.readouterr().out
