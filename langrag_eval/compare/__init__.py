"""Run-to-run comparison with paired statistics, and the regression gate built on it.

>>> from langrag_eval.compare import compare_runs, gate_runs
"""

from .compare import Comparison, MetricComparison, compare_observations, compare_runs
from .gate import GateCheck, GateResult, gate_observations, gate_runs, junit_error, junit_xml, parse_max_drop
from .observations import Observation, family_of, load_observations
from .pairing import Pairing, pair
from .text import format_comparison, format_gate

__all__ = [
    "Comparison", "GateCheck", "GateResult", "MetricComparison", "Observation",
    "Pairing", "compare_observations", "family_of", "compare_runs", "format_comparison", "format_gate",
    "gate_observations",
    "gate_runs", "junit_error", "junit_xml", "load_observations", "pair", "parse_max_drop",
]
