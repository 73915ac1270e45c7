"""Tokens per judgment for each capability the quickstart exercises, beside the closest peer.

    python benchmarks/judgment_tokens.py                # the quickstart's offline profile
    python benchmarks/judgment_tokens.py --questions 8  # every shipped question
    python benchmarks/judgment_tokens.py --no-peers     # without the peers through their clients

Runs the quickstart with the scripted judge of langrag_eval.testing (``overlap_model``: no model,
seconds), records every judge prompt, and counts, per capability: prompts, prompt tokens per
judgment, and the leading tokens a prompt shares with the previous prompt of the same task (what
llama.cpp's prefix reuse and providers' prompt caches can skip). Tokens are the default local
model's (Gemma 3 tokenizer, read from the GGUF without loading weights); without the ``local`` extra
they are estimated as characters / 4.

Peers, on the same items: LlamaIndex ``CorrectnessEvaluator`` (system + user prompt) beside vRAG-Eval
grading, when LlamaIndex is importable here. Then, when the peers' environment exists
(benchmarks/.peers-venv, made by benchmarks/peers/setup_peers.sh; ``--no-peers`` skips this), every
task beside its peers as their users run them: each tool's real OpenAI client against
benchmarks/fake_openai.py on the same HaluEval items (benchmarks/peers_real.py), prompt tokens per
judgment counted by the server from the requests (characters / 4, the same count for every side):
vRAG-Eval grading vs LlamaIndex ``CorrectnessEvaluator``, DeepEval ``GEval`` and ragas
``AnswerCorrectness``; THELMA groundedness (batched and per claim) vs ragas ``Faithfulness``; our
pairwise game vs RAGElo's. The target: ours <= the smallest peer's, task by task. Reply tokens are
not counted: the scripted replies are not a model's.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers_real  # noqa: E402  (benchmarks/peers_real.py, beside this file)

CAPABILITIES = {  # how each judge prompt opens; the agents' own generation calls are not judgments
    "vRAG-Eval grade": "Your job is to grade one answer",
    "pairwise game": "Two assistants answered",
    "relevance": "You annotate search results",
}
AGENT_PROMPTS = ("You answer a user's question", "A search system will look for passages")
PEER_TASKS = [("grading", "ours-grading", "vRAG-Eval grade"),
              ("faithfulness", "ours-thelma-batched", "THELMA gr, batched"),
              ("faithfulness", "ours-thelma-per-claim", "THELMA gr, per claim"),
              ("tournament", "ours-tournament", "pairwise game")]


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
    ap.add_argument("--no-peers", dest="peers", action="store_false",
                    help="skip the comparison with the peers through their clients")
    ap.add_argument("--items", type=int, default=20,
                    help="HaluEval items per task for the peers (default 20)")
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
    through = ("below, through its client" if args.peers and peers_real.VENV.exists()
               else "not compared (no benchmarks/.peers-venv, or --no-peers)")
    peers = {"vRAG-Eval grade": llamaindex_correctness(groups["vRAG-Eval grade"], count),
             "THELMA": f"ragas Faithfulness: {through}",
             "pairwise game": f"RAGElo pairwise: {through}",
             "relevance": "RAGElo retrieval evaluator: not compared"}
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
    if args.peers:
        return peer_tokens(args.items)
    return 0


def peer_tokens(items: int) -> int:
    """Prompt tokens per judgment beside each peer, from the server's counts of the real requests."""
    if not (peers_real.VENV / "bin" / "python").exists():
        print(f"\npeers: no {peers_real.VENV} (bash benchmarks/peers/setup_peers.sh)")
        return 0
    samples = {"grading": items, "faithfulness": items, "tournament": max(1, items // 10)}
    with peers_real.fake_server(0.0) as base:
        figures = peers_real.collect(base, 1, samples, concurrency=8, latency=0.0)
    print(f"\nprompt tokens per judgment through each tool's OpenAI client, counted by "
          f"benchmarks/fake_openai.py (characters / 4); {items} HaluEval items, "
          f"{samples['tournament'] * 30} games")
    print(f"{'task':24} {'ours':>6} {'peer':>6} {'ours/peer':>9}  peer")
    missed = []
    for workload, ours, task in PEER_TASKS:
        smallest = mine = None
        for peer in peers_real.WORKLOADS[workload][1]:
            c = peers_real.compare(figures, workload, ours, peer, "wall")
            if c is None or "error" in c:
                print(f"{task:24} {'':>6} {'':>6} {'':>9}  {peer}: {(c or {}).get('error', 'did not run')}")
                continue
            t_ours, t_peer = c["tokens"]
            print(f"{task:24} {t_ours:>6.0f} {t_peer:>6.0f} {t_ours / t_peer:>9.2f}  {c['peer_name']}")
            smallest = t_peer if smallest is None else min(smallest, t_peer)
            mine = t_ours
        if smallest is not None and mine is not None and mine > smallest:
            missed.append(task)
    verdict = "met" if not missed else "NOT met: " + ", ".join(missed)
    print(f"target (ours <= the smallest peer's, per task): {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
