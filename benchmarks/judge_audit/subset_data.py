"""Rebuild the human-labelled sets the judge audit ships (langrag_eval/audit/data/).

    python benchmarks/judge_audit/subset_data.py /path/to/pandalm/testset-v1.json /path/to/halueval/qa_data.json

- PandaLM test set (WeOpenML/PandaLM, data/testset-v1.json, Apache-2.0): 150 of the 999 pairwise
  items, sampled with seed 0 and stratified by the three annotators' majority label (proportional
  allocation, so the base rates of "response 1 better", "response 2 better" and "tie" are kept;
  items on which the annotators all differ form a stratum of their own). The 999 items hold 60
  with an empty response (left out: the pairwise judge refuses an empty answer) or a response
  stored as a JSON boolean (written as the text True or False).
- HaluEval QA (RUCAIBox/HaluEval, generation/qa, MIT): the first 100 lines in a seeded shuffle;
  each row has a passage, a question, the right answer and a hallucinated one.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "langrag_eval" / "audit" / "data"
PAIRS, QA = 150, 100


def majority(labels: list[int]) -> int | None:
    value, count = Counter(labels).most_common(1)[0]
    return value if count >= 2 else None


def stratified(rows: list[dict], key, n: int, seed: int) -> list[dict]:
    strata: dict[object, list[dict]] = defaultdict(list)
    for r in rows:
        strata[key(r)].append(r)
    rng = random.Random(seed)
    quotas = {k: n * len(v) / len(rows) for k, v in strata.items()}
    take = {k: int(q) for k, q in quotas.items()}
    for k in sorted(quotas, key=lambda k: quotas[k] - take[k], reverse=True)[: n - sum(take.values())]:
        take[k] += 1
    out = []
    for k in sorted(strata, key=str):
        members = list(strata[k])
        rng.shuffle(members)
        out.extend(members[: take[k]])
    return sorted(out, key=lambda r: r["idx"])


def main(pandalm: str, halueval: str) -> None:
    items = json.loads(Path(pandalm).read_text(encoding="utf-8"))
    for r in items:
        for k in ("instruction", "input", "response1", "response2"):
            if isinstance(r[k], bool):  # a few responses were stored as JSON true/false
                r[k] = "True" if r[k] else "False"
    # the pairwise judge refuses an empty answer (Unscored, invalid input): such items measure nothing
    items = [r for r in items if r["response1"].strip() and r["response2"].strip()]
    chosen = stratified(items, lambda r: majority([r["annotator1"], r["annotator2"], r["annotator3"]]),
                        PAIRS, seed=0)
    with (OUT / "pandalm_pairs.jsonl").open("w", encoding="utf-8") as f:
        for r in chosen:
            f.write(json.dumps({"id": f"pandalm-{r['idx']}", "instruction": r["instruction"],
                                "input": r["input"], "response1": r["response1"],
                                "response2": r["response2"],
                                "annotators": [r["annotator1"], r["annotator2"], r["annotator3"]]},
                               ensure_ascii=False) + "\n")
    rows = [json.loads(line) for line in Path(halueval).read_text(encoding="utf-8").splitlines() if line.strip()]
    order = list(range(len(rows)))
    random.Random(0).shuffle(order)
    with (OUT / "halueval_qa.jsonl").open("w", encoding="utf-8") as f:
        for i in sorted(order[:QA]):
            r = rows[i]
            f.write(json.dumps({"id": f"halueval-{i}", "knowledge": r["knowledge"], "question": r["question"],
                                "right_answer": r["right_answer"],
                                "hallucinated_answer": r["hallucinated_answer"]}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
