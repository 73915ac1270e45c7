"""Shared pure maths over plain data: agreement between graders, combining annotators.

>>> from langrag_eval.stats import agreement
>>> agreement([4, 2, 5], [5, 2, 3]).binary
0.6666666666666666
"""

from .agreement import (
    LEVELS, AgreementReport, Correlation, Paired, agreement, binary_agreement, binary_confusion,
    cohen_kappa, confusion_matrix, exact_agreement, format_agreement, kendall_tau, pair_scores,
    reject_rate, spearman,
)
from .combine import EvenRule, combine, combine_annotator, combine_median, describe_combination

__all__ = [
    "LEVELS", "AgreementReport", "Correlation", "Paired", "agreement", "binary_agreement",
    "binary_confusion", "cohen_kappa", "confusion_matrix", "exact_agreement", "format_agreement",
    "kendall_tau", "pair_scores", "reject_rate", "spearman", "EvenRule", "combine", "combine_annotator",
    "combine_median", "describe_combination",
]
