"""The ChatModel contract run on the local llama.cpp judge with the default Gemma 3 270M GGUF (the
one ``--judge local`` loads). Small budgets keep it to a few dozen short generations."""

from __future__ import annotations

import importlib.util

import pytest

from langrag_eval.errors import ConfigError
from langrag_eval.model import GenerationParams
from langrag_eval.models.llamacpp import LlamaCppModel, resolve
from langrag_eval.testing import ChatModelContract

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                       reason="llama_cpp is not importable: install the extra 'langrag-eval[local]'"),
]


class TestLlamaCppModel(ChatModelContract):
    """A real model: it stops at ``max_tokens`` and its constrained replies are JSON. Its calls
    cannot be observed from outside, nor made to fail on demand (those checks are skipped)."""

    params = GenerationParams(temperature=0.0, max_tokens=6, seed=0)
    bounds_max_tokens = True
    threads = 2
    calls = 2

    def make_model(self) -> LlamaCppModel:
        try:
            return resolve("")  # the default GGUF, loaded once per process
        except ConfigError as exc:
            pytest.skip(f"the default local model is unavailable: {exc}")
