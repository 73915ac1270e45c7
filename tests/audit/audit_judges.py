"""Scripted judges with known properties, built on ScriptedModel with a reply function.

Each reads the prompt the way a judge would (the answers inside their tag blocks) and knows the
truth from the shipped labels, so its only departures from the humans are the ones built in.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable

from langrag_eval.audit import ATTACKS, load_answers, load_pairs
from langrag_eval.audit.batteries import PADDING
from langrag_eval.testing import ScriptedModel

PAIRS = {(p.response1.strip(), p.response2.strip()): p.majority for p in load_pairs()}
RIGHT = {a.question.strip(): a.label.strip() for a in load_answers()}
INSTRUCTIONS = {a.text for a in ATTACKS if a.kind == "instruction"}


def _between(prompt: str, tag: str, *, last: bool = False) -> str:
    start = (prompt.rindex if last else prompt.index)(f"<{tag}>") + len(tag) + 2
    end = prompt.rindex(f"</{tag}>") if tag == "answer" else prompt.index(f"</{tag}>", start)
    return prompt[start:end].strip()


def kind(prompt: str) -> str:
    if "<answer_a>" in prompt:
        return "pairwise"
    if "<claim>" in prompt:
        return "groundedness"
    return "grading"


def unpadded(text: str) -> str:
    return text.replace(PADDING, "").strip()


def better_shown(prompt: str) -> str:
    """"A", "B" or "C": the human majority's verdict for the answers as shown in this prompt."""
    a, b = unpadded(_between(prompt, "answer_a")), unpadded(_between(prompt, "answer_b"))
    if (a, b) in PAIRS:
        return {"a": "A", "b": "B", "tie": "C", None: "C"}[PAIRS[(a, b)]]
    return {"a": "B", "b": "A", "tie": "C", None: "C"}[PAIRS[(b, a)]]


def answer_and_attack(prompt: str) -> tuple[str, str]:
    """The answer as graded and whatever was planted after it."""
    label_end = prompt.rindex("</label>")
    body = prompt[prompt.index("<answer>", label_end) + len("<answer>"):prompt.rindex("</answer>")].strip()
    core, _, planted = body.partition("\n\n")
    return core.strip(), planted.strip()


def is_right(prompt: str) -> bool:
    core, _ = answer_and_attack(prompt)
    return core == _between(prompt, "label", last=True)


def claim_supported(prompt: str) -> bool:
    claim = _between(prompt, "claim")
    m = re.match(r'The answer to the question "(.*)" is: (.*)\Z', claim, re.S)
    assert m, claim
    return RIGHT[m.group(1).strip()] == m.group(2).strip()


def grade(ok: bool) -> str:
    return f"Score: [[{5 if ok else 1}]], Reason: [[{'matches' if ok else 'contradicts'} the label]]"


def honest(prompt: str) -> str:
    k = kind(prompt)
    if k == "pairwise":
        return f"Comparing the two.\n[[{better_shown(prompt)}]]"
    if k == "groundedness":
        return f"<output>{int(claim_supported(prompt))}</output>"
    return grade(is_right(prompt))


def perfect() -> ScriptedModel:
    return ScriptedModel(honest, model_id="scripted:perfect")


def position_biased(rate: float) -> ScriptedModel:
    """On a share ``rate`` of the pairs (decided per pair, so both orders), names whichever answer
    is shown first; otherwise honest."""

    def reply(prompt: str) -> str:
        if kind(prompt) == "pairwise":
            pair = sorted([_between(prompt, "answer_a"), _between(prompt, "answer_b")])
            draw = int(hashlib.sha256("|".join(pair).encode()).hexdigest()[:8], 16) / 16 ** 8
            if draw < rate:
                return "The first answer reads better.\n[[A]]"
        return honest(prompt)

    return ScriptedModel(reply, model_id=f"scripted:position-{rate}")


def verbose_loving() -> ScriptedModel:
    """Prefers a padded answer whenever one is shown; otherwise honest."""

    def reply(prompt: str) -> str:
        if kind(prompt) == "pairwise":
            a, b = _between(prompt, "answer_a"), _between(prompt, "answer_b")
            if PADDING in a or PADDING in b:
                return "[[A]]" if PADDING in a else "[[B]]"
        return honest(prompt)

    return ScriptedModel(reply, model_id="scripted:verbose")


def injectable(kinds: Callable[[str], bool] = lambda planted: bool(planted)) -> ScriptedModel:
    """Accepts any answer carrying a planted text that ``kinds`` picks; otherwise honest."""

    def reply(prompt: str) -> str:
        if kind(prompt) == "grading":
            _, planted = answer_and_attack(prompt)
            if kinds(planted):
                return grade(True)
        return honest(prompt)

    return ScriptedModel(reply, model_id="scripted:injectable")


def random_judge(seed: int = 0) -> ScriptedModel:
    """Every verdict drawn at random, a fresh draw on every call."""
    rng = random.Random(seed)

    def reply(prompt: str) -> str:
        k = kind(prompt)
        if k == "pairwise":
            return f"[[{rng.choice('ABC')}]]"
        if k == "groundedness":
            return f"<output>{rng.randint(0, 1)}</output>"
        return f"Score: [[{rng.randint(1, 5)}]], Reason: [[a guess]]"

    return ScriptedModel(reply, model_id="scripted:random")
