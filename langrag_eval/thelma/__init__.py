"""THELMA (Patel et al., 2025): reference-free evaluation of RAG question answering from (query,
retrieved sources, response) alone, with a diagnosis of which pipeline component to improve.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.thelma import Thelma, ThelmaSample, ThelmaScript
>>> script = ThelmaScript(questions={"Who built it?": ["Who built it?"]},
...                       answers={("Who built it?", "Ada built it."): 1})
>>> Thelma(Judge(script.model()), metrics=("sqc",)).evaluate_sync(
...     ThelmaSample(query="Who built it?", sources=["Ada built it."])).score("sqc")
1.0
"""

from .aggregate import METRIC_NAMES, METRICS, MetricScore, coverage, macro_average, self_distinctness
from .decompose import Decomposer, split_sentences
from .diagnosis import RULES, Finding, Rule, Thresholds, diagnose, diagnose_dataset
from .evaluator import DEFAULT_SD_THRESHOLD, Thelma
from .formats import BinaryListFormat, ListFormat
from .match import Matcher
from .sample import SampleUsage, ThelmaResult, ThelmaSample
from .scripted import ThelmaScript, synthetic_dataset
from .dataset import ThelmaReport, evaluate_dataset, evaluate_dataset_sync, summarize
from .meta import MetaEvaluation, MetaReport, MetaRow, PairOutcome

__all__ = [
    "Thelma", "ThelmaSample", "ThelmaResult", "SampleUsage", "MetricScore", "METRICS", "METRIC_NAMES",
    "DEFAULT_SD_THRESHOLD", "Decomposer", "Matcher", "split_sentences", "ListFormat", "BinaryListFormat",
    "macro_average", "coverage", "self_distinctness", "Thresholds", "Finding", "Rule", "RULES",
    "diagnose", "diagnose_dataset", "ThelmaScript", "synthetic_dataset", "ThelmaReport", "evaluate_dataset",
    "evaluate_dataset_sync", "summarize", "MetaEvaluation", "MetaReport", "MetaRow", "PairOutcome",
]
