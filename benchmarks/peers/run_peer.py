"""The peers' side of benchmarks/peers.py, run with the peers' own interpreter (benchmarks/.peers-venv).

    .peers-venv/bin/python benchmarks/peers/run_peer.py SPEC.json OUT.json

SPEC names one workload and framework (``faithfulness`` with ``ragas`` or ``llamaindex``, ``grading``
with ``llamaindex``, ``tournament`` with ``ragelo``), the sample count, concurrency, latency and data
file. The scripted judge of scripted_judge.py is plugged in through each framework's own LLM
interface: a ``BaseRagasLLM`` subclass, a LlamaIndex ``CustomLLM`` (with a real async ``acomplete``:
the base class runs the sync method inside the event loop) and a RAGElo ``BaseLLMProvider``. Each
workload runs twice in one process, cold and warm (the warm run is the same call again, with the
framework's defaults: whatever it caches by itself is used, nothing is switched on).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import tempfile
import time
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")   # no analytics calls from ragas
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripted_judge import (
    AGENTS,
    Meter,
    Script,
    faithfulness_samples,
    grading_samples,
    tournament_answers,
)


def _timed(fn) -> tuple[Any, float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - start, time.process_time() - cpu


def _run(meter: Meter, wall: float, cpu: float, **extra: Any) -> dict[str, Any]:
    return {"wall": wall, "cpu": cpu, **meter.as_dict(), **extra}


def _split(samples: list[dict[str, Any]], scores: list[float | None]) -> dict[str, Any]:
    """Mean score on right and on hallucinated answers, and how many came back without a score."""
    bad = [s for s in scores if s is None or (isinstance(s, float) and math.isnan(s))]
    right = [s for x, s in zip(samples, scores) if x["right"] and s not in bad]
    wrong = [s for x, s in zip(samples, scores) if not x["right"] and s not in bad]
    return {"mean_right": sum(right) / len(right) if right else None,
            "mean_hallucinated": sum(wrong) / len(wrong) if wrong else None, "unscored": len(bad)}


# ------------------------------------------------------------------ ragas

def ragas_faithfulness(spec: dict[str, Any]) -> dict[str, Any]:
    from dataclasses import dataclass, field

    from langchain_core.outputs import Generation, LLMResult
    from ragas import EvaluationDataset, SingleTurnSample, evaluate
    from ragas.llms import BaseRagasLLM
    from ragas.metrics import Faithfulness
    from ragas.run_config import RunConfig

    @dataclass
    class ScriptedRagasLLM(BaseRagasLLM):
        script: Any = field(default=None, repr=False)
        meter: Any = field(default=None, repr=False)
        latency: float = 0.1

        def _answer(self, prompt: Any) -> LLMResult:
            text = prompt.to_string()
            kind, reply = self.script.reply(text)
            self.meter.done(kind, text, reply)
            return LLMResult(generations=[[Generation(text=reply)]])

        def generate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None):
            self.meter.start()
            time.sleep(self.latency)
            return self._answer(prompt)

        async def agenerate_text(self, prompt, n=1, temperature=0.01, stop=None, callbacks=None):
            self.meter.start()
            await asyncio.sleep(self.latency)
            return self._answer(prompt)

        def is_finished(self, response: LLMResult) -> bool:
            return True

    samples = faithfulness_samples(Path(spec["data"]), spec["n"])
    script = Script.for_faithfulness(samples)
    dataset = EvaluationDataset(samples=[
        SingleTurnSample(user_input=s["question"], response=s["answer"], retrieved_contexts=s["contexts"])
        for s in samples])
    runs = []
    for _ in range(2):
        meter = Meter()
        llm = ScriptedRagasLLM(script=script, meter=meter, latency=spec["latency"])
        result, wall, cpu = _timed(partial(evaluate, dataset, metrics=[Faithfulness()], llm=llm,
                                           show_progress=False,
                                           run_config=RunConfig(max_workers=spec["concurrency"])))
        scores = [row["faithfulness"] for row in result.scores]
        runs.append(_run(meter, wall, cpu, scores=_split(samples, scores)))
    return {"framework": f"ragas {version('ragas')}", "runs": runs,
            "concurrency": "RunConfig(max_workers=C): samples in flight (each sample's calls are sequential)",
            "cache": "none by default; opt-in LLM cache (BaseRagasLLM(cache=DiskCacheBackend()))"}


# ------------------------------------------------------------------ LlamaIndex

def _llama_llm(script: Script, meter: Meter, latency: float):
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback

    class ScriptedLlamaLLM(CustomLLM):
        latency: float = 0.1

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="scripted", context_window=32768, num_output=256)

        def _answer(self, prompt: str) -> CompletionResponse:
            kind, reply = script.reply(prompt)
            meter.done(kind, prompt, reply)
            return CompletionResponse(text=reply)

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            meter.start()
            time.sleep(self.latency)
            return self._answer(prompt)

        @llm_completion_callback()
        async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            meter.start()
            await asyncio.sleep(self.latency)
            return self._answer(prompt)

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
            response = self.complete(prompt, formatted=formatted)
            yield CompletionResponse(text=response.text, delta=response.text)

    return ScriptedLlamaLLM(latency=latency)


def _llama_batch(spec: dict[str, Any], make_evaluator, script: Script, samples, **columns) -> dict[str, Any]:
    from llama_index.core.evaluation import BatchEvalRunner

    runs = []
    for _ in range(2):
        meter = Meter()
        evaluator = make_evaluator(_llama_llm(script, meter, spec["latency"]))
        # the runner's semaphore belongs to one event loop: a new runner per asyncio.run
        runner = BatchEvalRunner({"e": evaluator}, workers=spec["concurrency"], show_progress=False)
        out, wall, cpu = _timed(partial(asyncio.run, runner.aevaluate_response_strs(**columns)))
        runs.append(_run(meter, wall, cpu, scores=_split(samples, [r.score for r in out["e"]]),
                         passing=sum(bool(r.passing) for r in out["e"])))
    return {"framework": f"llama-index-core {version('llama-index-core')}", "runs": runs,
            "concurrency": "BatchEvalRunner(workers=C): evaluations in flight",
            "cache": "none (no evaluation or LLM cache in llama-index-core)"}


def llamaindex_faithfulness(spec: dict[str, Any]) -> dict[str, Any]:
    from llama_index.core.evaluation import FaithfulnessEvaluator

    samples = faithfulness_samples(Path(spec["data"]), spec["n"])
    return _llama_batch(spec, lambda llm: FaithfulnessEvaluator(llm=llm), Script.for_faithfulness(samples),
                        samples, queries=[s["question"] for s in samples],
                        response_strs=[s["answer"] for s in samples],
                        contexts_list=[s["contexts"] for s in samples])


def llamaindex_grading(spec: dict[str, Any]) -> dict[str, Any]:
    from llama_index.core.evaluation import CorrectnessEvaluator

    samples = grading_samples(Path(spec["data"]), spec["n"])
    return _llama_batch(spec, lambda llm: CorrectnessEvaluator(llm=llm), Script.for_grading(samples),
                        samples, queries=[s["question"] for s in samples],
                        response_strs=[s["answer"] for s in samples],
                        reference=[s["label"] for s in samples])


# ------------------------------------------------------------------ RAGElo

def ragelo_tournament(spec: dict[str, Any]) -> dict[str, Any]:
    from ragelo import AgentAnswer, Experiment, get_agent_ranker, get_answer_evaluator
    from ragelo.llm_providers import BaseLLMProvider
    from ragelo.types.formats import LLMResponseType, LLMUsage

    script, latency = Script.for_tournament(), spec["latency"]

    class ScriptedProvider(BaseLLMProvider):
        def __init__(self, meter: Meter) -> None:
            super().__init__(None)
            self.meter = meter

        async def call_async(self, input, response_schema):
            parts = [input.system_prompt, input.user_message] + [m["content"] for m in input.messages or []]
            text = "\n".join(p for p in parts if p)
            self.meter.start()
            await asyncio.sleep(latency)
            kind, raw = script.reply(text)
            self.meter.done(kind, text, raw)
            return LLMResponseType(raw_answer=raw, parsed_answer=response_schema.model_validate_json(raw),
                                   usage=LLMUsage(input_tokens=len(text) // 4, output_tokens=len(raw) // 4))

    answers = tournament_answers(spec["n"])
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        save = str(Path(tmp) / "bench.json")

        def play(meter: Meter, fresh: bool) -> tuple[Any, Any]:
            experiment = Experiment("bench", save_path=save, rich_print=False)
            if fresh:
                for qid, query in dict.fromkeys((a["qid"], a["query"]) for a in answers):
                    experiment.add_query(query, query_id=qid)
                experiment.add_agent_answers([AgentAnswer(id=a["qid"], agent=a["agent"], text=a["answer"])
                                              for a in answers])
            evaluator = get_answer_evaluator("pairwise", llm_provider=ScriptedProvider(meter),
                                             n_processes=spec["concurrency"], use_progress_bar=False,
                                             rich_print=False)
            evaluator.evaluate_experiment(experiment)
            return experiment, get_agent_ranker("elo", show_results=False).run(experiment)

        for fresh in (True, False):
            meter = Meter()
            (experiment, elo), wall, cpu = _timed(partial(play, meter, fresh))
            games = [[q.qid, g.agent_a_answer.agent, g.agent_b_answer.agent, ev.winner]
                     for q in experiment for g in q.pairwise_games.values() for ev in g.evaluations.values()]
            ranking = sorted(AGENTS, key=lambda a: -elo.scores.get(a, 0.0))
            runs.append(_run(meter, wall, cpu, games=games, ranking=ranking,
                             ratings={a: elo.scores.get(a) for a in AGENTS}))
    return {"framework": f"ragelo {version('ragelo')}", "runs": runs,
            "concurrency": "n_processes=C: games in flight; a game's two orders are asked one after the other",
            "cache": "yes: an Experiment saved on disk keeps its evaluations and skips judged games on re-run"}


WORKLOADS = {("faithfulness", "ragas"): ragas_faithfulness,
             ("faithfulness", "llamaindex"): llamaindex_faithfulness,
             ("grading", "llamaindex"): llamaindex_grading,
             ("tournament", "ragelo"): ragelo_tournament}


def main(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    result = WORKLOADS[spec["workload"], spec["framework"]](spec)
    Path(out_path).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
