"""Reference-free evaluators and how far to trust them (GRAMMAR section 4.1).

Two protocols from the paper, each an evaluator of its own:

* :class:`RagasFact` - the answer split into atomic statements, each checked against the retrieved
  context (1 / 0 / -1 per statement, Table 6); faithfulness is the share entailed, and the answer is
  called correct when it reaches ``threshold`` (default 1.0: every statement entailed). A -1
  (not checkable) verdict counts as not entailed.
* :class:`SelfCheckQA` - the RAG system's own LM answers again ``samples`` times at temperature 1.0
  (distinct seeds), and a checker compares each stochastic answer with the main answer (temperature
  0) given the query; the answer is called correct only when every sample agrees.

Any other reference-free verdict (THELMA groundedness, a vendor's score) joins through
:class:`FunctionVerdict`. :func:`assess_reliability` scores each against the reference-based truth
as a binary classifier (see :func:`~langrag_eval.grammar.analysis.binary_reliability`).

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> judge = Judge(ScriptedModel({"Break the answer": '{"statements": ["The Zürich office is in Switzerland."]}',
...                              "entails": '{"verdicts": [1]}'}))
>>> s = ReliabilitySample(id="q1", question="Where is the Zürich office?", answer="In Switzerland.",
...                       documents=[Document(id="d1", text="Our Zürich office is in Switzerland.")])
>>> RagasFact(judge).evaluate(s).correct
True
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..evaluator import Evaluator, FunctionEvaluator
from ..model import GenerationParams
from ..prompting.templates import PromptTemplate, override_template
from ..results import Declaration, Score, ScoreScale, Unscored
from ..run.evaluation import Executor, aevaluate
from ..runtime import Judge, RunStore, gather_bounded, synchronous
from ..types import Document
from ..verdicts.formats import BinaryFormat, JsonFormat, TextFormat
from .analysis import Reliability, binary_reliability

__all__ = [
    "EvaluatorReport",
    "FreeVerdict",
    "FunctionVerdict",
    "RagasFact",
    "ReferenceFreeEvaluator",
    "ReliabilitySample",
    "SelfCheckQA",
    "aassess_reliability",
    "assess_reliability",
]


class ReliabilitySample(BaseModel):
    """One RAG answer to judge without a reference; ``correct`` is the reference-based truth."""

    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    answer: str
    documents: list[Document] = Field(default_factory=list)
    correct: bool | None = None

_CORRECT = ScoreScale(0, 1, binary=True)


class FreeVerdict(BaseModel):
    """A reference-free evaluator's call: is the answer correct, with its score and details."""

    model_config = ConfigDict(frozen=True)

    correct: bool
    score: float | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class ReferenceFreeEvaluator(Evaluator[ReliabilitySample, FreeVerdict]):
    """A reference-free verdict on one (question, answer, retrieved documents) sample."""

    task: ClassVar[str] = "grammar/free"
    result_type: ClassVar[type[FreeVerdict]] = FreeVerdict
    declaration: ClassVar[Declaration] = Declaration({"correct": _CORRECT})

    def result_scores(self, result: FreeVerdict) -> list[Score]:
        """1 when the evaluator calls the answer correct, else 0, passed when correct (its own
        score, on a scale of the evaluator's choosing, stays in the verdict's ``score``)."""
        return [_CORRECT.score("correct", float(result.correct), passed=result.correct)]


class _Statements(BaseModel):
    statements: list[str]


class _Verdicts(BaseModel):
    verdicts: list[Literal[1, 0, -1]]


@dataclass
class RagasFact(ReferenceFreeEvaluator):
    """Claim-level faithfulness against the retrieved context: two judge calls per answer."""

    judge: Judge
    threshold: float = 1.0
    statements_prompt: str | Path | PromptTemplate = "grammar/ragas_statements"
    verify_prompt: str | Path | PromptTemplate = "grammar/ragas_verify"

    prompt_fields: ClassVar[dict[str, str]] = {"statements": "statements_prompt", "verify": "verify_prompt"}

    def prompts(self) -> dict[str, PromptTemplate]:
        return {"statements": override_template(self.statements_prompt, "grammar/ragas_statements"),
                "verify": override_template(self.verify_prompt, "grammar/ragas_verify")}

    async def aevaluate(self, sample: ReliabilitySample) -> FreeVerdict | Unscored:
        if not sample.documents:
            return Unscored(reason="no retrieved context to check the answer against", cause="invalid_input")
        prompts = self.prompts()
        split = await self.judge.ask(prompts["statements"].render(
            question=sample.question, answer=sample.answer), JsonFormat(_Statements))
        if isinstance(split.value, Unscored):
            return split.value
        statements = [s.strip() for s in split.value.statements if s.strip()]
        if not statements:
            return Unscored(reason="the answer asserts no checkable statement", cause="undefined",
                            raw=split.raw)
        check = await self.judge.ask(prompts["verify"].render(
            context=[d.text for d in sample.documents], statements=statements), JsonFormat(_Verdicts))
        if isinstance(check.value, Unscored):
            return check.value
        verdicts = check.value.verdicts
        if len(verdicts) != len(statements):
            return Unscored(reason=f"{len(verdicts)} verdicts for {len(statements)} statements",
                            cause="unparseable", raw=check.raw)
        faithfulness = sum(1 for v in verdicts if v == 1) / len(statements)
        return FreeVerdict(correct=faithfulness >= self.threshold, score=faithfulness,
                           detail={"statements": statements, "verdicts": list(verdicts)})


