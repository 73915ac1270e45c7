"""THELMA's decompose modules (section 3-4): text into atomic claims (sources into facts, responses
into claims, the same module D_text), a query into standalone sub-questions with pronouns resolved
(D_qcov), and a deterministic sentence splitter (D_sen) for self-distinctness.

>>> split_sentences("It was built in 1896. Was it? Yes! It cost 3.5 lakh")
['It was built in 1896.', 'Was it?', 'Yes!', 'It cost 3.5 lakh']
>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> d = Decomposer(Judge(ScriptedModel(["<output>\\n- When was it built?\\n</output>"])))
>>> asyncio.run(d.aquestions("When was it built?"))
['When was it built?']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path

from ..prompting.templates import PromptTemplate, load_prompt, override_template
from ..results import Unscored
from ..runtime import Judge, synchronous
from .formats import ListFormat

__all__ = ["Decomposer", "load_task_prompt", "split_sentences"]

def split_sentences(text: str) -> list[str]:
    """D_sen: split on primary sentence terminators (periods, exclamation and question marks).

    A terminator (possibly repeated, possibly followed by a closing quote or bracket) ends a sentence
    only when whitespace follows, so "3.5" stays whole. Line breaks also end a sentence, because list
    items in a response usually carry no terminator."""
    pieces: list[str] = []
    for part in re.split(r"\n+", text or ""):
        start = 0
        for m in re.finditer(r"[.!?]+[\"')\]\u201d\u2019]*(?=\s)", part):
            pieces.append(part[start:m.end()])
            start = m.end()
        pieces.append(part[start:])
    return [p.strip() for p in pieces if p.strip() and re.search(r"\w", p)]


def load_task_prompt(task: str, overrides: Mapping[str, str | Path | PromptTemplate]) -> PromptTemplate:
    """The ``thelma/<task>`` template (shipped, or a registered metric's own file for its task), or
    the user's (a file or a parsed template) for that task, checked to need no variable the task
    cannot fill."""
    from .metrics import task_template  # the registry reads this module's sentence splitter

    shipped = task_template(task)
    if task not in overrides:
        return shipped
    return override_template(overrides[task], shipped)


@lru_cache(maxsize=None)
def shipped_template(task: str) -> PromptTemplate:
    # read and parsed once per process: every judge call renders one, and reading the file each
    # time cost as much CPU as the rest of the call
    return load_prompt(f"thelma/{task}")


@dataclass
class Decomposer:
    """Claim extraction and query decomposition through the judge. Results are Unscored when the
    judge fails; identical texts share one judge call (cached, or in flight), never asked twice."""

    judge: Judge
    prompts: Mapping[str, str | Path | PromptTemplate] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A decomposition's reply starts the sample's matches: it waits for a slot ahead of them,
        # so the samples in flight decompose early and their matches keep every slot busy to the end.
        self.judge = self.judge.with_priority(self.judge.priority + 1)

    async def aclaims(self, text: str) -> list[str] | Unscored:
        """D_text: the atomic claims of a response, or the facts of a source."""
        prompt = load_task_prompt("decompose_claims", self.prompts).render(text=text)
        return (await self.judge.ask(prompt, ListFormat())).value

    async def aquestions(self, query: str) -> list[str] | Unscored:
        """D_qcov: the standalone sub-questions of a query."""
        prompt = load_task_prompt("decompose_query", self.prompts).render(query=query)
        return (await self.judge.ask(prompt, ListFormat())).value

    def claims(self, text: str) -> list[str] | Unscored:
        """:meth:`aclaims` from synchronous code."""
        return synchronous(self.aclaims)(text)

    def questions(self, query: str) -> list[str] | Unscored:
        """:meth:`aquestions` from synchronous code."""
        return synchronous(self.aquestions)(query)
