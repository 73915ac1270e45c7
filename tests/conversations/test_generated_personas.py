"""Personas drawn from a corpus: one model call per document, the document inside its block, a reply
without exactly one persona line skipped with its reason, and a run found again answered by the
judge's cache."""

from __future__ import annotations

from langrag_eval.conversations import generate_personas
from langrag_eval.runtime import Judge, RunStore
from langrag_eval.testing import ScriptedModel, blocks

DOCS = {"terms": "The pump carries a warranty of two years.", "seals": "Spare seals ship within five days.",
        "odd": "The pump is green."}


def reply(prompt: str) -> str:
    doc = blocks(prompt, "document")[0]
    if "warranty" in doc:
        return "Persona: [[A plumber fitting the pump.]], Goal: [[Learn how long the warranty lasts.]]"
    if "seals" in doc:
        return "Persona: [[A facilities manager.]]\nGoal: [[Know when spare seals arrive.]]"
    return "I cannot think of anyone."


def test_one_persona_per_document_and_none_guessed(tmp_path) -> None:
    model = ScriptedModel(reply)
    store = RunStore(tmp_path / "runs.sqlite")
    found, skipped = generate_personas(Judge(model, store=store), DOCS, role="Pump support")
    assert [(p.id, p.goal, p.role) for p in found] == [("terms", "Learn how long the warranty lasts.", "Pump support"),
                                                       ("seals", "Know when spare seals arrive.", "Pump support")]
    assert len(skipped) == 1 and skipped[0].startswith("odd: the reply holds 0 persona lines")
    assert model.calls == 3 and [blocks(p, "document") for p in model.prompts] == [[t] for t in DOCS.values()]
    again, _ = generate_personas(Judge(model, store=store), DOCS)
    assert model.calls == 3 and [p.persona for p in again] == [p.persona for p in found]


def test_two_persona_lines_are_not_picked_between() -> None:
    two = "Persona: [[A.]], Goal: [[B.]] or Persona: [[C.]], Goal: [[D.]]"
    found, skipped = generate_personas(Judge(ScriptedModel([two])), {"d": "text"})
    assert found == [] and "holds 2 persona lines" in skipped[0]
