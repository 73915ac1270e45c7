"""The peers' side of benchmarks/peers_real.py: each peer through its own OpenAI client, as its users
run it, against the local server of benchmarks/fake_openai.py (OPENAI_BASE_URL and OPENAI_API_KEY
come from the environment; the key names the client to the server's counters).

    .peers-venv/bin/python benchmarks/peers/run_peer_real.py SPEC.json OUT.json

- ragas: ``Faithfulness()`` with ``LangchainLLMWrapper(ChatOpenAI(model=...))`` through ``evaluate``;
- LlamaIndex: ``CorrectnessEvaluator(llm=OpenAI(model=...))`` through ``BatchEvalRunner``;
- DeepEval: ``GEval`` with correctness criteria over input, actual and expected output, through
  ``deepeval.evaluate`` (async, ``max_concurrent`` = concurrency, no cache);
- ragas: ``AnswerCorrectness()`` through ``evaluate`` with the same ChatOpenAI, and LangChain's
  ``OpenAIEmbeddings`` for the answer-similarity part of the score (its default, ``ragas-correctness``),
  and the comparable subset (``ragas-correctness-llm``): ``weights=[1, 0]``, the LLM's factuality
  alone, one judged answer as ours, with no embedding requests;
- RAGElo: the ``pairwise`` answer evaluator with the ``openai`` LLM provider, then the Elo ranker.

Only the evaluation call is timed (wall and this process's CPU time); requests and tokens are the
server's. Everything a user builds once before evaluating is built before the clock, on every side
as on ours: the data, the metric or evaluator objects, and the OpenAI client itself (LlamaIndex
builds its ``AsyncOpenAI`` on first use: it is asked for it before the clock).
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripted_judge import AGENTS, faithfulness_samples, grading_samples, tournament_answers  # noqa: E402

# DeepEval's documented correctness criteria for GEval
GEVAL_CRITERIA = ("Determine whether the actual output is factually correct based on the expected output.")


def _timed(fn) -> tuple[Any, float, float]:
    # the set-up's garbage (imports, clients, data) is collected before the clock, on every side
    # (benchmarks/peers/ours.py does the same): otherwise the full collection it makes due lands in
    # the first requests of whichever side the allocation counters pick (0.13 s of CPU for our
    # process's heap, 0.27 s for ragas's, on the 2-core machine of the README)
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - start, time.process_time() - cpu


def _sdk() -> dict[str, str]:
    """The OpenAI SDK this side ran (the same on both sides: the benchmark compares tools, not SDKs)."""
    return {"sdk": f"openai {version('openai')}"}


def _split(samples: list[dict[str, Any]], scores: list[Any]) -> dict[str, Any]:
    ok = [(x, s) for x, s in zip(samples, scores) if s is not None and not (isinstance(s, float) and math.isnan(s))]
    right = [s for x, s in ok if x["right"]]
    wrong = [s for x, s in ok if not x["right"]]
    return {"mean_right": sum(right) / len(right) if right else None,
            "mean_hallucinated": sum(wrong) / len(wrong) if wrong else None,
            "unscored": len(samples) - len(ok)}


def ragas_faithfulness(spec: dict[str, Any]) -> dict[str, Any]:
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, SingleTurnSample, evaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import Faithfulness
    from ragas.run_config import RunConfig

    samples = faithfulness_samples(Path(spec["data"]), spec["n"])
    dataset = EvaluationDataset(samples=[
        SingleTurnSample(user_input=s["question"], response=s["answer"], retrieved_contexts=s["contexts"])
        for s in samples])
    llm = LangchainLLMWrapper(ChatOpenAI(model=spec["model"]))
    metric = Faithfulness()
    result, wall, cpu = _timed(lambda: evaluate(dataset, metrics=[metric], llm=llm, show_progress=False,
                                                run_config=RunConfig(max_workers=spec["concurrency"])))
    scores = [row["faithfulness"] for row in result.scores]
    return {"framework": f"ragas {version('ragas')} Faithfulness", "wall": wall, "cpu": cpu, **_sdk(),
            "scores": _split(samples, scores)}


def llamaindex_grading(spec: dict[str, Any]) -> dict[str, Any]:
    from llama_index.core.evaluation import BatchEvalRunner, CorrectnessEvaluator
    from llama_index.llms.openai import OpenAI

    samples = grading_samples(Path(spec["data"]), spec["n"])
    llm = OpenAI(model=spec["model"], api_base=os.environ["OPENAI_BASE_URL"])
    llm._get_aclient()  # built on first use otherwise: inside the clock, where ours is not
    runner = BatchEvalRunner({"e": CorrectnessEvaluator(llm=llm)}, workers=spec["concurrency"], show_progress=False)
    out, wall, cpu = _timed(lambda: asyncio.run(runner.aevaluate_response_strs(
        queries=[s["question"] for s in samples], response_strs=[s["answer"] for s in samples],
        reference=[s["label"] for s in samples])))
    return {"framework": f"llama-index-core {version('llama-index-core')} CorrectnessEvaluator",
            "wall": wall, "cpu": cpu, **_sdk(), "scores": _split(samples, [r.score for r in out["e"]])}


def deepeval_grading(spec: dict[str, Any]) -> dict[str, Any]:
    from deepeval import evaluate
    from deepeval.evaluate import AsyncConfig, CacheConfig, DisplayConfig
    from deepeval.metrics import GEval
    from deepeval.test_case import LLMTestCase, LLMTestCaseParams

    samples = grading_samples(Path(spec["data"]), spec["n"])
    cases = [LLMTestCase(input=s["question"], actual_output=s["answer"], expected_output=s["label"])
             for s in samples]
    correctness = GEval(name="Correctness", criteria=GEVAL_CRITERIA, model=spec["model"],
                        evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT,
                                           LLMTestCaseParams.EXPECTED_OUTPUT])
    out, wall, cpu = _timed(lambda: evaluate(
        cases, [correctness], async_config=AsyncConfig(max_concurrent=spec["concurrency"]),
        display_config=DisplayConfig(show_indicator=False, print_results=False),
        cache_config=CacheConfig(write_cache=False, use_cache=False)))
    by_input = {}
    for result in out.test_results:
        by_input[(result.input, result.actual_output)] = result.metrics_data[0].score
    scores = [by_input.get((s["question"], s["answer"])) for s in samples]
    return {"framework": f"deepeval {version('deepeval')} GEval (correctness)", "wall": wall, "cpu": cpu, **_sdk(),
            "scores": _split(samples, scores)}


def ragas_answer_correctness(spec: dict[str, Any], *, llm_only: bool = False) -> dict[str, Any]:
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas import EvaluationDataset, SingleTurnSample, evaluate
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import AnswerCorrectness
    from ragas.run_config import RunConfig

    samples = grading_samples(Path(spec["data"]), spec["n"])
    dataset = EvaluationDataset(samples=[
        SingleTurnSample(user_input=s["question"], response=s["answer"], reference=s["label"])
        for s in samples])
    llm = LangchainLLMWrapper(ChatOpenAI(model=spec["model"]))
    # the answer-similarity quarter of the score embeds both texts through the same server; without
    # check_embedding_ctx_length=False the client first downloads tiktoken's vocabulary
    embeddings = LangchainEmbeddingsWrapper(OpenAIEmbeddings(model="text-embedding-3-small",
                                                             check_embedding_ctx_length=False))
    # the default weighs factuality 0.75 and the answers' embedding similarity 0.25; [1, 0] is the
    # LLM judgment alone (ragas then makes no embedding request), the part comparable to ours
    metric = AnswerCorrectness(weights=[1.0, 0.0]) if llm_only else AnswerCorrectness()
    result, wall, cpu = _timed(lambda: evaluate(dataset, metrics=[metric], llm=llm,
                                                embeddings=embeddings, show_progress=False,
                                                run_config=RunConfig(max_workers=spec["concurrency"])))
    scores = [row["answer_correctness"] for row in result.scores]
    name = "AnswerCorrectness, factuality only" if llm_only else "AnswerCorrectness"
    return {"framework": f"ragas {version('ragas')} {name}", "wall": wall, "cpu": cpu, **_sdk(),
            "scores": _split(samples, scores)}


def ragelo_tournament(spec: dict[str, Any]) -> dict[str, Any]:
    from ragelo import AgentAnswer, Experiment, get_agent_ranker, get_answer_evaluator, get_llm_provider

    answers = tournament_answers(spec["n"])
    with tempfile.TemporaryDirectory() as tmp:
        # the data, the client and the evaluator before the clock, as ours (its answers read and its
        # OpenAI client built before its clock; its run store opened inside it)
        experiment = Experiment("bench", save_path=str(Path(tmp) / "bench.json"), rich_print=False)
        for qid, query in dict.fromkeys((a["qid"], a["query"]) for a in answers):
            experiment.add_query(query, query_id=qid)
        experiment.add_agent_answers([AgentAnswer(qid=a["qid"], agent=a["agent"], text=a["answer"])
                                      for a in answers])
        evaluator = get_answer_evaluator("pairwise", llm_provider=get_llm_provider("openai", model=spec["model"]),
                                         n_processes=spec["concurrency"], use_progress_bar=False,
                                         rich_print=False)
        ranker = get_agent_ranker("elo", show_results=False)

        def play() -> Any:
            evaluator.evaluate_experiment(experiment)
            return ranker.run(experiment)

        elo, wall, cpu = _timed(play)
    ranking = sorted(AGENTS, key=lambda a: -elo.scores.get(a, 0.0))
    return {"framework": f"ragelo {version('ragelo')} pairwise", "wall": wall, "cpu": cpu, **_sdk(),
            "ranking": ranking}


WORKLOADS = {("faithfulness", "ragas"): ragas_faithfulness,
             ("grading", "llamaindex"): llamaindex_grading,
             ("grading", "deepeval"): deepeval_grading,
             ("grading", "ragas-correctness"): ragas_answer_correctness,
             ("grading", "ragas-correctness-llm"): lambda spec: ragas_answer_correctness(spec, llm_only=True),
             ("tournament", "ragelo"): ragelo_tournament}


def main(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    Path(out_path).write_text(json.dumps(WORKLOADS[spec["workload"], spec["framework"]](spec)))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