@dataclass
class SelfCheckQA(ReferenceFreeEvaluator):
    """Consistency of the RAG LM with itself. ``generator`` is the system's own LM (answering from
    the retrieved passages with ``answer_prompt``); ``checker`` compares two answers."""

    generator: Judge
    checker: Judge
    samples: int = 4
    temperature: float = 1.0
    answer_prompt: str | Path | PromptTemplate = "pipelines/answer"
    compare_prompt: str | Path | PromptTemplate = "grammar/selfcheck_compare"
    regenerate_main: bool = False

    prompt_fields: ClassVar[dict[str, str]] = {"answer": "answer_prompt", "compare": "compare_prompt"}

    def prompts(self) -> dict[str, PromptTemplate]:
        return {"answer": override_template(self.answer_prompt, "pipelines/answer"),
                "compare": override_template(self.compare_prompt, "grammar/selfcheck_compare")}

    async def aevaluate(self, sample: ReliabilitySample) -> FreeVerdict | Unscored:
        prompts = self.prompts()
        prompt = prompts["answer"].render(
            question=sample.question, passages=[{"id": d.id, "text": d.text} for d in sample.documents])
        main = sample.answer
        if self.regenerate_main or not main.strip():
            first = await self.generator.ask(prompt, TextFormat(), params=GenerationParams(temperature=0.0))
            if isinstance(first.value, Unscored):
                return first.value
            main = first.value
        # Distinct seeds make each stochastic answer its own cache entry and, where the backend
        # honours seeds, reproducible.
        drawn = await gather_bounded(
            list(range(self.samples)),
            lambda k: self.generator.ask(prompt, TextFormat(),
                                         params=GenerationParams(temperature=self.temperature, seed=k)),
            concurrency=self.samples)
        texts: list[str] = []
        for d in drawn:
            if isinstance(d.value, Unscored):
                return d.value
            texts.append(d.value)
        compare = prompts["compare"]
        votes = await gather_bounded(
            texts, lambda t: self.checker.ask(compare.render(question=sample.question, answer=main, sample=t),
                                              BinaryFormat()), concurrency=self.samples)
        agree: list[int] = []
        for v in votes:
            if isinstance(v.value, Unscored):
                return v.value
            agree.append(int(v.value))
        return FreeVerdict(correct=all(agree), score=sum(agree) / len(agree),
                           detail={"samples": texts, "agree": agree})


@dataclass
class FunctionVerdict(ReferenceFreeEvaluator):
    """Any other reference-free verdict: ``fn(sample)`` returns a bool, a score (compared with
    ``threshold``), Unscored, or an awaitable of one of these. ``fn`` raising on one sample is
    that sample's ``Unscored`` in a batch, cause ``evaluator_error``, as for every evaluator (the
    run layer's rule: it is not the model failing)."""

    fn: Callable[[ReliabilitySample], Any]
    threshold: float = 0.5

    async def aevaluate(self, sample: ReliabilitySample) -> FreeVerdict | Unscored:
        value = self.fn(sample)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, (Unscored, FreeVerdict)):
            return value
        if isinstance(value, bool):
            return FreeVerdict(correct=value)
        if isinstance(value, (int, float)):
            return FreeVerdict(correct=float(value) >= self.threshold, score=float(value))
        return Unscored(reason=f"verdict function returned {type(value).__name__}, not a bool or score",
                        cause="invalid_input")


class EvaluatorReport(BaseModel):
    name: str
    reliability: Reliability
    unscored: int
    verdicts: dict[str, bool | None] = Field(default_factory=dict)


async def aassess_reliability(evaluators: Mapping[str, ReferenceFreeEvaluator],
                              samples: Sequence[ReliabilitySample], *, store: RunStore | None = None,
                              run_id: str | None = None, concurrency: int = 8,
                              executor: Executor | None = None) -> dict[str, EvaluatorReport]:
    """Run every evaluator on every sample through :func:`langrag_eval.run.aevaluate` (resumable
    when a store and run id are given, judged by ``executor``; each evaluator's judgments stored
    under ``grammar/free/<name>``) and score its verdicts against ``sample.correct``."""
    named = {name: FunctionEvaluator(evaluator.aevaluate, f"grammar/free/{name}", FreeVerdict,
                                     key_of=lambda s: s.id, description=f"reference-free: {name}",
                                     scorer=evaluator)
             for name, evaluator in evaluators.items()}
    if not named:
        return {}
    run = await aevaluate(samples, named, store=store, run_id=run_id, concurrency=concurrency,
                          executor=executor)
    truth = [s.correct for s in samples]
    out: dict[str, EvaluatorReport] = {}
    for name, results in run.results.items():
        predicted = [None if isinstance(r, Unscored) else r.correct for r in results]
        out[name] = EvaluatorReport(
            name=name, reliability=binary_reliability(truth, predicted),
            unscored=sum(1 for r in results if isinstance(r, Unscored)),
            verdicts={s.id: p for s, p in zip(samples, predicted)})
    return out


assess_reliability = synchronous(aassess_reliability)
