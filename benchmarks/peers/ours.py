"""Our side of benchmarks/peers.py, run in the project's interpreter: the same workloads as
run_peer.py, through langrag_eval's public API, with the benchmark's script behind the package's
scripted model (``langrag_eval.testing.ScriptedModel``).

Every workload runs cold against a fresh SQLite run store, then warm: the store is opened again
and the same run is started with the same settings, as a user re-running a command would.

>>> import asyncio
>>> from scripted_judge import HALUEVAL
>>> out = asyncio.run(faithfulness({"n": 2, "concurrency": 2, "latency": 0.0, "data": str(HALUEVAL)}))
>>> [r["calls"] for r in out["runs"]], out["runs"][0]["scores"]["mean_hallucinated"]
([8, 0], 0.6666666666666666)
"""

from __future__ import annotations

import gc
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from scripted_judge import AGENTS, Meter, Script, faithfulness_samples, grading_samples, tournament_answers

from langrag_eval.grading import VragGrade, VragGrader
from langrag_eval.models import resolve_judge
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel
from langrag_eval.thelma import MetricScore, Thelma
from langrag_eval.tournament import GameRecord, TournamentConfig, TournamentData, arun_tournament
from langrag_eval.types import Sample

__all__ = ["faithfulness", "grading", "scripted_model", "tournament"]


def scripted_model(script: Script, meter: Meter, latency: float) -> ScriptedModel:
    """The benchmark's script as a langrag-eval ``ChatModel``: fixed latency, every reply metered."""
    def reply(prompt: str) -> str:
        kind, text = script.reply(prompt)
        meter.record(kind, prompt, text)
        return text

    return ScriptedModel(reply, model_id="scripted-bench", latency=latency)


Work = Callable[[Judge, RunStore, str], Awaitable[dict[str, Any]]]


async def _cold_and_warm(spec: dict[str, Any], script: Script, kind: str, work: Work) -> list[dict[str, Any]]:
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "runs.sqlite"
        for _ in range(spec.get("runs", 2)):
            meter = Meter()
            # spec["judge"] (openai:MODEL with OPENAI_BASE_URL set): the real client, metered by the
            # server and made before the clock starts, as a peer's client is
            model = (resolve_judge(spec["judge"]).model if spec.get("judge")
                     else scripted_model(script, meter, spec["latency"]))
            gc.collect()  # the set-up's garbage, before the clock, as run_peer_real does for the peers
            start, cpu = time.perf_counter(), time.process_time()
            store = RunStore(path)
            run_id = store.open_run(kind, {"n": spec["n"], "concurrency": spec["concurrency"]})
            judge = Judge(model, store=store, run_id=run_id, concurrency=spec["concurrency"])
            extra = await work(judge, store, run_id)
            meter.peak = getattr(model, "peak_concurrency", 0)
            store.close()
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            usage = judge.usage
            # the judge's own meter must agree with what the model saw
            assert spec.get("judge") or (usage.calls == meter.calls and usage.prompt_tokens == meter.prompt_tokens), (
                usage, meter)
            runs.append({"wall": wall, "cpu": cpu, **meter.as_dict(), "cached": usage.cached, **extra})
    return runs


def _split(samples: list[dict[str, Any]], scores: list[float | None]) -> dict[str, Any]:
    right = [s for x, s in zip(samples, scores) if x["right"] and s is not None]
    wrong = [s for x, s in zip(samples, scores) if not x["right"] and s is not None]
    return {"mean_right": sum(right) / len(right) if right else None,
            "mean_hallucinated": sum(wrong) / len(wrong) if wrong else None,
            "unscored": sum(s is None for s in scores)}


async def faithfulness(spec: dict[str, Any], *, batched: bool = False) -> dict[str, Any]:
    """THELMA groundedness (metric ``gr``), per claim (the paper's default) or batched."""
    raw = faithfulness_samples(Path(spec["data"]), spec["n"])
    samples = [Sample(id=s["id"], question=s["question"], contexts=s["contexts"], answer=s["answer"])
               for s in raw]

    async def work(judge: Judge, store: RunStore, run_id: str) -> dict[str, Any]:
        results = await Thelma(judge, metrics=("gr",), batched=batched).aevaluate_many(
            samples, store=store, run_id=run_id, concurrency=spec["concurrency"])
        scores = [m.score if isinstance(m := r.metrics["gr"], MetricScore) else None for r in results]
        return {"scores": _split(raw, scores)}

    kind = f"bench-thelma-{'batched' if batched else 'per-claim'}"
    return {"framework": f"langrag-eval THELMA gr ({'batched' if batched else 'per claim'})",
            "runs": await _cold_and_warm(spec, Script.for_faithfulness(raw), kind, work)}


async def grading(spec: dict[str, Any]) -> dict[str, Any]:
    """vRAG-Eval rubric grading of every answer against its label."""
    raw = grading_samples(Path(spec["data"]), spec["n"])
    samples = [Sample(id=s["id"], question=s["question"], answer=s["answer"], reference=s["label"])
               for s in raw]

    async def work(judge: Judge, store: RunStore, run_id: str) -> dict[str, Any]:
        grades = await VragGrader(judge).aevaluate_many(samples, run_id=run_id, concurrency=spec["concurrency"])
        scores = [float(g.score) if isinstance(g, VragGrade) else None for g in grades]
        return {"scores": _split(raw, scores), "passing": sum(isinstance(g, VragGrade) and g.accepted
                                                             for g in grades)}

    return {"framework": "langrag-eval VragGrader",
            "runs": await _cold_and_warm(spec, Script.for_grading(raw), "bench-vrag", work)}


async def tournament(spec: dict[str, Any]) -> dict[str, Any]:
    """Round-robin tournament (every pair on every query, both orders), default ranking settings."""
    data = TournamentData.from_records(tournament_answers(spec["n"]))

    async def work(judge: Judge, store: RunStore, run_id: str) -> dict[str, Any]:
        result = await arun_tournament(data, judge, TournamentConfig(schedule="all"), store=store,
                                      run_id=run_id, concurrency=spec["concurrency"])
        names = {"a": "A", "b": "B", "tie": "C"}
        games = [[g.qid, g.agent_a, g.agent_b, names[g.outcome]] for g in result.games
                 if isinstance(g, GameRecord)]
        ranking = result.summary["ranking"]
        return {"games": games, "ranking": [r["agent"] for r in ranking],
                "ratings": {r["agent"]: r["bt_rating"] for r in ranking},
                "elo": {r["agent"]: r["elo"] for r in ranking}}

    runs = await _cold_and_warm(spec, Script.for_tournament(), "bench-tournament", work)
    for run in runs:
        run["elo_ranking"] = sorted(AGENTS, key=lambda a: -run["elo"][a])
    return {"framework": "langrag-eval tournament", "runs": runs}
