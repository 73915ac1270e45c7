"""Prompt-prefix reuse across interleaved tasks for the local judge.

llama-cpp-python already skips the prefix a prompt shares with the *previous* prompt. Concurrent
judgments of different tasks (THELMA sends six templates side by side) interleave, so the previous
prompt is usually another task's and its instructions are evaluated again every time. This keeps the
KV cache of recent prompts (llama.cpp's per-sequence state, only the cells in use: about 10 MB for a
700-token prompt and its reply with the default 270M model) and, before a call, restores the one
sharing the longest prefix with the new prompt when that beats what is already loaded.

It keeps the last ``slots`` states, and more while they fit in ``budget`` bytes (about 25 of the
default model's). When one must go, it is the kept state sharing the longest prefix with the state
just added (a task's earlier call: the new one holds the same instructions), else the oldest: an
eviction by age alone dropped a task's only state while another task had several. The caller holds
the model's lock.
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
    """The KV states of recent prompts (and their replies), keyed by their tokens."""

    def __init__(self, llm: Any, slots: int = 8, min_gain: int = 16, budget: int = 256 << 20) -> None:
        self._llm = llm
        self._slots = slots
        self._budget = budget
        self._min_gain = min_gain  # restoring costs a copy: worth it only for a real saving
        self._states: OrderedDict[bytes, tuple[np.ndarray, bytes]] = OrderedDict()
        self._bytes = 0
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
        """Keep the state the last call left (its prompt and reply), evicting as the class says."""
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
        self._drop(key)
        self._states[key] = (ids, ctypes.string_at(buf, written))
        self._bytes += written
        while len(self._states) > self._slots and self._bytes > self._budget:
            self._drop(self._victim(ids))

    def _victim(self, ids: np.ndarray) -> bytes:
        """The kept state (not the newest) sharing the longest prefix with ``ids``, else the oldest."""
        keys = list(self._states)[:-1]
        shared = [_common(self._states[k][0], ids) for k in keys]
        best = int(np.argmax(shared))
        return keys[best] if shared[best] >= self._min_gain else keys[0]

    def _drop(self, key: bytes) -> None:
        if key in self._states:
            self._bytes -= len(self._states.pop(key)[1])
