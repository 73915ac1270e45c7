"""``langrag-eval agents``: the six agents on the embedded backend from the command line."""

from __future__ import annotations

import json
import sqlite3

import pytest
from pipeline_corpus import CORPUS

from langrag_eval.cli import main
from langrag_eval.pipelines import AGENT_NAMES, read_answers


@pytest.fixture
def files(tmp_path, minilm):  # minilm: the session's embedder, so the command does not load another
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "microphones.md").write_text(
        "# Microphones\n\n" + "\n\n".join(CORPUS[k] for k in ("mic-ip", "mic-snr", "mic-sleep")),
        encoding="utf-8")
    (corpus / "sensors.jsonl").write_text(
        "".join(json.dumps({"id": k, "text": CORPUS[k]}) + "\n" for k in ("co2-size", "pressure", "radar"))
        + '{"id": "broken"}\n', encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"qid": "ip", "query": "What is the IP rating of the IM72D128?"}) + "\n"
                       + json.dumps({"qid": "kp", "query": "Which pressure sensor suits airbags?"}) + "\n",
                       encoding="utf-8")
    judge = tmp_path / "generator.json"
    judge.write_text(json.dumps({"different search queries": "1. waterproof microphone\n2. airbag sensor",
                                 "": "An answer from the passages."}), encoding="utf-8")
    return {"corpus": corpus, "queries": queries, "judge": judge, "store": tmp_path / "runs.sqlite",
            "out": tmp_path / "answers.jsonl"}


def command(f, *extra: str) -> list[str]:
    return ["agents", "--corpus", str(f["corpus"]), "--queries", str(f["queries"]), "--out", str(f["out"]),
            "--judge", f"scripted:{f['judge']}", "--store", str(f["store"]), "--chunk-size", "200",
            "--chunk-overlap", "20", "-k", "3", *extra]


def model_calls(store) -> int:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT COUNT(*) FROM calls WHERE cached = 0").fetchone()[0]


def test_the_six_agents_run_from_the_cli_and_a_rerun_resumes(files, capsys):
    assert main(command(files)) == 0
    out = capsys.readouterr()
    assert 'sensors.jsonl:4: field "text"' in out.err  # the bad corpus line is reported, not fatal

    answers = read_answers(files["out"])
    assert [(a.agent, a.id) for a in answers] == [(n, q) for n in AGENT_NAMES for q in ("ip", "kp")]
    assert all(a.answer == "An answer from the passages." and 1 <= len(a.contexts) <= 3 for a in answers)
    top = {(a.agent, a.id): a.contexts[0] for a in answers}
    assert top[("rag-bm25", "ip")].id.startswith("microphones.md#")
    assert "IP57" in top[("rag-bm25", "ip")].text
    assert top[("rag-bm25", "kp")].id.startswith("pressure")
    assert all(a.variations == ["waterproof microphone", "airbag sensor"]
               for a in answers if a.agent.startswith("fusion-"))
    assert "rag-knn        2/2 answered" in out.out
    calls = model_calls(files["store"])
    assert calls > 0

    first = files["out"].read_text(encoding="utf-8")
    files["out"].unlink()
    assert main(command(files)) == 0
    assert model_calls(files["store"]) == calls  # every answer read back from the run
    assert files["out"].read_text(encoding="utf-8") == first


def test_a_subset_of_agents_and_bad_arguments(files, capsys):
    assert main(command(files, "--agents", "rag-bm25,fusion-bm25")) == 0
    assert {a.agent for a in read_answers(files["out"])} == {"rag-bm25", "fusion-bm25"}

    assert main(command(files, "--agents", "rag-bm25,rag-bm26")) == 2
    assert "rag-bm26" in capsys.readouterr().err

    files["queries"].write_text('{"qid": "a", "query": "x"}\n{"qid": "a", "query": "y"}\n', encoding="utf-8")
    assert main(command(files)) == 2
    err = capsys.readouterr().err
    assert "queries.jsonl:2" in err and '"qid"' in err
