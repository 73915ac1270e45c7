"""A scripted judge that answers every prompt the quickstart sends, in format, deterministically.

For tests of the quickstart and the report (and of setups built like them): replies are plausible
shapes, not judgments.

>>> quickstart_reply("... Your job is to grade one answer ...").startswith("Score: [[")
True
"""

from __future__ import annotations

import re

from ..testing import ScriptedModel
from ..thelma import ThelmaScript

__all__ = ["quickstart_reply", "quickstart_model"]

_THELMA = ThelmaScript(default=1)


def quickstart_reply(prompt: str) -> str:
    if "different search queries" in prompt:
        return "bike membership price\nstudent discount annual plan"
    if prompt.startswith("You answer a user's question using only the passages"):
        passages = re.findall(r"<passage[^>]*>(.*?)</passage>", prompt, re.S)
        first = passages[0].strip().split(". ")[0][:200] if passages else "nothing relevant was found"
        return f"{first}."
    if "Your job is to grade one answer" in prompt:
        # a deterministic spread of grades, so there is a distribution to look at
        return f"Score: [[{2 + len(prompt) % 4}]], Reason: [[compared with the label]]"
    if prompt.startswith("You annotate search results"):
        return '{"reason": "it mentions the subject of the question", "relevance": %d}' % (len(prompt) % 3)
    if prompt.startswith("Two assistants answered"):
        a = re.search(r"<answer_a>(.*?)</answer_a>", prompt, re.S)
        b = re.search(r"<answer_b>(.*?)</answer_b>", prompt, re.S)
        longer_a = a is not None and b is not None and len(a.group(1)) > len(b.group(1))
        return "The longer answer covers more.\n[[A]]" if longer_a else "[[B]]"
    return _THELMA.reply(prompt)


def quickstart_model() -> ScriptedModel:
    return ScriptedModel(quickstart_reply, model_id="scripted:quickstart")
