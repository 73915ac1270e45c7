"""Same input, same judgments: every judging command, run twice from an empty cache with a judge whose
reply depends on the prompt alone, stores the same judgment for every item, whatever the order of the
input rows, the concurrency, and the order in which concurrent calls finish.

The judge answers every shipped prompt by word overlap (``overlap_model``) and takes a delay drawn
from the prompt, so that under concurrency the calls finish in an order unlike the input's."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest

from langrag_eval.cli import main
from langrag_eval.model import GenerationParams, Reply
from langrag_eval.testing import overlap_model


class _Jittered:
    """The overlap judge, each call delayed by an amount drawn from its prompt (0-6 ms)."""

    constrained = False

    def __init__(self) -> None:
        self._inner = overlap_model()
        self.model_id = self._inner.model_id

    async def generate(self, prompt: str, params: GenerationParams, *, schema: dict[str, Any] | None = None) -> Reply:
        await asyncio.sleep((zlib.crc32(prompt.encode("utf-8")) % 7) / 1000)
        return await self._inner.generate(prompt, params, schema=schema)


@pytest.fixture(autouse=True)
def jittered_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    import langrag_eval.testing.scripted as scripted

    monkeypatch.setattr(scripted, "resolve", lambda spec: _Jittered())


def _judgment(result: str) -> Any:
    """A stored result without its usage counts: which of two items sharing a call made it, and which
    read it from the cache, depends on timing; the judgment must not."""
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "usage"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node
    return strip(json.loads(result))


def _rows(store: Path) -> dict[tuple[str, str], tuple[int, Any]]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT task, item, scored, result FROM judgments").fetchall()
    out = {(task, item): (scored, _judgment(result)) for task, item, scored, result in rows}
    assert len(out) == len(rows)  # one judgment per task and item
    return out


def _write(path: Path, header: str | None, lines: list[str]) -> str:
    path.write_text((header + "\n" if header else "") + "".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


FACTS = ["Refunds take five working days after approval.", "Bikes can be rented at any station.",
         "The day pass costs twelve euros.", "Stations close at midnight on Sundays.",
         "Electric bikes need a deposit.", "Helmets are free for members.", "Lost cards cost three euros.",
         "Children under fourteen ride with an adult."]


def _inputs(folder: Path, order: list[int]) -> dict[str, str]:
    folder.mkdir()
    qa = [f"q{i},What about item {i}?,{FACTS[i]},{FACTS[(i + i % 2) % len(FACTS)]}" for i in order]
    thelma = [json.dumps({"id": f"s{i}", "query": f"What about item {i}?", "sources": [FACTS[i], FACTS[-1 - i]],
                          "response": f"{FACTS[i]} {FACTS[(i + 3) % 8]}"}) for i in order]
    answers = [json.dumps({"qid": f"q{i // 3}", "query": f"What about item {i // 3}?", "agent": f"agent-{i % 3}",
                           "answer": f"{FACTS[i % 8]} {FACTS[(i * 5) % 8]}",
                           "documents": [{"id": f"d{j}", "text": FACTS[j]} for j in (i % 8, (i + 2) % 8)]})
               for i in [o * 3 + k for o in [o for o in order if o < 4] for k in range(3)]]
    dataset = [json.dumps({"id": f"t1:x/{s}-{i}", "logic_id": "t1:x", "template_id": "t1", "text_id": f"{s}-{i}",
                           "style": s, "question": f"{s} question {i}?", "answer": str(40 + i), "sql": "SELECT 42",
                           "params": {}}) for i in [o for o in order if o < 4] for s in ("short", "long")]
    grammar_answers = [json.dumps({"qid": f"t1:x/{s}-{i}", "query": "q", "agent": "A", "answer": str(40 + i % 2),
                                   "documents": []}) for i in [o for o in order if o < 4] for s in ("short", "long")]
    corpus = folder / "corpus"
    corpus.mkdir()
    for i in [o for o in order if o < 4]:
        (corpus / f"doc{i}.txt").write_text(" ".join(FACTS[i:] + FACTS[:i]) * 3, encoding="utf-8")
    return {"qa": _write(folder / "qa.csv", "id,question,answer,label", qa),
            "thelma": _write(folder / "traffic.jsonl", None, thelma),
            "answers": _write(folder / "answers.jsonl", None, answers),
            "dataset": _write(folder / "dataset.jsonl", None, dataset),
            "grammar_answers": _write(folder / "grammar_answers.jsonl", None, grammar_answers),
            "corpus": str(corpus), "examples": _write(folder / "examples.txt", None, ["How much is a day pass?"])}


def _commands(i: dict[str, str], judge: list[str], store: list[str], out: Path) -> dict[str, list[str]]:
    return {
        "grade": ["grade", i["qa"], *judge, *store, "--out", str(out / "graded.csv")],
        "thelma": ["thelma", i["thelma"], *judge, *store, "--embedder", "none", "--out", str(out / "thelma.jsonl")],
        "tournament": ["tournament", "--answers", i["answers"], *judge, *store, "--bootstrap", "5",
                       "--tournaments", "5", "--json", str(out / "tournament.json")],
        "judge audit": ["judge", "audit", *judge, *store, "--max-items", "4", "--temperature", "0",
                        "--json", str(out / "card.json")],
        "grammar analyze": ["grammar", "analyze", "--dataset", i["dataset"], "--answers", i["grammar_answers"],
                            *judge, *store, "--out", str(out / "grammar.json")],
        "synth queries": ["synth", "queries", "--corpus", i["corpus"], "--examples", i["examples"],
                          "--generator", judge[1], *store, "--out", str(out / "synthetic.jsonl")],
    }


@pytest.mark.slow
def test_every_judging_command_stores_the_same_judgments_whatever_the_order(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    judge_file = tmp_path / "judge.json"
    judge_file.write_text('[""]', encoding="utf-8")
    judge = ["--judge", f"scripted:{judge_file}"]
    stored: list[dict[str, dict]] = []
    for run, (order, concurrency) in enumerate([(list(range(8)), "8"),
                                                (random.Random(7).sample(range(8), 8), "3")]):
        inputs = _inputs(tmp_path / f"in{run}", order)
        out = tmp_path / f"out{run}"
        out.mkdir()
        per_command = {}
        for name, argv in _commands(inputs, judge, [], out).items():
            store = tmp_path / f"{name.replace(' ', '-')}-{run}.sqlite"  # an empty cache every time
            argv = [*argv, "--store", str(store), "--concurrency", concurrency]
            code = main(argv)
            assert code == 0, (name, capsys.readouterr().err)
            per_command[name] = _rows(store)
        stored.append(per_command)
    first, second = stored
    for name in first:
        assert first[name], f"{name} stored no judgment"
        assert first[name] == second[name], name
