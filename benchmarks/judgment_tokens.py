"""Tokens per judgment for each capability the quickstart exercises, beside the closest peer.

    python benchmarks/judgment_tokens.py                # the quickstart's offline profile
    python benchmarks/judgment_tokens.py --questions 8  # every shipped question

Runs the quickstart with the scripted judge of langrag_eval.testing (``overlap_model``: no model,
seconds), records every judge prompt, and counts, per capability: prompts, prompt tokens per
judgment, and the leading tokens a prompt shares with the previous prompt of the same task (what
llama.cpp's prefix reuse and providers' prompt caches can skip). Tokens are the default local
model's (Gemma 3 tokenizer, read from the GGUF without loading weights); without the ``local`` extra
they are estimated as characters / 4.

Peers, on the same items: LlamaIndex ``CorrectnessEvaluator`` (system + user prompt) beside vRAG-Eval
grading. ragas (beside THELMA) and RAGElo (beside pairwise games and relevance) are not
dependencies; they live in benchmarks/.peers-venv (see benchmarks/peers.py) and are reported only
when importable here. Reply tokens are not counted here: the scripted replies are not a model's.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Callable

from langrag_eval.quickstart import QuickstartSettings, run_quickstart
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import overlap_model

CAPABILITIES = {  # how each judge prompt opens; the agents' own generation calls are not judgments
    "vRAG-Eval grade": "Your job is to grade one answer",
    "pairwise game": "Two assistants answered",
    "relevance": "You annotate search results",
}
AGENT_PROMPTS = ("You answer a user's question", "A search system will look for passages")


def tokenizer() -> tuple[str, Callable[[str], list[int]]]:
    try:
        from llama_cpp import Llama

        from langrag_eval.models.llamacpp import _silence_native_logs, default_gguf

        _silence_native_logs()
        vocab = Llama(model_path=str(default_gguf()), vocab_only=True, verbose=False)
        return "Gemma 3 tokens", lambda text: vocab.tokenize(text.encode("utf-8"))
    except Exception:  # noqa: BLE001 - no local extra: a documented estimate instead
        return "characters / 4", lambda text: list(range(len(text) // 4))


def capability(prompt: str) -> str | None:
    if prompt.startswith(AGENT_PROMPTS):
        return None
    for name, opening in CAPABILITIES.items():
        if opening in prompt[:200]:
            return name
    return "THELMA"


def shared_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def llamaindex_correctness(prompts: list[str], count: Callable[[str], list[int]]) -> str:
    try:
        from llama_index.core.evaluation.correctness import DEFAULT_EVAL_TEMPLATE
    except ImportError:
        return "LlamaIndex CorrectnessEvaluator: not installed"
    sizes = []
    for p in prompts:  # the same question, label and answer, in LlamaIndex's own prompt
        field = {k: re.search(rf"<{k}>\n(.*?)\n</{k}>", p, re.S) for k in ("question", "label", "answer")}
        if not all(field.values()):
            continue
        messages = DEFAULT_EVAL_TEMPLATE.format_messages(
            query=field["question"].group(1), reference_answer=field["label"].group(1),
            generated_answer=field["answer"].group(1))
        sizes.append(sum(len(count(m.content or "")) for m in messages))
    mean = sum(sizes) / len(sizes) if sizes else 0.0
    return f"LlamaIndex CorrectnessEvaluator: {mean:.0f} prompt tokens per judgment ({len(sizes)} items)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=QuickstartSettings.small().questions)
    args = ap.parse_args(argv)
    unit, count = tokenizer()
    model = overlap_model()
    settings = QuickstartSettings(**{**QuickstartSettings.small().__dict__, "questions": args.questions})
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.sqlite")
        run_quickstart(Judge(model, store=store), store, Path(tmp) / "out", settings=settings)
        store.close()
    groups: dict[str, list[str]] = defaultdict(list)
    for prompt in model.prompts:
        name = capability(prompt)
        if name:
            groups[name].append(prompt)
    print(f"tokens per judgment, quickstart profile with {args.questions} questions ({unit})")
    print(f"{'capability':18} {'judgments':>9} {'prompt tokens':>13} {'shared prefix':>13}  closest peer")
    peers = {"vRAG-Eval grade": llamaindex_correctness(groups["vRAG-Eval grade"], count),
             "THELMA": "ragas faithfulness: not installed here (benchmarks/.peers-venv)",
             "pairwise game": "RAGElo pairwise: not installed here (benchmarks/.peers-venv)",
             "relevance": "RAGElo retrieval evaluator: not installed here (benchmarks/.peers-venv)"}
    for name in ("vRAG-Eval grade", "THELMA", "pairwise game", "relevance"):
        tokens = [count(p) for p in groups[name]]
        if not tokens:
            print(f"{name:18} {0:>9}")
            continue
        mean = sum(map(len, tokens)) / len(tokens)
        last: dict[str, list[int]] = {}  # per task (a prompt's first line): THELMA has several
        shared = []
        for prompt, toks in zip(groups[name], tokens):
            task = prompt.split("\n", 1)[0]
            if task in last:
                shared.append(shared_prefix(last[task], toks))
            last[task] = toks
        mean_shared = sum(shared) / len(shared) if shared else 0.0
        print(f"{name:18} {len(tokens):>9} {mean:>13.0f} {mean_shared:>13.0f}  {peers[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
