"""Meta-evaluation (the paper's section 5, Table 1 and Appendix C): check THELMA on your own domain
before trusting it. From good samples, build one contrastive negative per metric and report each
metric's pairwise agreement: the share of pairs in which it scores the original above its negative.

Negatives, per metric (Appendix C):

- ``rp``: extraneous facts added to the response (judge rewrite);
- ``rqc``: one essential piece removed from the response (judge rewrite);
- ``sd``: the response's facts rephrased and repeated (judge rewrite; ``sd_mode="repeat"`` repeats
  its sentences verbatim instead, with no model call);
- ``sp1``: irrelevant sources, drawn from other samples, added to the source set (deterministic);
- ``sp2``: sources polluted with irrelevant facts from other samples' sources (deterministic);
- ``sqc``: the facts that answer the query removed from every source (judge rewrite per source);
- ``gr``: one fact of the response altered against the sources (judge rewrite).

A tie counts as a disagreement (the metric failed to prefer the original); a pair whose negative
could not be built, or where either score is Unscored, is reported as unscored and left out.

>>> from langrag_eval.runtime import Judge
>>> from .evaluator import Thelma
>>> from langrag_eval import Sample
>>> from langrag_eval.testing import ThelmaScript
>>> script = ThelmaScript(essential=lambda key: "blue" not in key[1],
...                       rewrite=lambda kind, text: text + " The hall is blue.")
>>> meta = MetaEvaluation(Thelma(Judge(script.model())), metrics=("rp",))
>>> report = meta.run([Sample(question="Who?", contexts=["Ada."], answer="Ada did it.")])
>>> report.rows[0].agreement
1.0
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..prompting.templates import PromptTemplate
from ..results import Unscored
from ..evaluator import FunctionEvaluator
from ..run.evaluation import Executor, aevaluate
from ..runtime import gather_bounded, synchronous
from ..verdicts.formats import TagFormat
from ..errors import ConfigError
from .aggregate import METRICS
from .decompose import load_task_prompt, split_sentences
from .evaluator import Thelma
from ..types import Sample

__all__ = [
    "MetaEvaluation",
    "MetaReport",
    "MetaRow",
    "PairOutcome",
    "add_sources",
    "pollute_sources",
    "repeat_sentences",
]

PairVerdict = Literal["agree", "tie", "disagree", "unscored"]  # does the metric rank the original higher?


class PairOutcome(BaseModel):
    """One (original, negative) pair for one metric."""

    model_config = ConfigDict(frozen=True)

    sample: str
    metric: str
    outcome: PairVerdict
    original: float | None = None
    negative: float | None = None
    reason: str | None = None
    negative_sample: Sample | None = None


class MetaRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    metric: str
    pairs: int
    agree: int
    ties: int
    disagree: int
    unscored: int
    agreement: float | None


class MetaReport(BaseModel):
    """Per-metric agreement rows and every pair behind them."""

    model_config = ConfigDict(frozen=True)

    rows: list[MetaRow]
    pairs: list[PairOutcome]

    def agreement(self) -> dict[str, float | None]:
        return {r.metric: r.agreement for r in self.rows}

    def table(self) -> str:
        """A plain-text agreement table, one row per metric."""
        lines = [f"{'metric':<7}{'pairs':>7}{'agree':>7}{'ties':>6}{'worse':>7}{'unscored':>10}{'agreement':>11}"]
        for r in self.rows:
            value = "-" if r.agreement is None else f"{r.agreement:.2f}"
            lines.append(f"{r.metric:<7}{r.pairs:>7}{r.agree:>7}{r.ties:>6}{r.disagree:>7}{r.unscored:>10}"
                         f"{value:>11}")
        return "\n".join(lines)


# ---------------------------------------------------------------- deterministic perturbations


def repeat_sentences(response: str) -> str:
    """The response followed by a verbatim repeat of each of its sentences."""
    sentences = split_sentences(response)
    return " ".join(sentences + sentences)


def add_sources(sources: Sequence[str], pool: Sequence[str], rng: random.Random, k: int = 2) -> list[str]:
    """The sources with up to ``k`` sources from ``pool`` (other samples') added at random places."""
    out = list(sources)
    for extra in rng.sample(list(pool), min(k, len(pool))):
        out.insert(rng.randint(0, len(out)), extra)
    return out


def pollute_sources(sources: Sequence[str], pool: Sequence[str], rng: random.Random, k: int = 2) -> list[str]:
    """Every other source (the first included) with ``k`` sentences from ``pool`` appended."""
    sentences = [s for text in pool for s in split_sentences(text)]
    out = list(sources)
    for i in range(0, len(out), 2):
        out[i] = " ".join([out[i], *rng.sample(sentences, min(k, len(sentences)))])
    return out


# ---------------------------------------------------------------- the run


@dataclass
class MetaEvaluation:
    """Builds negatives with the judge of ``thelma`` and scores each pair with the same settings."""

    thelma: Thelma
    metrics: Sequence[str] = METRICS
    sd_mode: Literal["rephrase", "repeat"] = "rephrase"
    seed: int = 0
    prompts: Mapping[str, str | Path | PromptTemplate] = field(default_factory=dict)
    concurrency: int = 4

    def __post_init__(self) -> None:
        # the contrastive negatives are the paper's, one recipe per metric of its seven
        others = [m for m in self.metrics if m not in METRICS]
        if others:
            raise ConfigError(f"meta-evaluation builds negatives for {', '.join(METRICS)} only, "
                              f"not {', '.join(others)}")

    async def arun(self, samples: Sequence[Sample], *, executor: Executor | None = None) -> MetaReport:
        """Every sample against its negatives, one per metric. Both steps go through
        :func:`langrag_eval.run.aevaluate` on ``executor`` (default: this process), at most
        ``concurrency`` items at once: the samples scored by THELMA, then each (sample, metric)
        pair: its negative built and scored. A pair whose step raised is unscored, with the reason."""
        samples = list(samples)
        originals = (await aevaluate(samples, {"thelma": self.thelma}, concurrency=self.concurrency,
                                     executor=executor))["thelma"]
        jobs = [(i, m) for i in range(len(samples)) for m in self.metrics]

        async def pair(job: tuple[int, str]) -> PairOutcome:
            i, metric = job
            sample, original = samples[i], originals[i]
            pool = [s for j, other in enumerate(samples) if j != i for s in other.context_texts() if s.strip()]
            key = sample.key()
            negative = await self.anegative(metric, sample, pool, random.Random(f"{self.seed}|{key}|{metric}"))
            if isinstance(negative, Unscored):
                return PairOutcome(sample=key, metric=metric, outcome="unscored", reason=negative.reason)
            single = Thelma(self.thelma.judge, metrics=(metric,), batched=self.thelma.batched,
                            embedder=self.thelma.embedder, sd_threshold=self.thelma.sd_threshold,
                            templates=self.thelma.templates)
            a = None if isinstance(original, Unscored) else original.score(metric)
            b = (await single.aevaluate(negative)).score(metric)
            if a is None or b is None:
                why = "original" if a is None else "negative"
                return PairOutcome(sample=key, metric=metric, outcome="unscored", original=a, negative=b,
                                   reason=f"the {why} was not scored", negative_sample=negative)
            outcome: PairVerdict = "agree" if a > b else "tie" if a == b else "disagree"
            return PairOutcome(sample=key, metric=metric, outcome=outcome, original=a, negative=b,
                               negative_sample=negative)

        step = FunctionEvaluator(pair, "thelma/meta", PairOutcome, description="meta-evaluation pairs",
                                 key_of=lambda job: json.dumps([samples[job[0]].key(), job[1]]))
        judged = (await aevaluate(jobs, {"pairs": step}, concurrency=self.concurrency,
                                  executor=executor))["pairs"]
        pairs = [PairOutcome(sample=samples[i].key(), metric=m, outcome="unscored", reason=p.reason)
                 if isinstance(p, Unscored) else p for (i, m), p in zip(jobs, judged)]
        return MetaReport(rows=[_row(m, [p for p in pairs if p.metric == m]) for m in self.metrics], pairs=pairs)

    run = synchronous(arun)

    async def _rewrite(self, task: str, **values: object) -> str | Unscored:
        prompt = load_task_prompt(task, self.prompts).render(**values)
        answer = await self.thelma.judge.ask(prompt, TagFormat())
        return answer.value

    async def anegative(self, metric: str, sample: Sample, pool: Sequence[str],
                        rng: random.Random) -> Sample | Unscored:
        """The contrastive negative of ``sample`` for ``metric``, or why it could not be built."""
        sources, error = sample.context_texts(), sample.invalid_contexts
        response = (sample.answer or "").strip()
        if error:
            return Unscored(reason=error, cause="invalid_input")
        needs_response = metric in ("rp", "rqc", "sd", "gr")
        if needs_response and not response:
            return Unscored(reason="empty response: nothing to perturb", cause="invalid_input")
        if not needs_response and not sources:
            return Unscored(reason="no sources: nothing to perturb", cause="invalid_input")
        if metric in ("sp1", "sp2") and not pool:
            return Unscored(reason="no other sample to draw irrelevant sources from", cause="invalid_input")
        new_sources: list[str] | None = None
        new_response: str | Unscored | None = None
        if metric == "sp1":
            new_sources = add_sources(sources, pool, rng)
        elif metric == "sp2":
            new_sources = pollute_sources(sources, pool, rng)
        elif metric == "sd" and self.sd_mode == "repeat":
            new_response = repeat_sentences(response)
        elif metric == "sd":
            new_response = await self._rewrite("perturb_rephrase_repeat", response=response)
        elif metric == "rp":
            new_response = await self._rewrite("perturb_add_extraneous", query=sample.question, response=response)
        elif metric == "rqc":
            new_response = await self._rewrite("perturb_remove_essential", query=sample.question, response=response)
        elif metric == "gr":
            new_response = await self._rewrite("perturb_alter_fact", response=response, sources=sources)
        elif metric == "sqc":
            rewritten = await gather_bounded(
                sources, lambda s: self._rewrite("perturb_remove_source_facts", query=sample.question, source=s),
                concurrency=max(1, len(sources)))
            failed = [r for r in rewritten if isinstance(r, Unscored)]
            if failed:
                return failed[0]
            new_sources = [str(r) for r in rewritten]
        if isinstance(new_response, Unscored):
            return new_response
        changed = type(sample).model_validate({
            **sample.model_dump(), "id": f"{sample.key()}~{metric}",
            "contexts": new_sources if new_sources is not None else sample.contexts,
            "answer": new_response if new_response is not None else sample.answer})
        if changed.context_texts() == sample.context_texts() and changed.answer == sample.answer:
            return Unscored(reason="the perturbation left the sample unchanged", cause="invalid_input")
        return changed

    def negative(self, metric: str, sample: Sample, pool: Sequence[str],
                 rng: random.Random) -> Sample | Unscored:
        """:meth:`anegative` from synchronous code."""
        return synchronous(self.anegative)(metric, sample, pool, rng)


def _row(metric: str, pairs: list[PairOutcome]) -> MetaRow:
    count = {o: sum(p.outcome == o for p in pairs) for o in ("agree", "tie", "disagree", "unscored")}
    judged = count["agree"] + count["tie"] + count["disagree"]
    return MetaRow(metric=metric, pairs=len(pairs), agree=count["agree"], ties=count["tie"],
                   disagree=count["disagree"], unscored=count["unscored"],
                   agreement=count["agree"] / judged if judged else None)
