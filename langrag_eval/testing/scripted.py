"""The scripted model: a deterministic stand-in for any :class:`~langrag_eval.model.ChatModel`.

:class:`ScriptedModel` replies from a list, a mapping or a function, can add latency, injects
rate-limit errors, timeouts and malformed replies at given rates (deterministically, from a seed),
and records every prompt, schema and set of generation settings it saw.

>>> import asyncio
>>> from langrag_eval.model import GenerationParams
>>> m = ScriptedModel({"capital": "Paris", "": "I do not know"})
>>> asyncio.run(m.generate("What is the capital of France?", GenerationParams())).text
'Paris'
>>> m.prompts
['What is the capital of France?']
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import ConfigError, DataError, ModelTimeoutError, RateLimitError
from ..files.jsontext import parse_json
from ..files.reading import read_text
from ..model import GenerationParams, Reply, TokenUsage, estimate_tokens

__all__ = ["MALFORMED", "ScriptedModel", "resolve"]

Script = Sequence[str] | Mapping[str, str] | Callable[[str], str]
MALFORMED = "I am not sure how to answer in that format."


class ScriptedModel:
    """A deterministic stand-in for a chat model.

    ``replies``: a list (taken in order, cycling), a mapping (the first key contained in the prompt
    wins; an empty key matches everything), or a function of the prompt.
    ``latency``: seconds each call takes. ``rate_limit_rate``, ``timeout_rate``, ``malformed_rate``:
    shares of calls that fail that way, decided by ``seed``, the prompt and how often it was seen.
    ``schema_replies``: used instead of ``replies`` when a call passes a JSON schema and
    ``constrained`` is True, to imitate a constrained-decoding backend. ``record=False`` keeps
    no prompts, schemas or settings (``calls`` still counts): a long run's memory stays flat.
    """

    def __init__(self, replies: Script, *, model_id: str = "scripted", latency: float = 0.0,
                 rate_limit_rate: float = 0.0, timeout_rate: float = 0.0, malformed_rate: float = 0.0,
                 seed: int = 0, constrained: bool = False,
                 schema_replies: Callable[[str, dict[str, Any]], str] | None = None,
                 record: bool = True) -> None:
        if isinstance(replies, Sequence) and not isinstance(replies, str) and not replies:
            raise ConfigError("ScriptedModel needs at least one reply")
        self.replies = replies
        self.model_id = model_id
        self.latency = latency
        self.rates = (rate_limit_rate, timeout_rate, malformed_rate)
        self.seed = seed
        self.constrained = constrained
        self.schema_replies = schema_replies
        self.record = record
        self._calls = 0
        self.prompts: list[str] = []
        self.schemas: list[dict[str, Any] | None] = []
        self.params: list[GenerationParams] = []
        self.failures: Counter[str] = Counter()
        self.in_flight = 0
        self.peak_concurrency = 0
        self._next = 0
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()  # one model may serve judges in several threads at once

    def __getstate__(self) -> dict[str, Any]:
        # A copy in another process (a Ray actor) answers from the same script and counts its own calls
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        """Calls that reached the model, failed ones included."""
        return self._calls

    def _script(self, prompt: str) -> str:
        if callable(self.replies):
            return self.replies(prompt)
        if isinstance(self.replies, Mapping):
            for key, reply in self.replies.items():
                if key in prompt:
                    return reply
            raise ConfigError(f"ScriptedModel has no reply for a prompt starting {prompt[:80]!r}")
        reply = self.replies[self._next % len(self.replies)]
        self._next += 1
        return reply

    def _draw(self, prompt: str) -> float:
        self._seen[prompt] += 1
        digest = hashlib.sha256(f"{self.seed}|{self._seen[prompt]}|{prompt}".encode()).digest()
        return random.Random(digest).random()

    def _reply(self, prompt: str, schema: dict[str, Any] | None) -> str:
        rate_limit, timeout, malformed = self.rates
        draw = self._draw(prompt) if rate_limit or timeout or malformed else 1.0
        if draw < rate_limit:
            self.failures["rate_limit"] += 1
            raise RateLimitError("scripted rate limit (HTTP 429)")
        if draw < rate_limit + timeout:
            self.failures["timeout"] += 1
            raise ModelTimeoutError("scripted timeout")
        if draw < rate_limit + timeout + malformed:
            self.failures["malformed"] += 1
            return MALFORMED
        if schema is not None and self.constrained and self.schema_replies is not None:
            return self.schema_replies(prompt, schema)
        return self._script(prompt)

    async def generate(self, prompt: str, params: GenerationParams, *,
                       schema: dict[str, Any] | None = None) -> Reply:
        with self._lock:
            self._calls += 1
            if self.record:
                self.prompts.append(prompt)
                self.schemas.append(schema)
                self.params.append(params)
            self.in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            with self._lock:
                text = self._reply(prompt, schema)
        finally:
            with self._lock:
                self.in_flight -= 1
        return Reply(text=text, usage=TokenUsage(prompt_tokens=estimate_tokens(prompt),
                                                 completion_tokens=estimate_tokens(text)))


def resolve(spec: str) -> ScriptedModel:
    """``scripted:FILE`` for the CLI: FILE holds a JSON list of replies or a mapping
    from prompt substring to reply (an empty key matches any prompt). The model's id carries the
    digest of what the file holds, as a GGUF judge's does: runs and cached replies are keyed by it,
    so a file edited in place is a new judge, and the same replies in another folder the same one.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "judge.json"
    >>> _ = p.write_text('["Score: [[4]]"]', encoding="utf-8")
    >>> resolve(str(p)).model_id
    'scripted:judge.json@sha256:d337cb816f701d17'
    """
    path = Path(spec)
    try:
        text = read_text(path, what="scripted judge file")
        data = parse_json(text)
    except DataError as exc:  # missing, a directory, unreadable, not UTF-8: a judge setting at fault
        raise ConfigError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: a scripted judge file must be a JSON list or object ({exc})") from None
    # the text as read (not its path, not the file's times): the same replies are the same judge
    model_id = f"scripted:{path.name}@sha256:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"
    if isinstance(data, list) and data and all(isinstance(x, str) for x in data):
        return ScriptedModel(data, model_id=model_id, record=False)
    if isinstance(data, dict) and data and all(isinstance(v, str) for v in data.values()):
        return ScriptedModel(data, model_id=model_id, record=False)
    raise ConfigError(f"{path}: a scripted judge file must be a non-empty JSON list of strings "
                      "or an object mapping prompt substrings to replies")
