"""vRAG-Eval grading (Wang et al.): a 5-level rubric judged against a definitive label, mapped to
accept/reject, with a per-dataset summary and a reader for CSV/JSONL grading files.

>>> from langrag_eval import Sample
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> grader = VragGrader(Judge(ScriptedModel(["Score: [[2]], Reason: [[Says it cannot answer.]]"])))
>>> grader.evaluate(Sample(question="Who?", answer="I do not know.", reference="Ada")).accepted
False
"""

from .grader import (
    DEFAULT_TEMPLATE, TASK, GradedExample, Scale, VragGrade, VragGrader, check_scale, load_rubric,
)
from .io import Columns, GradingData, GradingScan, parse_score, read_grading_file, scan_grading_file
from .summary import ARTIFACT, NO_SUBJECT, VragTally, summarize

__all__ = [
    "VragGrader", "VragGrade", "GradedExample", "load_rubric", "DEFAULT_TEMPLATE", "TASK", "Scale",
    "check_scale",
    "summarize", "VragTally", "ARTIFACT", "NO_SUBJECT", "Columns", "GradingData", "GradingScan", "read_grading_file",
    "scan_grading_file", "parse_score",
]
