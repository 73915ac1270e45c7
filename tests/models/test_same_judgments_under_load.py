"""The offline quickstart's judging twice on the real local model, each run into a fresh store: once at
concurrency 4 while another process keeps a core busy, once at concurrency 1 with the items in reverse
order and the prefix cache holding every state the first run left. The stored judgments are the same.

This is the quickstart's judging on a subset (its shipped questions with their references as the
answers and the shipped documents as passages, graded by vRAG-Eval and scored by THELMA's batched
source precision), not its whole pipeline: the whole one takes minutes on two cores, and what could
make two runs differ is the same here, the order in which concurrent calls take the model, the
states the prefix cache restores, and the machine's load."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from langrag_eval.grading import VragGrader
from langrag_eval.quickstart import load_corpus, load_questions
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.thelma import Thelma
from langrag_eval.types import Sample
from tests.models.test_same_input_same_judgments import _rows

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="the local judge needs the extra 'local' (llama-cpp-python)")

_BUSY = "while True: pass"


def _samples(n: int) -> list[Sample]:
    docs = [d["text"] for d in load_corpus()]
    return [Sample(id=q["id"], question=q["question"], answer=q["reference"],
               contexts=[docs[i % len(docs)][:300], docs[(i + 5) % len(docs)][:300]],
               reference=q["reference"])
            for i, q in enumerate(load_questions()[:n])]


def _judge_all(model: Any, store_path: Path, samples: list[Sample], concurrency: int) -> dict:
    store = RunStore(store_path)
    run_id = store.open_run("quickstart-judging", {"judge": model.model_id}, judge=model.model_id)
    judge = Judge(model, store=store, concurrency=concurrency).for_run(run_id)
    VragGrader(judge).evaluate_many(samples, run_id=run_id, concurrency=concurrency)
    Thelma(judge, metrics=("sp1",), batched=True).evaluate_many(samples, run_id=run_id, concurrency=concurrency)
    return _rows(store_path)


@pytest.mark.slow  # about 100 s of CPU on the real model
def test_the_same_judgments_at_any_concurrency_load_and_cache_history(tmp_path: Path) -> None:
    from langrag_eval.models.llamacpp import LlamaCppModel

    model = LlamaCppModel(n_ctx=2048, n_batch=32)
    samples = _samples(2)
    busy = subprocess.Popen([sys.executable, "-c", _BUSY])
    try:
        loaded = _judge_all(model, tmp_path / "first.sqlite", samples, concurrency=4)
    finally:
        busy.kill()
        busy.wait()
    restored = model._prefixes.restored + model._prefixes.reused
    quiet = _judge_all(model, tmp_path / "second.sqlite", samples[::-1], concurrency=1)
    assert model._prefixes.restored + model._prefixes.reused > restored  # the second run reused states
    assert len(loaded) == 2 * len(samples)
    differing = [key for key in loaded if loaded[key] != quiet.get(key)]
    assert differing == [], json.dumps({str(k): [loaded[k], quiet.get(k)] for k in differing})[:2000]
