"""The workloads and the one scripted judge shared by both sides of benchmarks/peers.py.

Standard library only: the project's interpreter and the peers' virtual environment both import it,
so the two sides read the same samples and get the same decisions, worded in the output format each
framework parses (our tag blocks and ``[[...]]`` verdicts, ragas' JSON, LlamaIndex's YES/NO and
"score line, then reasoning", RAGElo's JSON answer schema, DeepEval GEval's JSON score).

What the judge decides:

- groundedness: an answer splits into ``CLAIMS`` claims; every claim of a right answer is supported,
  the first claim of a hallucinated answer is not (per-claim score 2/3; LlamaIndex judges the
  whole response, so NO);
- rubric grading: a right answer scores 5, a hallucinated one 2 (GEval: 10 and 2 of 10; ragas
  AnswerCorrectness: every statement of a right answer a true positive, every statement of a
  hallucinated one a false positive and every statement of the label a false negative);
- pairwise games: each (query, pair of agents) has one opinion drawn from fixed Bradley-Terry
  strengths (a tie with probability ``TIE``), the same in both answer orders.

Tokens are counted the same way on both sides: ``estimate_tokens`` (about four characters a token)
of the prompt text the framework sends and of the reply text, recorded in :class:`Meter`.

>>> s = Script.for_faithfulness(faithfulness_samples(HALUEVAL, 2))
>>> s.reply("Please tell if a given piece of information is supported by the context.\\n"
...         "Information: Arthur's Magazine\\nContext: x\\nAnswer: ")[1]
'YES'
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

__all__ = ["AGENTS", "CLAIMS", "HALUEVAL", "TIE", "Meter", "Script", "claims_of", "estimate_tokens",
           "faithfulness_samples", "grading_samples", "opinion", "strengths", "tournament_answers"]

# 200 HaluEval QA rows kept in the repository (tests/data/README.md); samples past 200 reuse them.
HALUEVAL = (Path(__file__).resolve().parents[2] / "tests" / "data" / "halueval-qa"
            / "qa_one-turn_first200.jsonl")
CLAIMS = 3
TIE = 0.1
GAP = 50.0  # Elo points between neighbouring agents
AGENTS = ["rag-knn", "fusion-knn", "rag-bm25", "rag-hybrid", "fusion-hybrid", "fusion-bm25"]

# the same wording on both sides; only the envelope differs per framework
SUPPORTED, UNSUPPORTED = "The knowledge states this.", "The knowledge does not state this."
AGREES, CONTRADICTS = "The answer agrees with the label.", "The answer contradicts the label."
ANALYSIS = "Both answers address the question; they differ in how completely they answer it."


def estimate_tokens(text: str) -> int:
    """About four characters a token (the formula of langrag_eval.model.estimate_tokens)."""
    return max(1, (len(text) + 3) // 4) if text else 0


# ------------------------------------------------------------------ workloads

def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def faithfulness_samples(path: Path, n: int) -> list[dict[str, Any]]:
    """``n`` (question, contexts, answer) samples; even ones carry the right answer, odd ones the
    hallucinated one."""
    rows = _rows(path)
    out = []
    for i in range(n):
        row, right = rows[i % len(rows)], i % 2 == 0
        out.append({"id": f"s{i}", "question": row["question"], "contexts": [row["knowledge"]],
                    "answer": row["right_answer"] if right else row["hallucinated_answer"], "right": right})
    return out


def grading_samples(path: Path, n: int) -> list[dict[str, Any]]:
    """``n`` answers to grade against the right answer as label: each row's right answer and its
    hallucinated one."""
    rows = _rows(path)
    out = []
    for i in range(n):
        row, right = rows[(i // 2) % len(rows)], i % 2 == 0
        out.append({"id": f"g{i}", "question": row["question"], "label": row["right_answer"],
                    "answer": row["right_answer"] if right else row["hallucinated_answer"], "right": right})
    return out


def claims_of(answer: str) -> list[str]:
    """The claims the scripted judge finds in an answer (the same list on every side)."""
    return [f"Claim {k} of the answer: {answer.strip()}" for k in range(1, CLAIMS + 1)]


def strengths() -> dict[str, float]:
    return {a: i * GAP for i, a in enumerate(AGENTS)}


def _uniform(*parts: Any) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def opinion(qid: str, x: str, y: str) -> str | None:
    """The judge's fixed opinion on one (query, pair): the winning agent, or None for a tie."""
    x, y = sorted((x, y))
    s = strengths()
    u = _uniform("opinion", qid, x, y)
    if u < TIE:
        return None
    p_x = 1 / (1 + 10 ** ((s[y] - s[x]) / 400))
    return x if (u - TIE) / (1 - TIE) < p_x else y


