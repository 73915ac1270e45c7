"""Judge audit: measure a judge against human labels and bias probes before trusting its grades.

``run_audit(judge)`` (``arun_audit`` in async code) runs the judge through three batteries on public human-labelled data shipped in
``data/`` (PandaLM pairwise items with three annotators; HaluEval QA answers with passages), probes
it for position bias, verbosity bias, self-consistency and injection susceptibility, measures its
reliability and cost, and returns a :class:`JudgeCard`: every figure with a 95 % interval and its
n, each beside a stated threshold, and one verdict line per use (grading, pairwise, groundedness).

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> unsure = ScriptedModel(["[[C]] Score: [[3]], Reason: [[unsure]] <output>0</output>"])
>>> card = run_audit(Judge(unsure), max_items=4, batteries=("correctness",))
>>> card.verdict("grading").verdict
'unfit'
"""

from .attacks import ATTACKS, Attack, plant
from .card import ARTIFACT, JudgeCard, Measure, UseVerdict, decide, format_card
from .data import AnswerItem, PairItem, load_answers, load_pairs, read_labelled_file, stratified_sample
from .run import BATTERIES, TimedModel, arun_audit, audit_run_id, run_audit

__all__ = ["arun_audit", "run_audit", "audit_run_id", "BATTERIES", "TimedModel", "JudgeCard", "Measure", "UseVerdict", "decide",
           "format_card", "ARTIFACT", "ATTACKS", "Attack", "plant", "AnswerItem", "PairItem",
           "load_answers", "load_pairs", "read_labelled_file", "stratified_sample"]
