"""Same prompt, same logits: a call that starts from a kept or live KV state computes exactly what a
fresh evaluation of its prompt computes, whatever ran before it, on the real packaged model.

The reference is a second context on the same file that evaluates every prompt from nothing. The
prompts share instructions (as THELMA's and RAGElo's calls do) and are visited in orders that
hypothesis picks, so every kind of start occurs: from nothing, from the live state the previous call
left, from a kept state of another prompt, and again after generated replies."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from langrag_eval.model import GenerationParams
from langrag_eval.thelma.formats import ListFormat
from langrag_eval.verdicts.formats import PairwiseFormat, ScoreFormat

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="the local judge needs the extra 'local' (llama-cpp-python)")

BATCH = 16  # small batches: many whole-batch boundaries in short prompts, so every start kind is quick
STEMS = ["You split a passage into atomic claims, one piece of information each, full sentences.\n",
         "Two assistants answered the same question. Decide which answer is better: A, B or C.\n",
         "Grade the answer against the reference on a scale of 1 to 5, then give a short reason.\n"]
WORDS = ["tower", "clock", "1896", "queen", "Baroda", "built", "river", "Paris", "yes", "the", "é", "東京"]


def _llm():  # noqa: ANN202
    from langrag_eval.models._greedy_grammar import GreedyGrammarLlama
    from langrag_eval.models.llamacpp import _silence_native_logs, default_gguf

    _silence_native_logs()
    return GreedyGrammarLlama(model_path=str(default_gguf()), n_ctx=512, n_threads=1, n_batch=BATCH,
                              n_ubatch=BATCH, verbose=False)


@pytest.fixture(scope="module")
def contexts():  # noqa: ANN201
    from langrag_eval.models._prefix_cache import PrefixCache

    cached, fresh = _llm(), _llm()
    return cached, PrefixCache(cached), fresh


def _last_logits(llm) -> np.ndarray:  # noqa: ANN001
    return np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),)).copy()


def _fresh(llm, tokens: list[int]) -> np.ndarray:  # noqa: ANN001
    llm.reset()
    llm._ctx.kv_cache_clear()
    llm.eval(tokens)
    return _last_logits(llm)


prompt_sets = st.lists(st.tuples(st.sampled_from(range(len(STEMS))),
                                 st.lists(st.sampled_from(WORDS), min_size=0, max_size=30).map(" ".join)),
                       min_size=2, max_size=4)


# A real model: shrinking would take minutes. Each run draws new walks; a failing one is printed whole
# and is kept by adding it here with @example. Up to 7 prompts a walk, each evaluated twice, take many
# minutes on a busy two-core machine: pytest-timeout's alarm inside one example reads to hypothesis as
# a flaky failure ("failed on the first call but not on a subsequent one"), so the walks get more time.
@pytest.mark.timeout(1800)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(prompts=prompt_sets, order=st.lists(st.integers(0, 3), min_size=3, max_size=7),
       foreign=st.booleans())
def test_every_kind_of_prefix_start_gives_the_fresh_logits_bit_for_bit(contexts, prompts, order, foreign) -> None:  # noqa: ANN001
    cached, cache, fresh = contexts
    texts = [STEMS[s] + STEMS[s] + tail for s, tail in prompts]  # two stems: at least one whole batch
    for step, i in enumerate(order):
        tokens = cached.tokenize(texts[i % len(texts)].encode("utf-8"), add_bos=True, special=False)
        if foreign and step == 1:
            cached.reset()  # something outside the cache touched the context: not to be trusted
            cached.eval(tokens[:5])
        cache.before(tokens)
        start = cached.n_tokens
        assert start % BATCH == 0 and start < len(tokens)
        cached.eval(tokens[start:])
        got = _last_logits(cached)
        if step % 2:  # a reply's cells after the prompt, as a completion leaves them
            cached.eval([cached.token_eos()] * 3)
        cache.after(len(tokens))
        assert np.array_equal(got, _fresh(fresh, tokens)), (step, start, len(tokens))


def test_each_start_kind_occurs_and_matches(contexts) -> None:  # noqa: ANN001
    """A fixed walk through the three kinds, so none of them is left to chance."""
    cached, cache, fresh = contexts
    a, b = STEMS[0] * 3 + "Mara studied chemistry.", STEMS[1] * 3 + "A: Paris. B: Lyon."
    before = (cache.restored, cache.reused)
    starts = []
    for text in (a, b, a, a + " Pim is a cat.", b):
        tokens = cached.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        cache.before(tokens)
        starts.append(cached.n_tokens)
        cached.eval(tokens[cached.n_tokens:])
        assert np.array_equal(_last_logits(cached), _fresh(fresh, tokens))
        cache.after(len(tokens))
    assert cache.restored - before[0] >= 2 and cache.reused - before[1] >= 1
    assert min(starts[2:]) > 0


def test_replies_through_the_judge_equal_fresh_replies_in_any_order() -> None:
    """End to end: the local judge with its prefix cache, calls interleaved across three formats,
    replies token for token the same as the same judge without any reuse."""
    from langrag_eval.models.llamacpp import LlamaCppModel

    def body(path: str) -> str:
        return Path(path).read_text(encoding="utf-8").split("#}\n", 1)[1]

    calls = [(body("prompts/thelma/decompose_claims.txt") + f"<passage>{t}</passage>", ListFormat().json_schema())
             for t in ("Ada wrote code.", "The tower was built in 1896.")]
    calls += [(body("prompts/tournament/relevance.txt") + f"<question>{q}</question>", ScoreFormat().json_schema())
              for q in ("Where?", "When?")]
    calls += [("Which is better? <answer_a>Paris</answer_a><answer_b>Lyon</answer_b>", PairwiseFormat().json_schema())]
    params = GenerationParams(max_tokens=24)
    reuse = LlamaCppModel(n_ctx=2048, n_threads=1, n_batch=BATCH)
    plain = LlamaCppModel(n_ctx=2048, n_threads=1, n_batch=BATCH, prefix_cache=False)

    def text(model, prompt, schema):  # noqa: ANN001, ANN202
        try:
            return asyncio.run(model.generate(prompt, params, schema=schema)).text
        except Exception as exc:  # noqa: BLE001 - a truncated reply must be truncated in both
            return type(exc).__name__
    order = [0, 2, 1, 3, 0, 4, 2, 1, 3]
    got = [text(reuse, *calls[i]) for i in order]
    want = [text(plain, *calls[i]) for i in order]
    assert got == want
    assert reuse._prefixes.restored + reuse._prefixes.reused >= 4
