"""Synthetic queries end to end with two scripted generator models: passages, pool, duplicates,
quotas and provenance; corpus loading and passage sizes; the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from langrag_eval.cli import main
from langrag_eval.models.embeddings import FunctionEmbedder
from langrag_eval.errors import DataError
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.synth import (
    CorpusDocument, QueryGenerator, count_tokens, drop_near_duplicates, load_corpus, sample_by_quota,
    sample_passages, split_passages,
)
from langrag_eval.synth.queries import SyntheticQuery
from langrag_eval.testing import ScriptedModel

EXAMPLES = ["What is the IP rating of the IM72D128?", "Which sensors ship in a TISON-8-6 package?"]


def corpus(n_docs: int = 3, words: int = 450) -> list[CorpusDocument]:
    return [CorpusDocument(id=f"doc{d}", text="\n\n".join(
        " ".join(f"w{d}_{p}_{i}" for i in range(words // 3)) for p in range(3))) for d in range(n_docs)]


def passage_of(prompt: str) -> str:
    return re.search(r"<excerpt>\n(.*?)\n</excerpt>", prompt, re.DOTALL).group(1)


def generator_a(prompt: str) -> str:
    tag = passage_of(prompt).split()[0]
    # Two near-duplicates of each other (differ in case and punctuation) and three distinct ones.
    return json.dumps({"questions": [f"What does {tag} say about sensors?", f"what does {tag} say about sensors",
                                     f"Who wrote {tag}?", f"When was {tag} published?", f"Where is {tag} stored?"]})


def generator_b(prompt: str) -> str:
    tag = passage_of(prompt).split()[0]
    # One duplicate of a generator A question, and three of its own; it writes more than asked.
    return json.dumps({"questions": [f"Who wrote {tag} ?", f"How long is {tag}?", f"Why does {tag} matter?",
                                     f"Is {tag} current?", f"extra {tag} one", f"extra {tag} two"]})


async def test_two_generators_end_to_end_with_quotas_and_provenance() -> None:
    passages = split_passages(corpus(), tokens=200)
    assert len(passages) == 9 and all(p.tokens <= 200 for p in passages)
    a = ScriptedModel(generator_a, model_id="gen-a")
    b = ScriptedModel(generator_b, model_id="gen-b")
    gen = QueryGenerator([Judge(a), Judge(b)], EXAMPLES, per_passage=5)
    result = await gen.asynthesize(passages, quotas={"gen-a": 20, "gen-b": 30}, seed=7)
    r = result.report
    assert r.passages == 9 and r.pool_size == 9 * 5 + 9 * 5     # B capped at 5 a passage
    # Per passage: A's lower-case repeat, and B's "Who wrote X ?" (same normalised text as A's).
    assert r.duplicates_dropped == 9 * 2 and r.unique == 9 * 8
    assert r.generators["gen-a"].model_dump() == {"generated": 45, "duplicates": 9, "unique": 36, "quota": 20,
                                                  "selected": 20, "shortfall": 0, "failed_passages": 0}
    assert r.generators["gen-b"].model_dump() == {"generated": 45, "duplicates": 9, "unique": 36, "quota": 30,
                                                  "selected": 30, "shortfall": 0, "failed_passages": 0}
    assert r.selected == 50 and len(result.queries) == 50
    assert {d.generator for d in result.duplicates} == {"gen-a", "gen-b"}
    for q in result.queries:
        assert q.prompt == "synth/queries" and q.generator in ("gen-a", "gen-b")
        assert q.passage_id.split("#")[1] and q.passage_id.startswith(q.doc_id + "#")
        passage = next(p for p in passages if p.id == q.passage_id)
        assert passage.text.split()[0] in q.text      # the question was written about its passage
    # The few-shot examples and the passage are in every prompt; 9 passages x 2 generators calls.
    assert a.calls == 9 and b.calls == 9
    assert all(EXAMPLES[0] in p and "up to 5 questions" in p for p in a.prompts)
    # Same seed, same selection.
    again = await gen.asynthesize(passages, quotas={"gen-a": 20, "gen-b": 30}, seed=7)
    assert [q.id for q in again.queries] == [q.id for q in result.queries]


async def test_shortfall_and_failed_generator_calls_are_reported() -> None:
    passages = split_passages(corpus(2), tokens=200)[:2]
    bad = ScriptedModel(["not json at all"], model_id="gen-bad")
    gen = QueryGenerator([Judge(ScriptedModel(generator_a, model_id="gen-a")), Judge(bad)], EXAMPLES, per_passage=5)
    result = await gen.asynthesize(passages, quotas={"gen-a": 100, "gen-bad": 10})
    r = result.report
    assert r.generators["gen-a"].shortfall == 100 - 8 and r.generators["gen-a"].selected == 8
    assert r.generators["gen-bad"].failed_passages == 2 and r.generators["gen-bad"].shortfall == 10
    assert len(r.failures) == 2 and all("unparseable" in f for f in r.failures)
    assert bad.calls == 4  # one repair re-ask per passage, then Unscored


async def test_generation_resumes_from_the_store() -> None:
    passages = split_passages(corpus(1), tokens=200)
    store = RunStore(":memory:")
    run = store.open_run("synth", {"x": 1})
    model = ScriptedModel(generator_a, model_id="gen-a")
    gen = QueryGenerator([Judge(model, store=store, run_id=run)], EXAMPLES, per_passage=3)
    first = await gen.asynthesize(passages, store=store, run_id=run)
    fresh = QueryGenerator([Judge(ScriptedModel(["should not be called"], model_id="gen-a"))], EXAMPLES, per_passage=3)
    second = await fresh.asynthesize(passages, store=store, run_id=run)
    assert [q.text for q in second.pool] == [q.text for q in first.pool] and model.calls == 3


def q(i: int, text: str, gen: str = "g") -> SyntheticQuery:
    return SyntheticQuery(id=str(i), text=text, passage_id="p#1", doc_id="p", generator=gen, prompt="synth/queries")


def test_token_set_threshold_and_embedding_dedup() -> None:
    pool = [q(0, "Which sensors support sleep mode?"), q(1, "Which sensors support a sleep mode?"),
            q(2, "Which microphones are waterproof?")]
    kept, dropped = drop_near_duplicates(pool, threshold=0.8)  # Jaccard 5/6 = 0.83
    assert [k.id for k in kept] == ["0", "2"] and dropped[0].similarity == pytest.approx(0.8333, abs=1e-4)
    kept, _ = drop_near_duplicates(pool, threshold=0.9)
    assert len(kept) == 3
    vectors = {"Which sensors support sleep mode?": [1, 0], "Which sensors support a sleep mode?": [0.99, 0.14],
               "Which microphones are waterproof?": [0, 1]}
    embedder = FunctionEmbedder(lambda texts: np.array([vectors[t] for t in texts], dtype=np.float32))
    kept, dropped = drop_near_duplicates(pool, embedder=embedder, embedding_threshold=0.95)
    assert [k.id for k in kept] == ["0", "2"] and dropped[0].duplicate_of == "0"


def test_quota_sampling_is_seeded_and_paper_shaped() -> None:
    pool = [q(i, f"q{i}", gen) for gen, n in (("gpt4", 300), ("opus", 200), ("sonnet", 200), ("haiku", 140))
            for i in range(n)]
    pool = [SyntheticQuery(**{**x.model_dump(), "id": f"{x.generator}-{x.id}"}) for x in pool]
    quotas = {"gpt4": 100, "opus": 50, "sonnet": 30, "haiku": 20}  # RAGElo section 4: 200 of 840
    chosen, result = sample_by_quota(pool, quotas, seed=1)
    assert len(chosen) == 200 and result.selected == quotas and result.available["haiku"] == 140
    assert [c.id for c in sample_by_quota(pool, quotas, seed=1)[0]] == [c.id for c in chosen]
    assert [c.id for c in sample_by_quota(pool, quotas, seed=2)[0]] != [c.id for c in chosen]


def test_passages_respect_counter_and_sample(tmp_path: Path) -> None:
    doc = CorpusDocument(id="d", text="word " * 5000)
    ws = split_passages([doc], tokens=2000)
    assert [p.tokens for p in ws] == [2000, 2000, 1000]
    est = split_passages([doc], tokens=2000, counter="estimate")
    # 5,000 words of 5 characters: 1,600 words make (1600 * 5 - 1 + 3) // 4 = 2000 estimated tokens.
    assert [p.tokens for p in est] == [2000, 2000, 2000, 250]
    assert all(count_tokens(p.text, "estimate") == p.tokens for p in est)
    assert [p.id for p in sample_passages(ws, 2, seed=0)] == [p.id for p in sample_passages(ws, 2, seed=0)]
    assert len(split_passages([CorpusDocument(id="tiny", text="too short")], tokens=2000)) == 0


def test_load_corpus_formats_and_errors(tmp_path: Path, company_documents: Path) -> None:
    docs = load_corpus(company_documents)
    assert len(docs) == 19 and docs[0].id == "1"
    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "x y"}\n{"id": "b", "body": 3}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r'c.jsonl:2: field "text"'):
        load_corpus(tmp_path / "c.jsonl")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("alpha", encoding="utf-8")
    assert [d.id for d in load_corpus(folder)] == ["a.md"]


def test_cli_synth_queries(tmp_path: Path, company_documents: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def replies(name: str, questions: list[str]) -> Path:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"": json.dumps({"questions": questions})}), encoding="utf-8")
        return path
    a = replies("a", ["Which company has the largest sales?", "Where is ExxonMobil based?", "Who founded it?"])
    b = replies("b", ["where is exxonmobil based", "What industry is HSBC in?"])
    examples = tmp_path / "examples.txt"
    examples.write_text("\n".join(EXAMPLES) + "\n", encoding="utf-8")
    out = tmp_path / "synthetic.jsonl"
    args = ["synth", "queries", "--corpus", str(company_documents),
            "--examples", str(examples), "--generator", f"scripted:{a}=2", "--generator", f"scripted:{b}=1",
            "--passages", "4", "--passage-tokens", "300", "--per-passage", "3", "--out", str(out),
            "--store", str(tmp_path / "runs.sqlite")]
    assert main(args) == 0
    text = capsys.readouterr().out
    # Every passage gets the same scripted questions: 4 x 3 + 4 x 2 = 20 pooled; 3 + 1 unique.
    assert "pool 20, duplicates dropped 16, unique 4, selected 3" in text
    # a scripted generator is named by its file and the digest of what the file holds
    assert re.search(r"scripted:b\.json@sha256:[0-9a-f]{16}: generated 8, duplicates 7, unique 1, quota 1, selected 1", text)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3 and {r["generator"].split("@")[0] for r in rows} == {"scripted:a.json", "scripted:b.json"}
    assert all(set(r) == {"qid", "query", "passage_id", "doc_id", "generator", "prompt"} for r in rows)
    run_id = json.loads(text.strip().splitlines()[-1])["run"]
    assert RunStore(tmp_path / "runs.sqlite").get_artifact(run_id, "synth")["pool_size"] == 20
