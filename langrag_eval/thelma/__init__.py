"""THELMA (Patel et al., 2025): reference-free evaluation of RAG question answering from (query,
retrieved sources, response) alone, with a diagnosis of which pipeline component to improve.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ThelmaScript
>>> from langrag_eval import Sample
>>> from langrag_eval.thelma import Thelma
>>> script = ThelmaScript(questions={"Who built it?": ["Who built it?"]},
...                       answers={("Who built it?", "Ada built it."): 1})
>>> Thelma(Judge(script.model()), metrics=("sqc",)).evaluate(
...     Sample(question="Who built it?", contexts=["Ada built it."])).score("sqc")
1.0
"""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .aggregate import METRIC_NAMES, METRICS, MetricScore, coverage, macro_average, self_distinctness
    from .dataset import summarize
    from .decompose import Decomposer, split_sentences
    from .diagnosis import RULES, Finding, Rule, diagnose, diagnose_dataset
    from .evaluator import DEFAULT_SD_THRESHOLD, Thelma, select_metrics
    from .formats import BinaryListFormat, ListFormat
    from .match import Matcher
    from .meta import MetaEvaluation, MetaReport, MetaRow, PairOutcome
    from .metrics import (
        Metric, MetricInputs, get_metric, load_metric_plugins, metric_ids, register_metric, registered_metrics,
        unregister_metric,
    )
    from .sample import SampleUsage, ThelmaResult
    from .thresholds import Thresholds

# Names load on first use: the command line's help reads a settings class without the capability.
_LAZY = {
    'METRIC_NAMES': '.aggregate',
    'METRICS': '.aggregate',
    'MetricScore': '.aggregate',
    'coverage': '.aggregate',
    'macro_average': '.aggregate',
    'self_distinctness': '.aggregate',
    'summarize': '.dataset',
    'Decomposer': '.decompose',
    'split_sentences': '.decompose',
    'RULES': '.diagnosis',
    'Finding': '.diagnosis',
    'Rule': '.diagnosis',
    'Thresholds': '.thresholds',
    'diagnose': '.diagnosis',
    'diagnose_dataset': '.diagnosis',
    'DEFAULT_SD_THRESHOLD': '.evaluator',
    'Thelma': '.evaluator',
    'select_metrics': '.evaluator',
    'BinaryListFormat': '.formats',
    'ListFormat': '.formats',
    'Matcher': '.match',
    'MetaEvaluation': '.meta',
    'MetaReport': '.meta',
    'MetaRow': '.meta',
    'PairOutcome': '.meta',
    'Metric': '.metrics',
    'MetricInputs': '.metrics',
    'get_metric': '.metrics',
    'load_metric_plugins': '.metrics',
    'metric_ids': '.metrics',
    'register_metric': '.metrics',
    'registered_metrics': '.metrics',
    'unregister_metric': '.metrics',
    'SampleUsage': '.sample',
    'ThelmaResult': '.sample',
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = [
    "DEFAULT_SD_THRESHOLD",
    "METRICS",
    "METRIC_NAMES",
    "RULES",
    "BinaryListFormat",
    "Decomposer",
    "Finding",
    "ListFormat",
    "Matcher",
    "MetaEvaluation",
    "MetaReport",
    "MetaRow",
    "Metric",
    "MetricInputs",
    "MetricScore",
    "PairOutcome",
    "Rule",
    "SampleUsage",
    "Thelma",
    "ThelmaResult",
    "Thresholds",
    "coverage",
    "diagnose",
    "diagnose_dataset",
    "get_metric",
    "load_metric_plugins",
    "macro_average",
    "metric_ids",
    "register_metric",
    "registered_metrics",
    "select_metrics",
    "self_distinctness",
    "split_sentences",
    "summarize",
    "unregister_metric",
]
