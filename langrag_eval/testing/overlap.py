"""A reply script for every prompt the package ships, deciding by word overlap.

:func:`overlap_reply` reads a prompt, recognises the task from the tag blocks the shipped templates
write, and answers in the format that task asks for: a vRAG-Eval grade, a relevance level, a
pairwise or pointwise verdict, search query variations, an extractive answer from passages, a
GRAMMAR correctness judgement, the trajectory and conversation judges' grades, a simulated user's
next message (:mod:`.overlap_chat`), and THELMA's decompositions and verdicts (through
:class:`~langrag_eval.testing.ThelmaScript`, with overlap rules instead of truth tables). Any other
prompt is taken as an app's own RAG prompt (context, then ``Question:`` or ``Query:``) and answered
by an extractive reader. Every command, cookbook and quickstart therefore runs offline, in seconds,
with the same result each time.

Word overlap is not judgement: the grades show the plumbing, not the quality of a pipeline.

>>> print(overlap_reply("<question>\\nWho built it?\\n</question>\\n<true_answer>\\nAda\\n</true_answer>\\n"
...                     "<response>\\nAda built it.\\n</response>"))
The response states the true answer.
Judgement: [[Correct]]
>>> overlap_reply("<question>\\nPrice?\\n</question>\\n<label>\\nIt costs 9 euros.\\n</label>\\n"
...               "<answer>\\nIt costs 9 euros.\\n</answer>")
"Score: [[5]], Reason: [[The answer repeats 100% of the label's key words.]]"
>>> overlap_model().model_id
'scripted:overlap'
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ConfigError
from ..thelma.decompose import split_sentences
from . import overlap_chat
from .scripted import ScriptedModel
from .thelma import ThelmaScript, blocks

__all__ = ["overlap", "overlap_model", "overlap_reply", "words"]

_STOPWORDS = """a an the of to in on at for from by with and or but not no is are was were be been
being do does did has have had i you he she it we they my your our their its this that these those
what which who whom whose when where why how much many there here can could should would will
may might me us them about into than then so if as any some all per one"""
_STOP = frozenset(_STOPWORDS.split())


def words(text: str) -> set[str]:
    """Content words, lower-cased and cut to six letters (a crude stem: 'returned' and 'returns'
    both become 'return')."""
    return {w[:6] for w in re.findall(r"\w+(?:[.'\-]\w+)*", text.casefold()) if w not in _STOP}


def overlap(a: str, b: str) -> float:
    """Share of ``a``'s content words that also occur in ``b`` (0 when ``a`` has none).

    >>> overlap("returned parcels", "Parcels are returned free of charge.")
    1.0
    """
    wa = words(a)
    return len(wa & words(b)) / len(wa) if wa else 0.0


def _extract(question: str, texts: list[str], n: int = 2) -> str:
    """An extractive reader: the ``n`` sentences sharing most words with the question, in text order."""
    sentences = [s.strip() for t in texts for s in split_sentences(t) if s.strip()]
    best = sorted(range(len(sentences)), key=lambda i: -overlap(question, sentences[i]))[:n]
    chosen = [sentences[i] for i in sorted(best) if overlap(question, sentences[i]) > 0]
    return " ".join(chosen) or "The documents do not say."


# THELMA's decompose and match prompts: each rule receives the most specific key of its table.
_THELMA = ThelmaScript(
    source=lambda k: overlap(k[0], k[1]) >= 0.3,                  # (query, source): SP1
    essential=lambda k: overlap(k[0], k[1]) >= 0.25,              # (query, fact): SP2, RP
    supported=lambda k: overlap(k[0], " ".join(k[1])) >= 0.7,     # (claim, sources): GR
    addresses=lambda k: overlap(k[0], k[1]) >= 0.3,               # (sub-question, response): RQC
    answers=lambda k: k[1] is not None and overlap(k[0], k[1]) >= 0.4)  # (sub-question, source): SQC


def _grade(label: str, answer: str) -> str:             # prompts/vrag/grade.txt
    share = overlap(label, answer)
    score = 1 + sum(share >= cut for cut in (0.2, 0.4, 0.6, 0.8))
    return f"Score: [[{score}]], Reason: [[The answer repeats {share:.0%} of the label's key words.]]"


def _relevance(query: str, document: str) -> str:       # prompts/tournament/relevance.txt
    share = overlap(query, document)
    level = 2 if share >= 0.5 else 1 if share >= 0.25 else 0
    return json.dumps({"reason": f"The document shares {share:.0%} of the question's key words.",
                       "relevance": level})


def _support(query: str, answer: str, documents: str) -> float:
    return overlap(query, answer) + overlap(answer, documents)


def _pairwise(prompt: str) -> str:                       # prompts/tournament/pairwise.txt
    query, docs = blocks(prompt, "question")[-1], " ".join(blocks(prompt, "document"))
    a = _support(query, blocks(prompt, "answer_a")[-1], docs)
    b = _support(query, blocks(prompt, "answer_b")[-1], docs)
    verdict = "C" if abs(a - b) < 0.05 else "A" if a > b else "B"
    return f"Answer A scores {a:.2f} on overlap with the question and documents, answer B {b:.2f}.\n[[{verdict}]]"


def _pointwise(prompt: str) -> str:                      # prompts/tournament/pointwise.txt
    query, answer = blocks(prompt, "question")[-1], blocks(prompt, "answer")[-1]
    docs = " ".join(blocks(prompt, "document"))

    def level(share: float) -> int:
        return 2 if share >= 0.6 else 1 if share >= 0.3 else 0
    scores = {"relevance": level(overlap(query, answer)), "accuracy": level(overlap(answer, docs)),
              "completeness": level(overlap(query, answer + " " + docs)), "precision": 2}
    return "Graded by word overlap.\n" + json.dumps(scores)


def _variations(prompt: str, n: int) -> str:             # prompts/pipelines/query_variations.txt
    keywords = list(dict.fromkeys(w for w in re.findall(r"\w+", blocks(prompt, "question")[-1])
                                  if w.casefold() not in _STOP))
    candidates = [" ".join(keywords)] + [" ".join(keywords[:i] + keywords[i + 1:]) for i in range(len(keywords))]
    lines = [c for c in dict.fromkeys(candidates) if c][:n]
    lines += [f"{' '.join(keywords)} detail {i}" for i in range(n - len(lines))]
    return "\n".join(lines)


def _correctness(prompt: str) -> str:                     # prompts/grammar/correctness.txt
    truth, response = blocks(prompt, "true_answer")[-1], blocks(prompt, "response")[-1]
    if words(truth) and words(truth) <= words(response):
        return "The response states the true answer.\nJudgement: [[Correct]]"
    return "The response does not state the true answer.\nJudgement: [[Incorrect]]"


def overlap_reply(prompt: str) -> str:
    """A plausible reply to any prompt the package sends, in the format the prompt asks for."""
    if "<conversation_a>" in prompt:
        return overlap_chat.pairwise_conversations(prompt)
    if "<trajectory>" in prompt:
        return overlap_chat.trajectory_grade(prompt)
    if "<conversation>" in prompt:
        conversation = blocks(prompt, "conversation")[-1]
        if "<persona>" in prompt:
            return overlap_chat.simulated_user(prompt, blocks(prompt, "goal")[-1], conversation)
        if "<goal>" in prompt:
            return overlap_chat.goal_grade(blocks(prompt, "goal")[-1], conversation)
        return "Score: [[4]], Reason: [[Scripted: the conversation is read, not weighed.]]"
    if "<true_answer>" in prompt:
        return _correctness(prompt)
    if "<label>" in prompt:
        return _grade(blocks(prompt, "label")[-1], blocks(prompt, "answer")[-1])
    if "<answer_a>" in prompt:
        return _pairwise(prompt)
    if '"completeness"' in prompt:
        return _pointwise(prompt)
    if "<document>" in prompt:
        return _relevance(blocks(prompt, "question")[-1], blocks(prompt, "document")[-1])
    if "<passages>" in prompt:                           # prompts/pipelines/answer.txt
        # a hasty reader: it answers from the top-ranked passage only, so retrieval order matters
        return _extract(blocks(prompt, "question")[-1], blocks(prompt, "passage")[:1])
    if (m := re.search(r"Write (\d+) different search queries", prompt)):
        return _variations(prompt, int(m.group(1)))
    try:
        return _THELMA.reply(prompt)
    except ConfigError:  # not a THELMA prompt
        pass
    # Anything else is taken as an app's own RAG prompt: context first, then "Question: ..." (or
    # "Query: ...", as LlamaIndex's default answer prompt writes it).
    found = list(re.finditer(r"(?:Question|Query):\s*(.+)", prompt))
    # else a chat's messages as LlamaIndex writes them for a completion model ("user: ..." lines):
    # the last user message asks, what came before is the context
    found = found or list(re.finditer(r"^user:\s*(.+)$", prompt, flags=re.M))
    if not found:
        return _extract(prompt, [prompt])
    context = prompt[:found[-1].start()].split("Context:", 1)[-1]
    context = re.sub(r"^user:.*$", "", context, flags=re.M)  # what the user said is no source
    return _extract(found[-1].group(1), [context])


def overlap_model(**kwargs: Any) -> ScriptedModel:
    """:func:`overlap_reply` as a :class:`ScriptedModel` (kwargs: ``model_id``, latency, failure
    rates ...)."""
    kwargs.setdefault("model_id", "scripted:overlap")
    return ScriptedModel(overlap_reply, **kwargs)
