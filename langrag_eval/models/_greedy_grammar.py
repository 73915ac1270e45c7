"""Greedy grammar-constrained decoding that asks the grammar about the model's best token first.

llama-cpp-python's sampler chain runs the grammar over the whole vocabulary at every step before
picking the best token. Gemma 3 has 262,144 tokens, so that is most of the cost of a constrained
reply (about 0.15 s a token on two cores). Under greedy decoding the answer is the same if we first
offer the grammar only the highest-scoring token: when the grammar accepts it, it is the best
allowed token; only when it refuses do we filter the whole vocabulary (llama.cpp's own
``common_sampler`` does the same). Sampling at a temperature, custom logits processors and
penalties keep llama-cpp-python's own chain. Imported only by the local judge (extra ``local``).

A reply under a ``PrefixFreeGrammar`` (a JSON object or array with nothing after its closing
bracket) is over as soon as the grammar allows the end of sequence: nothing else can follow, so the
end is given without the forward pass that llama-cpp-python spends on the reply's last token only to
learn it. The reply, its token count and its finish reason are the same.
"""

from __future__ import annotations

import ctypes
import math
import weakref
from collections.abc import Generator
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import Llama, LlamaGrammar

__all__ = ["GreedyGrammarLlama", "PrefixFreeGrammar"]

# Candidates offered to the grammar, best first, before the whole vocabulary (a forced piece of the
# JSON, such as a key, can rank tens of thousands down in a small model's scores).
_SHORTLISTS = (256, 8192, 65536)
_TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])  # llama_token_data


class PrefixFreeGrammar(LlamaGrammar):
    """A grammar none of whose complete replies begins a longer one (a JSON object or array with no
    trailing space): once it allows the end of sequence, it allows nothing else."""


class _CheckFirstGreedy:
    """Stands in for llama-cpp-python's sampler chain (it needs only ``sample(ctx, idx)``)."""

    def __init__(self, llm: Llama, grammar: Any) -> None:
        self._n_vocab = llm.n_vocab()
        self._eos = llm.token_eos()
        smpl = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, grammar._grammar.encode("utf-8"),
                                                    grammar._root.encode("utf-8"))
        if not smpl:
            raise ValueError("llama.cpp rejected the grammar")
        self._smpl = smpl
        weakref.finalize(self, llama_cpp.llama_sampler_free, smpl)
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_arr = llama_cpp.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self.full_passes = 0  # steps that filtered the whole vocabulary (for tests and benchmarks)
        self._prefix_free = isinstance(grammar, PrefixFreeGrammar)
        self.closed = False  # the reply so far is complete and nothing may follow

    def sample(self, ctx: Any, idx: int = -1) -> int:
        ptr = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,))
        best = int(np.argmax(logits))  # first of equal maxima, as llama.cpp's greedy sampler
        self._one[0].id, self._one[0].logit, self._one[0].p = best, float(logits[best]), 0.0
        self._one_arr.size, self._one_arr.selected = 1, -1
        llama_cpp.llama_sampler_apply(self._smpl, ctypes.byref(self._one_arr))
        if self._one[0].logit == -math.inf:
            best = self._best_allowed(logits)
        llama_cpp.llama_sampler_accept(self._smpl, best)
        if self._prefix_free:
            self.closed = self._allows(self._eos)
        return best

    def _allows(self, token: int) -> bool:
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0
        self._one_arr.size, self._one_arr.selected = 1, -1
        llama_cpp.llama_sampler_apply(self._smpl, ctypes.byref(self._one_arr))
        return self._one[0].logit != -math.inf

    def _best_allowed(self, logits: np.ndarray) -> int:
        """The best token the grammar allows: among the top few first, then more, then all."""
        for size in (*_SHORTLISTS, self._n_vocab):
            if size < self._n_vocab:
                # Every token scoring at least the size-th best: what is left out scores strictly
                # less, so the best survivor here is the best allowed in the whole vocabulary.
                floor = np.partition(logits, -size)[-size]
                ids = np.flatnonzero(logits >= floor).astype(np.int32)
            else:
                self.full_passes += 1
                ids = np.arange(self._n_vocab, dtype=np.int32)
            best = self._apply(ids, logits)
            if best is not None:
                return best
        # Nothing allowed: end the reply (it will not parse: Unscored, not a crash).
        return self._eos

    def _apply(self, ids: np.ndarray, logits: np.ndarray) -> int | None:
        """Run the grammar over candidates ``ids``; the best survivor (lowest id among equals, as
        llama.cpp's greedy sampler picks), or None when the grammar refuses them all."""
        cand = np.empty(len(ids), dtype=_TOKEN_DATA)
        cand["id"], cand["logit"], cand["p"] = ids, logits[ids], 0.0
        arr = llama_cpp.llama_token_data_array(
            data=cand.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)),
            size=len(ids), selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self._smpl, ctypes.byref(arr))
        top = cand["logit"].max()
        if top == -math.inf:
            return None
        return int(cand["id"][cand["logit"] == top].min())


class GreedyGrammarLlama(Llama):
    """``Llama`` whose greedy, grammar-constrained completions use the check-first sampler."""

    last_sampler: _CheckFirstGreedy | None = None

    def _init_sampler(self, **kwargs: Any) -> Any:  # type: ignore[override]
        plain = (kwargs.get("grammar") is None or kwargs.get("temp", 0.8) != 0.0
                 or kwargs.get("logits_processor") is not None or kwargs.get("mirostat_mode", 0)
                 or kwargs.get("repeat_penalty", 1.0) != 1.0 or kwargs.get("frequency_penalty", 0.0)
                 or kwargs.get("presence_penalty", 0.0))
        if plain:
            return super()._init_sampler(**kwargs)
        self.last_sampler = _CheckFirstGreedy(self, kwargs["grammar"])
        return self.last_sampler

    def generate(self, tokens: Any, **kwargs: Any) -> Generator[int, Any, None]:  # type: ignore[override]
        inner = super().generate(tokens, **kwargs)
        sent = None
        while True:
            try:
                token = inner.send(sent)
            except StopIteration:
                return
            sent = yield token
            sampler = self._sampler
            if sent is None and isinstance(sampler, _CheckFirstGreedy) and sampler.closed:
                # Only the end may follow: give it without evaluating the last token (the reply's
                # state then ends before that token, and the next prompt's prefix match sees so).
                inner.close()
                yield self.token_eos()
                return
