"""GRAMMAR (Li et al., 2024): grounded query/answer data from a relational database, and a modular
evaluation that tells knowledge gaps from robustness failures and retrieval failures from LM ones.

Generation (Algorithm 1): :func:`introspect` the schema, have a model write SQL templates
(:func:`aauthor_templates` / :func:`author_templates`), review them in the JSON file (:func:`save_templates` /
:func:`load_templates`), then :func:`build_dataset` fills placeholders with ``SELECT DISTINCT``
values and runs every SQL query read-only with bound parameters.

Evaluation (section 3.3): :func:`evaluate_answers` grades answers with :class:`ReferenceGrader`,
groups them by SQL logic and stores the ``grammar`` artifact; the maths lives in
:mod:`langrag_eval.grammar.analysis`, the reference-free evaluators in
:mod:`langrag_eval.grammar.reliability`.

>>> from langrag_eval.grammar import build_dataset, demo_database, demo_templates_path, load_templates
>>> data = build_dataset(demo_database(), load_templates(demo_templates_path()))
>>> len({q.logic_id for q in data.queries}), len(data.queries)
(42, 84)
"""

try:  # GRAMMAR's own dependencies come with the 'grammar' extra
    import sqlalchemy as _sqlalchemy  # noqa: F401
    import sqlglot as _sqlglot  # noqa: F401
except ImportError as _missing:  # pragma: no cover - every test environment has the extra
    from ..errors import ConfigError as _ConfigError
    raise _ConfigError(f"GRAMMAR needs {_missing.name}: pip install 'langrag-eval[grammar]'") from None

from .analysis import (
    ClusterComparison, Group, ItemResult, Metrics, Proportion, Reliability, attribute_failures,
    binary_reliability, compare_clusters, group_results, metrics, wilson_interval, without_lm_failures,
)
from .authoring import (
    DEFAULT_STYLES, AuthoringResult, SqlTemplateGenerator, Style, TextTemplateGenerator,
    aauthor_templates, aphrase_templates, author_templates, phrase_templates,
)
from .dataset import GrammarDataset, GrammarQuery, TemplateReport, build_dataset, read_dataset, stratify
from .db import guard_select, readonly_engine, run_select
from .demo import demo_database, demo_templates_path
from .evaluate import ARTIFACT, aevaluate_answers, as_pipeline_queries, evaluate_answers
from .grading import Correctness, CorrectnessFormat, ReferenceGrader
from .reliability import (
    EvaluatorReport, FreeVerdict, FunctionVerdict, RagasFact, ReliabilitySample, SelfCheckQA,
    aassess_reliability, assess_reliability,
)
from .schema import DatabaseSchema, introspect
from .templates import (
    SqlTemplate, TemplateSet, TextTemplate, bind_placeholders, load_templates, save_templates,
    validate_template,
)

__all__ = [
                       "ARTIFACT",
                       "DEFAULT_STYLES",
                       "AuthoringResult",
                       "ClusterComparison",
                       "Correctness",
                       "CorrectnessFormat",
                       "DatabaseSchema",
                       "EvaluatorReport",
                       "FreeVerdict",
                       "FunctionVerdict",
                       "GrammarDataset",
                       "GrammarQuery",
                       "Group",
                       "ItemResult",
                       "Metrics",
                       "Proportion",
                       "RagasFact",
                       "ReferenceGrader",
                       "Reliability",
                       "ReliabilitySample",
                       "SelfCheckQA",
                       "SqlTemplate",
                       "SqlTemplateGenerator",
                       "Style",
                       "TemplateReport",
                       "TemplateSet",
                       "TextTemplate",
                       "TextTemplateGenerator",
                       "as_pipeline_queries",
                       "aassess_reliability",
                       "assess_reliability",
                       "attribute_failures",
                       "aauthor_templates",
                       "aphrase_templates",
                       "author_templates",
                       "phrase_templates",
                       "binary_reliability",
                       "bind_placeholders",
                       "build_dataset",
                       "compare_clusters",
                       "demo_database",
                       "demo_templates_path",
                       "aevaluate_answers",
                       "evaluate_answers",
                       "group_results",
                       "guard_select",
                       "introspect",
                       "load_templates",
                       "metrics",
                       "read_dataset",
                       "readonly_engine",
                       "run_select",
                       "save_templates",
                       "stratify",
                       "validate_template",
                       "wilson_interval",
                       "without_lm_failures",
]
