"""The grading script a LlamaIndex user would write: what ``langrag-eval grade FILE --judge
openai:MODEL --out OUT`` is timed against, both as whole processes (benchmarks/peers_real.py,
side ``llamaindex-script``). Reads the same CSV (question, answer, label), grades every answer
with ``CorrectnessEvaluator`` through ``BatchEvalRunner`` and writes one JSON line per answer.

    .peers-venv/bin/python benchmarks/peers/llamaindex_grade.py grade.csv grades.jsonl --workers 16

The OpenAI client reads ``OPENAI_API_KEY`` and ``OPENAI_API_BASE`` from the environment, as a
user's would.
"""

import argparse
import csv
import json

from llama_index.core.evaluation import BatchEvalRunner, CorrectnessEvaluator
from llama_index.llms.openai import OpenAI


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--model", default="gpt-4o-mini")
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()
    with open(args.data, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    runner = BatchEvalRunner({"correctness": CorrectnessEvaluator(llm=OpenAI(model=args.model))},
                             workers=args.workers)
    results = runner.evaluate_response_strs(queries=[r["question"] for r in rows],
                                            response_strs=[r["answer"] for r in rows],
                                            reference=[r["label"] for r in rows])
    with open(args.out, "w", encoding="utf-8") as fh:
        for row, result in zip(rows, results["correctness"]):
            fh.write(json.dumps({"id": row["id"], "score": result.score, "passing": result.passing,
                                 "feedback": result.feedback}) + "\n")


if __name__ == "__main__":
    main()
