"""Personas drawn from a corpus: for each document, a model invents a user who would come to the app
needing what the document says (prompt file ``conversation/personas``), so a simulation covers the
corpus instead of the cases someone thought of. A reply that does not hold both fields is skipped
and reported, never guessed at.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> judge = Judge(ScriptedModel(["Persona: [[A plumber fitting a P-20.]], Goal: [[Learn its warranty.]]"]))
>>> found, skipped = generate_personas(judge, {"terms": "The P-20 carries a two-year warranty."})
>>> found[0].id, found[0].goal, skipped
('terms', 'Learn its warranty.', [])
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..model import GenerationParams
from ..errors import ModelCallError
from ..prompting.templates import load_prompt
from ..runtime import Judge
from ..runtime.concurrency import synchronous
from .simulate import Persona

__all__ = ["agenerate_personas", "generate_personas"]

_FIELDS = re.compile(r"Persona:\s*\[\[(.+?)\]\],?\s*Goal:\s*\[\[(.+?)\]\]", re.S)


async def agenerate_personas(judge: Judge, documents: Mapping[str, str], *, role: str | None = None
                             ) -> tuple[list[Persona], list[str]]:
    """One persona per document (``{id: text}``), its id the document's; and, for each document that
    gave none, one line saying why."""
    template = load_prompt("conversation/personas")
    params = GenerationParams(temperature=0.0, max_tokens=judge.params.max_tokens, seed=judge.params.seed)
    found, skipped = [], []
    for ident, text in documents.items():
        try:
            reply = await judge.complete(template.render(document=text), params=params)
        except ModelCallError as exc:
            skipped.append(f"{ident}: the model call failed: {exc}")
            continue
        matched = _FIELDS.findall(reply.text)
        if len(matched) != 1:  # none, or several to choose between: not ours to pick
            skipped.append(f"{ident}: the reply holds {len(matched)} persona lines, expected one: {reply.text[:80]!r}")
            continue
        persona, goal = (part.strip() for part in matched[0])
        found.append(Persona(id=ident, persona=persona, goal=goal, role=role))
    return found, skipped


generate_personas = synchronous(agenerate_personas)
