"""A reply script for THELMA's prompts: decompositions and 0/1 verdicts from tables, in
per-component and batched form alike, so the two modes can be compared on the same ground truth.

The task of a prompt is recognised from the tag blocks the shipped templates write; templates of
your own may not be recognised (then :class:`KeyError`).

>>> script = ThelmaScript(claims={"Ada was born in 1815. She liked cats.":
...                               ["Ada was born in 1815.", "Ada liked cats."]},
...                       essential={"Ada was born in 1815.": 1})
>>> print(script.reply("<passage>\\nAda was born in 1815. She liked cats.\\n</passage>"))
<output>
- Ada was born in 1815.
- Ada liked cats.
</output>
>>> script.reply('<query>\\nWhen was Ada born?\\n</query>\\n<fact n="1">\\nAda was born in 1815.\\n</fact>'
...              '\\n<fact n="2">\\nAda liked cats.\\n</fact>')
'<output>[1, 0]</output>'
>>> script.model().model_id
'scripted:thelma'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Union

from ..errors import ConfigError
from ..thelma.decompose import split_sentences
from .scripted import ScriptedModel

if TYPE_CHECKING:
    from ..types import Sample

__all__ = ["ThelmaScript", "blocks", "synthetic_dataset"]

Table = Union[Mapping[object, int], Callable[[str], int]]


def blocks(prompt: str, tag: str) -> list[str]:
    """The contents of every ``<tag>`` / ``<tag n="i">`` block of a rendered prompt, in order."""
    return [m.group(1).strip() for m in
            re.finditer(rf"<{tag}(?:\s[^<>]*)?>\n?(.*?)\n?</{tag}>", prompt, re.DOTALL)]


def _numbered(prompt: str, tag: str) -> bool:
    return re.search(rf'<{tag} n="\d+">', prompt) is not None


class ThelmaScript:
    """Replies to THELMA prompts from tables.

    ``claims`` (text -> claims) and ``questions`` (query -> sub-questions) give decompositions;
    texts not listed fall back to their sentences. Each verdict table maps a key to 0/1, or is a
    function of the most specific key. Keys, most specific first: ``source`` (query, source) or
    source (SP1); ``essential`` (query, fact) or fact (SP2 and RP); ``supported`` (claim, sources
    tuple) or claim (GR); ``addresses`` (sub-question, response) or sub-question (RQC); ``answers``
    (sub-question, source) (SQC), where the whole source set answers when any single source does or
    when ``(sub-question, None)`` is 1 (a multi-hop answer). Missing entries get ``default``.
    ``rewrite(kind, text)`` answers the meta-evaluation's perturbation prompts.
    """

    def __init__(self, *, claims: Mapping[str, Sequence[str]] | None = None,
                 questions: Mapping[str, Sequence[str]] | None = None, source: Table | None = None,
                 essential: Table | None = None, answers: Table | None = None,
                 addresses: Table | None = None, supported: Table | None = None,
                 rewrite: Callable[[str, str], str] | None = None, default: int = 0) -> None:
        self.claims = dict(claims or {})
        self.questions = dict(questions or {})
        self.tables = {"source": source or {}, "essential": essential or {}, "answers": answers or {},
                       "addresses": addresses or {}, "supported": supported or {}}
        self.rewrite = rewrite
        self.default = default

    def model(self, **kwargs: object) -> ScriptedModel:
        """A :class:`ScriptedModel` replying with this script (kwargs: latency, failure rates ...)."""
        kwargs.setdefault("model_id", "scripted:thelma")
        return ScriptedModel(self.reply, **kwargs)  # type: ignore[arg-type]

    def verdict(self, table: str, *keys: object) -> int:
        t = self.tables[table]
        if callable(t):
            return int(t(keys[0]))
        for key in keys:
            if key in t:
                return int(t[key])
        return self.default

    def _answers(self, question: str, sources: Sequence[str]) -> int:
        alone = [self.verdict("answers", (question, s)) for s in sources]
        if len(sources) > 1:
            alone.append(self.verdict("answers", (question, None)))
        return max(alone, default=0)

    @staticmethod
    def _list(items: Sequence[str]) -> str:
        return "<output>\n" + "\n".join(f"- {i}" for i in items) + "\n</output>"

    @staticmethod
    def _digits(values: Sequence[int]) -> str:
        return f"<output>[{', '.join(str(v) for v in values)}]</output>"

    def reply(self, prompt: str) -> str:
        if (passage := blocks(prompt, "passage")):
            return self._list(self.claims.get(passage[0], split_sentences(passage[0])))
        if (message := blocks(prompt, "message")):
            return self._list(self.questions.get(message[0], split_sentences(message[0])))
        if "You prepare test data" in prompt:
            return self._perturb(prompt)
        sources = blocks(prompt, "source")
        response = (blocks(prompt, "response") or [None])[0]
        query = (blocks(prompt, "query") or [""])[0]
        if (facts := blocks(prompt, "fact")):
            verdicts = [self.verdict("essential", (query, f), f) for f in facts]
            return self._digits(verdicts) if _numbered(prompt, "fact") else f"<output>{verdicts[0]}</output>"
        if (claims := blocks(prompt, "claim")):
            verdicts = [self.verdict("supported", (c, tuple(sources)), c) for c in claims]
            return self._digits(verdicts) if _numbered(prompt, "claim") else f"<output>{verdicts[0]}</output>"
        if (questions := blocks(prompt, "question")):
            if response is not None:
                verdicts = [self.verdict("addresses", (q, response), q) for q in questions]
            else:
                verdicts = [self._answers(q, sources) for q in questions]
            return (self._digits(verdicts) if _numbered(prompt, "question")
                    else f"<output>{verdicts[0]}</output>")
        if blocks(prompt, "query") and sources:
            verdicts = [self.verdict("source", (query, s), s) for s in sources]
            return self._digits(verdicts) if _numbered(prompt, "source") else f"<output>{verdicts[0]}</output>"
        raise ConfigError(f"not a THELMA prompt this script knows: {prompt[:80]!r}")

    def _perturb(self, prompt: str) -> str:
        if self.rewrite is None:
            raise ConfigError("this script has no rewrite function for perturbation prompts")
        kinds = {"extra statements": "add_extraneous", "leaves out": "remove_essential",
                 "repeats itself": "rephrase_repeat", "no longer agrees": "alter_fact",
                 "no longer contains": "remove_source_facts"}
        kind = next(k for phrase, k in kinds.items() if phrase in prompt)
        text = (blocks(prompt, "source") if kind == "remove_source_facts" else blocks(prompt, "response"))[-1]
        return f"<output>\n{self.rewrite(kind, text)}\n</output>"


_ATTRIBUTES = ("founder", "founding year", "headquarters", "chief product", "staff count", "motto",
               "parent company", "stock ticker")
_NAMES = ("Aldren", "Brisk", "Corvel", "Dunmore", "Elsby", "Fenwick", "Galder", "Harlow", "Iverna", "Jessop")


def synthetic_dataset(n: int, *, seed: int = 0) -> tuple[list[Sample], ThelmaScript]:
    """``n`` invented company samples with a script that knows the truth about each: 1-3 sub-questions,
    1-4 sources (some irrelevant), a response with essential, extraneous and unsupported claims, and
    now and then a question answered only by two sources together (multi-hop)."""
    import random

    from ..types import Sample

    rng = random.Random(seed)
    claims: dict[str, list[str]] = {}
    questions: dict[str, list[str]] = {}
    source: dict[object, int] = {}
    essential: dict[object, int] = {}
    answers: dict[object, int] = {}
    addresses: dict[object, int] = {}
    supported: dict[object, int] = {}
    samples = []
    for i in range(n):
        company = f"{rng.choice(_NAMES)} Works {i}"
        attrs = rng.sample(_ATTRIBUTES, 6)
        asked, rest = attrs[:rng.randint(1, 3)], attrs[3:]
        fact = {a: f"The {a} of {company} is value-{i}-{a.replace(' ', '-')}." for a in attrs}
        subqs = [f"What is the {a} of {company}?" for a in asked]
        query = " And ".join(subqs)
        questions[query] = subqs
        srcs: list[str] = []
        covered: set[str] = set()
        for a in asked:
            if rng.random() < 0.75:
                extra = rng.choice(rest)
                text = f"{fact[a]} {fact[extra]}"
                srcs.append(text)
                claims[text] = [fact[a], fact[extra]]
                source[text] = 1
                covered.add(a)
                for q in subqs:
                    answers[(q, text)] = int(q == f"What is the {a} of {company}?")
        if rng.random() < 0.5 or not srcs:
            noise = f"{fact[rest[0]]} {fact[rest[1]]}"
            srcs.append(noise)
            claims[noise] = [fact[rest[0]], fact[rest[1]]]
            source[noise] = 0
        if len(srcs) > 1 and rng.random() < 0.15:
            # multi-hop: a missing sub-question answered only by the set as a whole
            for a in asked:
                if a not in covered:
                    answers[(f"What is the {a} of {company}?", None)] = 1
                    covered.add(a)
                    break
        for a in attrs:
            essential[fact[a]] = int(a in asked)
        said = [a for a in asked if rng.random() < 0.8] + rng.sample(rest, rng.randint(0, 2))
        wrong = f"The {asked[0]} of {company} is something else." if rng.random() < 0.2 else None
        response_claims = [fact[a] for a in said] + ([wrong] if wrong else [])
        response = " ".join(response_claims) or f"I cannot say much about {company}."
        claims[response] = response_claims
        in_sources = {f for s in srcs for f in claims[s]}
        for c in response_claims:
            supported[c] = int(c in in_sources)
        if wrong:
            essential[wrong] = 1
        for a in asked:
            addresses[(f"What is the {a} of {company}?", response)] = int(a in said or bool(wrong and a == asked[0]))
        samples.append(Sample(id=f"s{i}", question=query, contexts=srcs, answer=response))
    script = ThelmaScript(claims=claims, questions=questions, source=source, essential=essential,
                          answers=answers, addresses=addresses, supported=supported)
    return samples, script
