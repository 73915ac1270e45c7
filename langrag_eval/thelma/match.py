"""THELMA's match modules: each returns one 0/1 verdict (or Unscored) per decomposed component.

``batched=False`` asks one question per component, as the paper does; ``batched=True`` puts all
components of one sample for one task into a single call (one JSON list of verdicts back), which
cuts calls and repeated prompt tokens. Source query coverage asks, per component, each source
alone and, when no single source answers, the whole source set (multi-hop); batched, the judge is
asked once whether any source, alone or combined, answers each sub-question.

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> m = Matcher(Judge(ScriptedModel(["<output>[1, 0]</output>"])), batched=True)
>>> m.essential("When was it built?", ["It was built in 1896.", "It is red."])
[1, 0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..prompting.templates import PromptTemplate
from ..results import Unscored
from ..runtime import Judge, gather_bounded, synchronous
from ..verdicts.formats import BinaryFormat
from .aggregate import Verdict, coverage
from .decompose import load_task_prompt
from .formats import BinaryListFormat

__all__ = ["Matcher"]


@dataclass
class Matcher:
    """The five match tasks over one sample's components, and :meth:`acheck` for a registered
    metric's own."""

    judge: Judge
    batched: bool = False
    prompts: Mapping[str, str | Path | PromptTemplate] = field(default_factory=dict)

    async def _one(self, task: str, **values: object) -> Verdict:
        prompt = load_task_prompt(task, self.prompts).render(**values)
        return (await self.judge.ask(prompt, BinaryFormat())).value  # type: ignore[no-any-return]

    async def _many(self, task: str, calls: Sequence[dict[str, object]]) -> list[Verdict]:
        async def run(values: dict[str, object]) -> Verdict:
            return await self._one(task, **values)
        return await gather_bounded(list(calls), run, concurrency=self.judge.concurrency)

    async def _batch(self, task: str, n: int, **values: object) -> list[Verdict]:
        if n == 0:
            return []
        prompt = load_task_prompt(task, self.prompts).render(**values)
        answer = await self.judge.ask(prompt, BinaryListFormat(n))
        if isinstance(answer.value, Unscored):
            return [answer.value] * n
        return list(answer.value)

    async def asource(self, query: str, sources: Sequence[str]) -> list[Verdict]:
        """m_sp1: does each retrieved source hold information essential to the query?"""
        if self.batched:
            return await self._batch("batch_source", len(sources), query=query, sources=list(sources))
        return await self._many("match_source", [{"query": query, "source": s} for s in sources])

    async def aessential(self, query: str, facts: Sequence[str]) -> list[Verdict]:
        """m_sp2 / m_rp: is each fact (of the sources) or claim (of the response) essential?"""
        if self.batched:
            return await self._batch("batch_essential", len(facts), query=query, facts=list(facts))
        return await self._many("match_essential", [{"query": query, "fact": f} for f in facts])

    async def aaddresses(self, questions: Sequence[str], response: str) -> list[Verdict]:
        """m_rqcov: does the response address each sub-question?"""
        if self.batched:
            return await self._batch("batch_addresses", len(questions), questions=list(questions),
                                     response=response)
        return await self._many("match_addresses", [{"question": q, "response": response}
                                                    for q in questions])

    async def asupported(self, claims: Sequence[str], sources: Sequence[str]) -> list[Verdict]:
        """m_gr: is each claim of the response supported by the source set?"""
        if self.batched:
            return await self._batch("batch_supported", len(claims), claims=list(claims),
                                     sources=list(sources))
        return await self._many("match_supported", [{"claim": c, "sources": list(sources)}
                                                    for c in claims])

    async def aanswers(self, questions: Sequence[str], sources: Sequence[str]) -> list[Verdict]:
        """m_sqcov with the max over components: is each sub-question answered by some source,
        or (multi-hop) by the source set as a whole?"""
        if self.batched:
            return await self._batch("batch_answers", len(questions), questions=list(questions),
                                     sources=list(sources))

        async def per_question(question: str) -> Verdict:
            alone = await self._many("match_answers", [{"question": question, "sources": [s]}
                                                       for s in sources])
            # The whole-set check is only needed when no single source settles the question,
            # and with one source it would repeat the same prompt.
            if len(sources) > 1 and coverage([alone])[0] != 1:
                alone.append(await self._one("match_answers", question=question, sources=list(sources)))
            return coverage([alone])[0]

        return await gather_bounded(list(questions), per_question, concurrency=self.judge.concurrency)

    async def acheck(self, components: Sequence[str], *, one: str, batch: str | None = None,
                     **values: object) -> list[Verdict]:
        """A metric's own match task: the prompt task ``one`` once per component (the component as
        the variable ``component``, with ``values``), or, batched and where the metric has a batch
        task, ``batch`` once for all of them (as ``components``)."""
        if self.batched and batch is not None:
            return await self._batch(batch, len(components), components=list(components), **values)
        return await self._many(one, [{"component": c, **values} for c in components])

    # The same from synchronous code.
    def source(self, query: str, sources: Sequence[str]) -> list[Verdict]:
        """:meth:`asource` from synchronous code."""
        return synchronous(self.asource)(query, sources)

    def essential(self, query: str, facts: Sequence[str]) -> list[Verdict]:
        """:meth:`aessential` from synchronous code."""
        return synchronous(self.aessential)(query, facts)

    def addresses(self, questions: Sequence[str], response: str) -> list[Verdict]:
        """:meth:`aaddresses` from synchronous code."""
        return synchronous(self.aaddresses)(questions, response)

    def supported(self, claims: Sequence[str], sources: Sequence[str]) -> list[Verdict]:
        """:meth:`asupported` from synchronous code."""
        return synchronous(self.asupported)(claims, sources)

    def answers(self, questions: Sequence[str], sources: Sequence[str]) -> list[Verdict]:
        """:meth:`aanswers` from synchronous code."""
        return synchronous(self.aanswers)(questions, sources)
