"""The quickstart: every capability once, end to end, on a corpus shipped with the package.

A small knowledge base of an invented bike-sharing service (16 documents) and eight questions with
reference answers are indexed in the embedded backend; the RAG-Fusion paper's six agents (RAG and
RAG-Fusion x BM25, KNN, hybrid RRF) answer the questions; vRAG-Eval grades every answer against its
reference; THELMA scores every (question, passages, answer) without references; a RAGElo tournament
ranks the agents; the judge itself is audited on a small stratified sample of human-labelled items
(its card goes into the report); and the HTML report is written. Everything lands in one run of the run store, so
a second invocation with the same settings resumes (and costs zero model calls once finished).

>>> len(load_questions()), len(load_corpus())
(8, 16)
"""

from __future__ import annotations

import json
import textwrap
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from ..audit import JudgeCard, audit_run_id, run_audit
from ..errors import DataError
from ..files.tables import jsonl_objects
from ..models.embeddings import Embedder, default_embedder
from ..grading import VragGrader
from ..pipelines import AgentAnswer, Query, answer_record, run_agents, six_agents, write_answers
from ..report import write_report
from ..report.items import put_item_contents
from ..run.evaluation import evaluate, record_run
from ..retrieval import EmbeddedBackend
from ..retrieval.chunking import Source
from ..retrieval.ingest import ingest
from ..runtime import Judge, RunStore, run_id_for
from ..thelma import Thelma
from ..tournament import TournamentConfig, TournamentData, run_tournament

__all__ = ["QuickstartSettings", "QuickstartResult", "run_quickstart", "load_corpus", "load_questions"]


def _data(name: str) -> list[dict[str, Any]]:
    text = resources.files(__name__).joinpath("data", name).read_text(encoding="utf-8")
    # JSON lines end at line feeds only: str.splitlines would also cut a record at U+2028
    records = []
    for _, obj in jsonl_objects(name, text):
        if isinstance(obj, DataError):
            raise obj
        records.append(obj)
    return records


def load_corpus() -> list[dict[str, Any]]:
    """The shipped corpus: ``{"id", "text", "metadata"}`` per document."""
    return _data("corpus.jsonl")


def load_questions() -> list[dict[str, Any]]:
    """The shipped questions: ``{"id", "question", "reference"}``."""
    return _data("questions.jsonl")


