"""InPars-style synthetic queries (RAGElo/RAG-Fusion section 4): several generator models each write
up to N questions about long passages, with real user questions as few-shot examples; the pool is
deduplicated and sampled per generator by quota. Every query keeps its provenance: the passage,
the generator's model id and the prompt.

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.synth.passages import Passage
>>> gen = Judge(ScriptedModel(['{"questions": ["Which office opened in 2012?"]}'], model_id="gen-a"))
>>> passages = [Passage(id="offices#1", doc_id="offices", text="The São Paulo office opened in 2012.", tokens=7)]
>>> result = QueryGenerator([gen], examples=["Where is HQ?"]).synthesize(passages)
>>> q = result.queries[0]
>>> (q.text, q.passage_id, q.generator, q.prompt)
('Which office opened in 2012?', 'offices#1', 'gen-a', 'synth/queries')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..models.embeddings import Embedder
from ..evaluator import FunctionEvaluator
from ..errors import ConfigError
from ..files.writing import atomic_write
from ..prompting.templates import load_prompt
from ..results import Unscored
from ..run.evaluation import Executor, aevaluate
from ..runtime import Judge, RunStore, synchronous
from ..verdicts.formats import JsonFormat
from .passages import Passage
from .pool import Duplicate, QuotaResult, drop_near_duplicates, sample_by_quota

__all__ = [
    "GeneratorStats",
    "QueryGenerator",
    "SynthReport",
    "SynthResult",
    "SyntheticQuery",
    "write_queries",
]


class SyntheticQuery(BaseModel):
    """One generated question with where it came from."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    passage_id: str
    doc_id: str
    generator: str
    prompt: str


class _Questions(BaseModel):
    questions: list[str]


class GeneratorStats(BaseModel):
    generated: int = 0
    duplicates: int = 0
    unique: int = 0
    quota: int | None = None
    selected: int = 0
    shortfall: int = 0
    failed_passages: int = 0


class SynthReport(BaseModel):
    passages: int
    pool_size: int                 # every question generated, duplicates included
    duplicates_dropped: int
    unique: int
    selected: int
    generators: dict[str, GeneratorStats]
    failures: list[str] = Field(default_factory=list)


class SynthResult(BaseModel):
    queries: list[SyntheticQuery]   # the sampled test set
    pool: list[SyntheticQuery]      # every generated query
    duplicates: list[Duplicate]
    report: SynthReport