def tournament_answers(queries: int) -> list[dict[str, str]]:
    """One answer per (query, agent); the answer names its agent so the judge can tell who is who."""
    return [{"qid": f"q{q}", "query": f"Benchmark question number {q}?", "agent": a,
             "answer": f"Answer of {a} to q{q}: a reply that a scripted judge reads."}
            for q in range(queries) for a in AGENTS]


def games(queries: int) -> int:
    return queries * len(list(combinations(AGENTS, 2)))


# ------------------------------------------------------------------ metering

@dataclass
class Meter:
    """Calls, tokens and the peak of concurrent calls, as the scripted model saw them."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    in_flight: int = 0
    peak: int = 0
    kinds: Counter = field(default_factory=Counter)

    def start(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def done(self, kind: str, prompt: str, reply: str) -> None:
        self.in_flight -= 1
        self.record(kind, prompt, reply)

    def record(self, kind: str, prompt: str, reply: str) -> None:
        """One finished call (for a model that counts its concurrent calls itself)."""
        self.calls += 1
        self.kinds[kind] += 1
        self.prompt_tokens += estimate_tokens(prompt)
        self.completion_tokens += estimate_tokens(reply)

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "peak": self.peak, "kinds": dict(self.kinds)}


# ------------------------------------------------------------------ the judge

_AGENT = re.compile(r"Answer of (\S+) to (\S+):")
_RAGAS_INPUT = "Now perform the same with the following input\ninput: "


def _between(text: str, start: str, end: str) -> str:
    i = text.rindex(start) + len(start)
    return text[i:text.index(end, i)].strip()


class Script:
    """Replies to every prompt type of the four workloads; ``reply(prompt) -> (kind, text)``.
    A prompt it does not recognise raises, so a changed framework prompt shows up as failures."""

    def __init__(self, right: dict[str, bool]) -> None:
        self.right = right                                   # answer text -> is it the right answer
        self.claims = {c: (a, k) for a in right for k, c in enumerate(claims_of(a))}

    @classmethod
    def for_faithfulness(cls, samples: list[dict[str, Any]]) -> Script:
        return cls({s["answer"].strip(): s["right"] for s in samples})

    @classmethod
    def for_grading(cls, samples: list[dict[str, Any]]) -> Script:
        return cls({s["answer"].strip(): s["right"] for s in samples})

    @classmethod
    def for_tournament(cls) -> Script:
        return cls({})

    def supported(self, claim: str) -> int:
        answer, k = self.claims[claim.strip()]
        return int(self.right[answer] or k > 0)

    def grade(self, answer: str) -> tuple[int, str]:
        return (5, AGREES) if self.right[answer.strip()] else (2, CONTRADICTS)

    def verdict(self, answer_a: str, answer_b: str) -> str:
        agent_a, qid = _AGENT.search(answer_a).groups()  # type: ignore[union-attr]
        agent_b, _ = _AGENT.search(answer_b).groups()    # type: ignore[union-attr]
        winner = opinion(qid, agent_a, agent_b)
        return "C" if winner is None else ("A" if winner == agent_a else "B")

    def reply(self, prompt: str) -> tuple[str, str]:
        # ours (langrag-eval prompt files)
        if "<passage>" in prompt:
            claims = claims_of(_between(prompt, "<passage>", "</passage>"))
            return "claims", "<output>\n" + "".join(f"- {c}\n" for c in claims) + "</output>"
        if '<claim n="' in prompt:
            claims = re.findall(r'<claim n="\d+">\n(.*?)\n</claim>', prompt, re.DOTALL)
            return "verdicts", f"<output>{json.dumps([self.supported(c) for c in claims])}</output>"
        if "<claim>" in prompt:
            return "verdict", f"<output>{self.supported(_between(prompt, '<claim>', '</claim>'))}</output>"
        if "<answer_a>" in prompt:
            v = self.verdict(_between(prompt, "<answer_a>", "</answer_a>"),
                             _between(prompt, "<answer_b>", "</answer_b>"))
            return "game", f"{ANALYSIS}\n[[{v}]]"
        if "<label>" in prompt:
            score, reason = self.grade(_between(prompt, "<answer>", "</answer>"))
            return "grade", f"Score: [[{score}]], Reason: [[{reason}]]"
        # ragas (PydanticPrompt: instruction, schema, examples, then the input as JSON)
        if "fully understandable statements" in prompt:
            data = json.loads(_between(prompt, _RAGAS_INPUT, "\nOutput: "))
            return "claims", json.dumps({"statements": claims_of(data["answer"])})
        if "faithfulness of a series of statements" in prompt:
            data = json.loads(_between(prompt, _RAGAS_INPUT, "\nOutput: "))
            return "verdicts", json.dumps({"statements": [
                {"statement": s, "reason": SUPPORTED if self.supported(s) else UNSUPPORTED,
                 "verdict": self.supported(s)} for s in data["statements"]]})
        if "classify them in one of the following categories: TP" in prompt:  # AnswerCorrectness
            data = json.loads(_between(prompt, _RAGAS_INPUT, "\nOutput: "))
            right = all(self.supported(s) for s in data["answer"])
            tagged = lambda xs, why: [{"statement": x, "reason": why} for x in xs]  # noqa: E731
            if right:
                return "classification", json.dumps({"TP": tagged(data["answer"], AGREES), "FP": [], "FN": []})
            return "classification", json.dumps({"TP": [], "FP": tagged(data["answer"], CONTRADICTS),
                                                 "FN": tagged(data["ground_truth"], CONTRADICTS)})
        # DeepEval GEval: the evaluation steps from the criteria, then one JSON score (0 to 10) per case
        if "generate 3-4 concise evaluation steps" in prompt:
            return "steps", json.dumps({"steps": [AGREES, CONTRADICTS, ANALYSIS]})
        if "Evaluation Steps:" in prompt and "Actual Output:\n" in prompt:
            score, reason = self.grade(_between(prompt, "Actual Output:\n", " \n\n"))
            return "grade", json.dumps({"reason": reason, "score": 10 if score == 5 else 2})
        # LlamaIndex FaithfulnessEvaluator (whole response) and CorrectnessEvaluator
        if "is supported by the context" in prompt:
            answer = _between(prompt, "\nInformation: ", "\nContext: ")
            return "verdict", "YES" if self.right[answer] else "NO"
        if "expert evaluation system for a question answering chatbot" in prompt:
            answer = prompt[prompt.rindex("## Generated Answer") + len("## Generated Answer"):]
            score, reason = self.grade(answer.rsplit("assistant:", 1)[0])
            return "grade", f"{score}.0\n{reason}"
        # RAGElo pairwise (schema PairwiseEvaluationAnswer)
        if "[The Start of Answer from Assistant A]" in prompt:
            v = self.verdict(_between(prompt, "[The Start of Answer from Assistant A]", "[The End of"),
                             _between(prompt, "[The Start of Answer from Assistant B]", "[The End of"))
            return "game", json.dumps({"answer_a_analysis": ANALYSIS, "answer_b_analysis": ANALYSIS,
                                       "comparison_reasoning": ANALYSIS, "winner": v})
        raise ValueError(f"the scripted judge does not know this prompt: {prompt[:120]!r}")
