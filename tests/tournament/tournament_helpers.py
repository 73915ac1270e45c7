"""Scripted judges for tournament tests: replies are computed from markers inside the prompt."""

from __future__ import annotations

import re


def marker_judge(prompt: str) -> str:
    """Relevance: the level written as ``rel=N`` in the document. Pointwise: fixed scores from
    ``quality=N`` in the answer. Pairwise: the answer with the higher ``quality=N`` wins, a tie on
    equal quality; the verdict depends only on content, never on position."""
    if "<document>" in prompt:
        level = re.search(r"rel=(\d)", prompt.split("<document>")[1])
        return f'Judged.\n{{"reason": "marker says so", "relevance": {level.group(1) if level else 0}}}'
    if "<answer>" in prompt:
        q = int(re.search(r"quality=(\d)", prompt.split("<answer>")[1]).group(1))
        return f'Fine.\n{{"relevance": {min(q, 2)}, "accuracy": {min(q, 2)}, "completeness": 1, "precision": 2}}'
    a = int(re.search(r"quality=(\d)", prompt.split("<answer_a>")[1]).group(1))
    b = int(re.search(r"quality=(\d)", prompt.split("<answer_b>")[1]).group(1))
    return "Compared.\n" + ("[[A]]" if a > b else "[[B]]" if b > a else "[[C]]")


def records(qualities: dict[str, int], queries: int = 3, docs: int = 2) -> list[dict]:
    out = []
    for q in range(queries):
        for agent, quality in qualities.items():
            out.append({"qid": f"q{q}", "query": f"question {q}?", "agent": agent,
                        "answer": f"answer by {agent} quality={quality}",
                        "documents": [{"id": f"d{q}-{i}", "text": f"passage {i} of q{q} rel={2 - i % 3}"}
                                      for i in range(docs)]})
    return out
