"""Prompt-prefix reuse across interleaved tasks for the local judge.

llama-cpp-python already skips the prefix a prompt shares with the *previous* prompt. Concurrent
judgments of different tasks (THELMA sends six templates side by side) interleave, so the previous
prompt is usually another task's and its instructions are evaluated again every time. This keeps the
KV cache of the last few prompts (llama.cpp's per-sequence state, only the cells in use: about 18 KB
a token for the default 270M model) and, before a call, restores the one sharing the longest prefix
with the new prompt when that beats what is already loaded. The caller holds the model's lock.
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
    """The KV state of the last ``slots`` prompts, keyed by their tokens."""

    def __init__(self, llm: Any, slots: int = 8, min_gain: int = 16) -> None:
        self._llm = llm
        self._slots = slots
        self._min_gain = min_gain  # restoring costs a copy: worth it only for a real saving
        self._states: OrderedDict[bytes, tuple[np.ndarray, bytes]] = OrderedDict()
        self.restored = 0  # how many calls started from a kept state (for tests and benchmarks)

    def before(self, tokens: list[int]) -> None:
        """Load the kept state sharing the longest prefix with ``tokens``, if it beats the live one."""
        llm = self._llm
        want = np.asarray(tokens, dtype=llm.input_ids.dtype)
        live = _common(llm.input_ids[:llm.n_tokens], want)
        best, best_len = None, live
        for key, (ids, _) in self._states.items():
            n = _common(ids, want)
            if n > best_len:
                best, best_len = key, n
        if best is None or best_len - live < self._min_gain:
            return
        ids, state = self._states[best]
        self._states.move_to_end(best)
        ctx = llm._ctx.ctx
        llm._ctx.kv_cache_clear()
        buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if not llama_cpp.llama_state_seq_set_data(ctx, buf, len(state), 0):
            llm._ctx.kv_cache_clear()  # unusable: start from nothing, as llama-cpp-python would
            llm.n_tokens = 0
            return
        llm.input_ids[:len(ids)] = ids
        llm.n_tokens = len(ids)
        llm._requires_eval = True  # the logits are not this state's: evaluate at least one token
        self.restored += 1

    def after(self) -> None:
        """Keep the state the last call left (its prompt and reply), evicting the oldest."""
        llm = self._llm
        if llm.n_tokens == 0:
            return
        ctx = llm._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
        if not written:
            return
        ids = llm.input_ids[:llm.n_tokens].copy()
        key = ids.tobytes()
        self._states[key] = (ids, ctypes.string_at(buf, written))
        self._states.move_to_end(key)
        while len(self._states) > self._slots:
            self._states.popitem(last=False)