@dataclass
class QueryGenerator:
    """Generator models (each a :class:`Judge`; their model ids must differ), the real user queries
    shown as examples, and how many questions to ask for per passage."""

    generators: Sequence[Judge]
    examples: Sequence[str]
    per_passage: int = 10
    prompt: str | Path = "synth/queries"
    concurrency: int = 8

    def __post_init__(self) -> None:
        ids = [g.model_id for g in self.generators]
        if not ids:
            raise ConfigError("at least one generator model is needed")
        if len(set(ids)) != len(ids):
            raise ConfigError(f"generator model ids must be distinct to keep provenance, got {ids}")
        if self.per_passage < 1:
            raise ConfigError("questions per passage must be at least 1")
        self._template = load_prompt(self.prompt)
        self._template.check_variables({"passage", "examples", "count"})
        self._prompt_name = str(self.prompt)

    async def generate(self, passages: Sequence[Passage], *, store: RunStore | None = None,
                       run_id: str | None = None, executor: Executor | None = None
                       ) -> tuple[list[SyntheticQuery], list[str]]:
        """Every generator on every passage, each (passage, generator) pair a sample of
        :func:`langrag_eval.run.aevaluate` (resumable with a store and run id, run on ``executor``):
        the pool in (passage, generator, position) order, and one message per failed call."""
        judges = {g.model_id: g for g in self.generators}
        jobs = [(p, gid) for p in passages for gid in judges]

        async def ask(job: tuple[Passage, str]) -> _Questions | Unscored:
            passage, gid = job
            rendered = self._template.render(passage=passage.text, examples=list(self.examples),
                                             count=self.per_passage)
            answer = await judges[gid].ask(rendered, JsonFormat(_Questions))
            return answer.value

        asking = FunctionEvaluator(ask, "synth/queries", _Questions, key_of=lambda j: f"{j[1]}|{j[0].id}",
                                   description="generating queries")
        results = (await aevaluate(jobs, {"queries": asking}, store=store, run_id=run_id,
                                   concurrency=self.concurrency, executor=executor))["queries"]
        pool: list[SyntheticQuery] = []
        failures: list[str] = []
        for (passage, gid), result in zip(jobs, results):
            if isinstance(result, Unscored):
                failures.append(f"{gid} on passage {passage.id}: {result.reason}")
                continue
            texts = [" ".join(t.split()) for t in result.questions if isinstance(t, str) and t.strip()]
            for n, text in enumerate(texts[: self.per_passage]):
                digest = hashlib.sha256(f"{gid}|{passage.id}|{n}".encode()).hexdigest()[:12]
                pool.append(SyntheticQuery(id=f"syn-{digest}", text=text, passage_id=passage.id,
                                           doc_id=passage.doc_id, generator=gid, prompt=self._prompt_name))
        return pool, failures

    async def asynthesize(self, passages: Sequence[Passage], *, quotas: Mapping[str, int | None] | None = None,
                          similarity: float = 0.8, embedder: Embedder | None = None,
                          embedding_threshold: float = 0.92, seed: int = 0, store: RunStore | None = None,
                          run_id: str | None = None, executor: Executor | None = None) -> SynthResult:
        """Generate, pool, drop near-duplicates, sample by quota, and report each step's counts."""
        pool, failures = await self.generate(passages, store=store, run_id=run_id, executor=executor)
        unique, duplicates = drop_near_duplicates(pool, threshold=similarity, embedder=embedder,
                                                  embedding_threshold=embedding_threshold)
        unknown = sorted(set(quotas or {}) - {g.model_id for g in self.generators})
        if unknown:
            raise ConfigError(f"quotas name unknown generator(s) {', '.join(unknown)}; generators: "
                              f"{', '.join(g.model_id for g in self.generators)}")
        selected, quota = sample_by_quota(unique, quotas, seed=seed)
        report = _report(len(passages), pool, duplicates, unique, selected, quota, failures,
                         [g.model_id for g in self.generators])
        return SynthResult(queries=selected, pool=pool, duplicates=duplicates, report=report)

    def synthesize(self, passages: Sequence[Passage], *, quotas: Mapping[str, int | None] | None = None,
                   similarity: float = 0.8, embedder: Embedder | None = None,
                   embedding_threshold: float = 0.92, seed: int = 0, store: RunStore | None = None,
                   run_id: str | None = None, executor: Executor | None = None) -> SynthResult:
        """:meth:`asynthesize` from synchronous code."""
        return synchronous(self.asynthesize)(passages, quotas=quotas, similarity=similarity, embedder=embedder,
                                             embedding_threshold=embedding_threshold, seed=seed, store=store,
                                             run_id=run_id, executor=executor)


def _report(passages: int, pool: list[SyntheticQuery], duplicates: list[Duplicate],
            unique: list[SyntheticQuery], selected: list[SyntheticQuery], quota: QuotaResult,
            failures: list[str], generators: list[str]) -> SynthReport:
    stats = {g: GeneratorStats() for g in generators}
    for q in pool:
        stats[q.generator].generated += 1
    for d in duplicates:
        stats[d.generator].duplicates += 1
    for q in unique:
        stats[q.generator].unique += 1
    for q in selected:
        stats[q.generator].selected += 1
    for g, s in stats.items():
        s.quota = quota.quotas.get(g)
        s.shortfall = quota.shortfall.get(g, 0)
        s.failed_passages = sum(1 for f in failures if f.startswith(f"{g} on passage "))
    return SynthReport(passages=passages, pool_size=len(pool), duplicates_dropped=len(duplicates),
                       unique=len(unique), selected=len(selected), generators=stats, failures=failures)


def write_queries(path: str | Path, queries: Sequence[SyntheticQuery]) -> Path:
    """JSONL the pipelines read as queries (``qid``, ``query``) with the provenance fields beside."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(target) as f:
        for q in queries:
            f.write(json.dumps({"qid": q.id, "query": q.text, "passage_id": q.passage_id,
                                "doc_id": q.doc_id, "generator": q.generator, "prompt": q.prompt},
                               ensure_ascii=False) + "\n")
    return target
