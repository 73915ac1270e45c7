"""Prompt-prefix reuse for the local judge that never changes a reply.

A KV state is a function of the tokens *and of how they were batched*: llama.cpp's kernels sum in an
order that depends on the shape of each batch, so the cells of a prefix evaluated as the tail of one
batch differ in their last bits from the same prefix evaluated as the head of another. Reusing
whatever prefix the previous prompt shared (llama-cpp-python's own reuse, and this module's first
form) therefore let a reply depend on what ran before it; once in a while a greedy choice flipped.

A fresh evaluation of a prompt runs it in batches of ``n_batch`` tokens from position 0. Its state
after ``j * n_batch`` tokens depends on those tokens alone, and equals, bit for bit, the state of any
earlier prompt that began with the same ``j * n_batch`` tokens and was itself evaluated that way. So
a state is kept only up to the last whole batch of its prompt (the reply's cells, made one token at a
time, are dropped), and a call starts from the kept state sharing the most whole batches with its
prompt, always leaving at least one token to evaluate. Every call then computes exactly what a fresh
evaluation computes: the same batches, the same cells, the same logits. The live state of the
context counts only when this cache left it there (anything else may have touched it).

It keeps the last ``slots`` states, and more while they fit in ``budget`` bytes. When one must go, it
is the kept state sharing the longest prefix with the state just added (a task's earlier call: the
new one holds the same instructions), else the oldest. The caller holds the model's lock.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from typing import Any

import llama_cpp
import numpy as np

__all__ = ["PrefixCache"]


def _common(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the common prefix of two token arrays."""
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


class PrefixCache:
    """KV states of recent prompts, each cut at a whole batch, keyed by their tokens."""

    def __init__(self, llm: Any, slots: int = 8, budget: int = 256 << 20) -> None:
        self._llm = llm
        self._slots = slots
        self._budget = budget
        self._batch = int(llm.n_batch)
        self._states: OrderedDict[bytes, tuple[np.ndarray, bytes]] = OrderedDict()
        self._bytes = 0
        self._live: np.ndarray | None = None  # the tokens of the state this cache left in the context
        self.restored = 0  # calls that started from a kept state (for tests and benchmarks)
        self.reused = 0    # calls that started from the live state

    def _boundary(self, shared: int, prompt: int) -> int:
        """The last whole-batch position within ``shared`` tokens that leaves one of ``prompt`` to run."""
        return min(shared, prompt - 1) // self._batch * self._batch

    def before(self, tokens: list[int]) -> None:
        """Leave the context holding exactly the state a fresh evaluation of ``tokens`` has after its
        longest run of whole batches this cache can supply, or nothing."""
        llm = self._llm
        want = np.asarray(tokens, dtype=llm.input_ids.dtype)
        live = self._live
        if live is not None and (llm.n_tokens < len(live) or not np.array_equal(llm.input_ids[:len(live)], live)):
            live = None  # something else ran in this context since
        at = self._boundary(_common(live, want), len(want)) if live is not None else 0
        best, best_at = None, at
        for key, (ids, _) in self._states.items():
            n = self._boundary(_common(ids, want), len(want))
            if n > best_at:
                best, best_at = key, n
        self._live = None
        if best is not None:
            ids, state = self._states[best]
            self._states.move_to_end(best)
            llm._ctx.kv_cache_clear()
            buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
            if llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, buf, len(state), 0):
                llm.input_ids[:len(ids)] = ids
                at = best_at
                self.restored += 1
            else:
                at = 0  # unusable: start from nothing
        elif at:
            self.reused += 1
        if at:
            llm._ctx.kv_cache_seq_rm(-1, at, -1)
        else:
            llm._ctx.kv_cache_clear()
        # llama-cpp-python then reuses exactly these ``at`` tokens (they all match, and at least one
        # token of the prompt is left), evaluating the rest in batches from a whole-batch position.
        llm.n_tokens = at
        llm._requires_eval = True

    def after(self, prompt_tokens: int) -> None:
        """Keep the state of the last call's prompt up to its last whole batch; the reply's cells and
        the prompt's last partial batch go (a different prompt would batch them differently)."""
        llm = self._llm
        cut = min(prompt_tokens, llm.n_tokens) // self._batch * self._batch
        llm._ctx.kv_cache_seq_rm(-1, cut, -1)
        llm.n_tokens = cut
        llm._requires_eval = True
        if cut == 0:
            self._live = None
            return
        ids = llm.input_ids[:cut].copy()
        self._live = ids
        key = ids.tobytes()
        if key in self._states:
            self._states.move_to_end(key)  # the very same cells: nothing new to copy
            return
        ctx = llm._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
        if not written:
            return
        self._states[key] = (ids, ctypes.string_at(buf, written))
        self._bytes += written
        while len(self._states) > self._slots and self._bytes > self._budget:
            self._drop(self._victim(ids))

    def _victim(self, ids: np.ndarray) -> bytes:
        """The kept state (not the newest) sharing the longest prefix with ``ids``, else the oldest."""
        keys = list(self._states)[:-1]
        shared = [_common(self._states[k][0], ids) for k in keys]
        best = int(np.argmax(shared))
        return keys[best] if shared[best] >= self._batch else keys[0]

    def _drop(self, key: bytes) -> None:
        if key in self._states:
            self._bytes -= len(self._states.pop(key)[1])