@dataclass(frozen=True)
class QuickstartSettings:
    """What the quickstart runs. ``questions`` caps how many shipped questions are used; ``k`` is
    passages per answer; ``games`` pairwise games per query (each judged in both orders);
    ``thelma_agents`` limits THELMA to some agents' answers (None: all six)."""

    questions: int = 8
    k: int = 3
    variations: int = 4
    games: int = 5
    tournaments: int = 500
    answer_tokens: int = 160
    thelma_agents: tuple[str, ...] | None = None
    audit: int | None = 20     # items per battery of the judge audit; None skips it

    @classmethod
    def small(cls) -> "QuickstartSettings":
        """The profile for the offline 270M judge: every step runs, on fewer items, in minutes."""
        return cls(questions=3, k=2, variations=2, games=2, answer_tokens=48,
                   thelma_agents=("rag-hybrid", "fusion-hybrid"), audit=3)

    def as_config(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


@dataclass
class QuickstartResult:
    run_id: str
    report: Path
    answers: Path
    seconds: float
    lines: list[str] = field(default_factory=list)
    card: JudgeCard | None = None   # the judge audit's card, when the settings ask for one


def _index(embedder: Embedder) -> EmbeddedBackend:
    backend = EmbeddedBackend()
    sources = [Source(id=d["id"], text=d["text"], metadata=d.get("metadata", {})) for d in load_corpus()]
    ingest(backend, sources, embedder=embedder)
    return backend


def run_quickstart(judge: Judge, store: RunStore, out_dir: str | Path, *,
                   settings: QuickstartSettings = QuickstartSettings(), run_id: str | None = None,
                   embedder: Embedder | None = None, warning: str | None = None,
                   progress: Callable[[str], None] = lambda line: None) -> QuickstartResult:
    """Run every step; ``progress`` receives one line per step. Returns where the report is."""
    start = time.monotonic()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    questions = load_questions()[:settings.questions]
    config = {**settings.as_config(), "judge": judge.model_id}
    run_id = store.open_run("quickstart", config, run_id or run_id_for("quickstart", config),
                            judge=judge.model_id)
    record_run(store, run_id, {"settings": {
        "corpus": f"shipped bike-sharing knowledge base ({len(load_corpus())} documents)",
        "questions": len(questions), "agents": "RAG and RAG-Fusion x BM25, KNN, hybrid (RRF, k=60)",
        "passages per answer": settings.k, "query variations": settings.variations,
        "games per query": f"{settings.games} (each judged in both orders)",
        "THELMA on": ", ".join(settings.thelma_agents) if settings.thelma_agents else "all six agents",
        "judge and generator": judge.model_id, **({"warning": warning} if warning else {})}})
    judge = judge.for_run(run_id)
    embedder = embedder or default_embedder()

    progress(f"indexing {len(load_corpus())} documents (BM25 + {embedder.model_id})")
    backend = _index(embedder)
    # answers stay short: a few sentences from a handful of passages
    generator = judge.with_params(max_tokens=settings.answer_tokens)
    agents = six_agents(backend, embedder, generator, settings.k, n_variations=settings.variations)
    queries = [Query(qid=q["id"], query=q["question"]) for q in questions]
    progress(f"running 6 agents on {len(queries)} questions")
    runs = run_agents(agents, queries, store=store, run_id=run_id, concurrency=judge.concurrency,
                      description="agents")
    answers = [r.result for r in runs if isinstance(r.result, AgentAnswer)]
    answers_path = out / "answers.jsonl"
    write_answers(answers_path, answers)

    reference = {q["id"]: q["reference"] for q in questions}
    samples = [a.model_copy(update={"id": f"{a.agent}/{a.id}", "reference": reference[a.id]}) for a in answers]
    put_item_contents(store, run_id, [{"id": s.id, "question": s.question, "answer": s.answer,
                                       "contexts": s.context_texts(), "reference": s.reference, "agent": a.agent}
                                      for s, a in zip(samples, answers)])
    progress(f"grading {len(samples)} answers with vRAG-Eval")
    grader = VragGrader(judge)
    grades = evaluate(samples, {"vrag": grader}, run_id=run_id)["vrag"]
    vrag = grader.summarize(grades, ids=[s.id for s in samples], subjects=[a.agent for a in answers]).details
    vrag["group_by"] = "agent"
    record_run(store, run_id, {"vrag": vrag})

    scored = [s for s, a in zip(samples, answers)
              if settings.thelma_agents is None or a.agent in settings.thelma_agents]
    progress(f"scoring {len(scored)} answers with THELMA (batched matching)")
    thelma = Thelma(judge, batched=True, embedder=embedder)
    thelma_results = evaluate(scored, {"thelma": thelma}, store=store, run_id=run_id,
                              concurrency=judge.concurrency)["thelma"]
    thelma_summary = {**thelma.summarize(thelma_results).details, "samples": [
        {"id": r.id, "scores": r.score_values(),
         "unscored": {m: {"cause": u.cause, "reason": u.reason} for m, u in r.unscored().items()}}
        for r in thelma_results]}
    record_run(store, run_id, {"thelma": thelma_summary})

    progress("playing the tournament between the six agents")
    data = TournamentData.from_records(answer_record(a) for a in answers)
    tour = run_tournament(data, judge, TournamentConfig(
        schedule="sample", n_games_per_query=settings.games, tournaments=settings.tournaments),
        store=store, run_id=run_id, concurrency=judge.concurrency)

    card = None
    if settings.audit:
        # an audit run of its own, the one `langrag-eval judge audit --max-items N --temperature 0` makes,
        # so its calls and usage stay apart and every later report by this judge finds its card
        audit_id, _ = audit_run_id(judge.model_id, max_items=settings.audit, temperature=judge.params.temperature)
        progress(f"auditing the judge on {settings.audit} human-labelled items per battery")
        card = run_audit(judge, run_id=audit_id, max_items=settings.audit,
                              temperature=judge.params.temperature)

    report = write_report(store, run_id, out / "report.html")
    record_run(store, run_id, {}, finished={"answers": len(answers), "report": str(report)})
    seconds = time.monotonic() - start
    return QuickstartResult(run_id=run_id, report=report, answers=answers_path, seconds=seconds,
                            lines=_summary_lines(vrag, thelma_summary, tour.summary, store.usage(run_id),
                                                 len(answers), len(runs), _causes(tour.games)), card=card)


def _causes(results: list[Any]) -> dict[str, int]:
    from ..results import Unscored
    causes: dict[str, int] = {}
    for r in results:
        if isinstance(r, Unscored):
            causes[r.cause] = causes.get(r.cause, 0) + 1
    return causes


def _counts(scored: int, total: int, causes: dict[str, int], unit: str = "") -> str:
    """``(scored 2 of 7; unscored 5: unparseable)``: how many of the figures stand on judgments,
    and why the others do not (the most frequent cause)."""
    if not total:
        return "(nothing to score)"
    of = f"{total} {unit}".strip()
    if scored == total:
        return f"(scored {scored} of {of})"
    top = max(sorted(causes), key=lambda c: causes[c]) if causes else "unknown"
    more = f" and {len(causes) - 1} other cause(s)" if len(causes) > 1 else ""
    return f"(scored {scored} of {of}; unscored {total - scored}: mostly {top}{more})"


def _ranking_line(ranking: list[dict[str, Any]], games: dict[str, Any], causes: dict[str, int]) -> str:
    """Best first with Bradley-Terry ratings, agents whose ratings print alike joined by "=" (a
    tie); says so plainly when the games separated nobody."""
    from ..tournament.summary import rank_labels

    counts = _counts(games.get("played", 0), games.get("scheduled", 0), causes, "games")
    flips = f"{games.get('position_flips', 0)} position flips"
    if not ranking:
        return f"no games scored {counts}"
    labels = rank_labels(ranking)
    if len(set(labels)) == 1:
        return f"no agent separated from the others, all tied at rank 1 ({flips}) {counts}"
    text = f"{ranking[0]['agent']} ({ranking[0]['bt_rating']:.0f})"
    for before, r, label in zip(labels, ranking[1:], labels[1:]):
        text += (" = " if label == before and label.startswith("=") else " > ") + f"{r['agent']} ({r['bt_rating']:.0f})"
    return f"{text}  [{flips}] {counts}"


def _summary_lines(vrag: dict[str, Any], thelma: dict[str, Any], tour: dict[str, Any],
                   usage: dict[str, Any], answered: int, attempted: int,
                   game_causes: dict[str, int] | None = None) -> list[str]:
    rates = [(name, s["accept_rate"]) for name, s in (vrag.get("subjects") or {}).items()
             if s.get("accept_rate") is not None]
    # a "best agent" only where the agents differ
    best = max(rates, key=lambda x: x[1]) if rates and len({r for _, r in rates}) > 1 else None
    ranking = tour.get("ranking") or []
    metrics = thelma.get("metrics") or {}
    means = ", ".join(f"{k.upper()} {m['mean']:.2f}" for k, m in metrics.items() if m.get("mean") is not None)
    key = "; ".join(f"{k.upper()} {m.get('name', k)}" for k, m in metrics.items() if m.get("mean") is not None)
    on_means = (thelma.get("diagnosis") or {}).get("on_means") or []
    # every metric of every answer: a mean over a few scored values says so
    thelma_causes: dict[str, int] = {}
    for m in metrics.values():
        for cause, n in (m.get("causes") or {}).items():
            thelma_causes[cause] = thelma_causes.get(cause, 0) + n
    thelma_scored = sum(m.get("n", 0) for m in metrics.values())
    thelma_total = thelma_scored + sum(m.get("unscored", 0) for m in metrics.values())
    vrag_unscored = (vrag.get("unscored") or {})
    total = usage["total"]
    failure = usage.get("top_failure")
    return [
        f"answers: {answered}/{attempted} produced by 6 agents",
        "vRAG-Eval: accept rate " + (f"{vrag['accept_rate']:.0%}" if vrag.get("accept_rate") is not None
                                     else "undefined (nothing scored)")
        + (f", best agent {best[0]} ({best[1]:.0%})" if best else "")
        + " " + _counts(vrag.get("scored", 0), vrag.get("items", 0), vrag_unscored.get("by_cause") or {}),
        f"THELMA means: {means or 'nothing scored'}"
        + (f"; fix first: {on_means[0]['component']}" if on_means else "")
        + (f" [{key}]" if key else "")
        + " " + _counts(thelma_scored, thelma_total, thelma_causes, "metric values"),
        "tournament: " + _ranking_line(ranking, tour.get("games") or {}, game_causes or {}),
        f"judge calls: {total['calls']} (+{total['cached']} from cache, {total['failed']} failed"
        + (f", mostly: {textwrap.shorten(str(failure['error']), 120, placeholder=' …')}" if failure and total["failed"] else "")
        + f"), {total['prompt_tokens']} prompt + {total['completion_tokens']} completion tokens",
    ]
