"""From templates to evaluation data (GRAMMAR, Algorithm 1 lines 6-17, section 3.2).

For each valid SQL template: the distinct non-NULL values of every placeholder's column
(``SELECT DISTINCT``, built with SQLAlchemy Core so identifiers are quoted), their Cartesian product,
and for each combination the template run with the values *bound as parameters* on a read-only
connection. A combination with exactly one distinct answer row becomes one SQL logic, phrased by
every text template. Combinations with no answer or several answers are dropped, or kept with a
``flag`` when asked.

>>> from langrag_eval.grammar.demo import demo_database, demo_templates_path
>>> from langrag_eval.grammar.templates import load_templates
>>> data = build_dataset(demo_database(), load_templates(demo_templates_path()))
>>> q = next(q for q in data.queries if q.template_id == "office-country" and "Zürich" in q.question)
>>> q.answer
'Switzerland'
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import itertools
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError, DataError
from ..files import atomic_write
from ..io import read_text
from .db import readonly_engine, run_many, sqlglot_dialect
from .schema import DatabaseSchema, introspect
from .templates import (
    _TEXT_PLACEHOLDER,
    Placeholder,
    SqlTemplate,
    TemplateSet,
    validate_template,
    validate_texts,
)

__all__ = [
    "GrammarDataset",
    "GrammarQuery",
    "TemplateReport",
    "build_dataset",
    "fill_text",
    "format_value",
    "read_dataset",
    "stratify",
]

Policy = Literal["drop", "flag"]


class GrammarQuery(BaseModel):
    """One text query with its ground truth. ``logic_id`` names the SQL query (template + values)
    it phrases; queries sharing it form one group in the modular evaluation."""

    model_config = ConfigDict(frozen=True)

    id: str
    logic_id: str
    template_id: str
    text_id: str
    style: str
    question: str
    answer: str | None
    answer_values: list[Any] | None = None
    sql: str
    params: dict[str, Any]
    flag: Literal["no_answer", "multiple_answers"] | None = None


class TemplateReport(BaseModel):
    template_id: str
    combinations: int = 0
    logics: int = 0
    queries: int = 0
    no_answer: int = 0
    multiple_answers: int = 0
    skipped_combinations: int = 0
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class GrammarDataset(BaseModel):
    queries: list[GrammarQuery]
    reports: list[TemplateReport]
    problems: list[str] = Field(default_factory=list)

    def to_jsonl(self, path: str | Path) -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(target) as f:
            for q in self.queries:
                f.write(json.dumps(q.model_dump(mode="json"), ensure_ascii=False) + "\n")
        return target


def format_value(value: Any) -> str:
    """How a database value reads in a question or answer: ``19.0`` as ``19``, dates in ISO form."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, decimal.Decimal):
        return format(value.normalize(), "f") if value == value.to_integral() else str(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def fill_text(text: str, values: dict[str, Any]) -> str:
    """Put formatted values into a text template's ``[table.column]`` placeholders (case-insensitive)."""
    return _TEXT_PLACEHOLDER.sub(
        lambda m: format_value(values[f"{m['table']}.{m['column']}".lower()]), text)


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return format_value(value)


def _distinct(engine: sa.Engine, schema: DatabaseSchema, p: Placeholder) -> list[Any]:
    table = schema.table(p.table)
    column = table.column(p.column) if table else None
    if table is None or column is None:
        return []
    col = sa.column(column.name)
    query = sa.select(col).distinct().select_from(sa.table(table.name)).where(col.is_not(None)).order_by(col)
    with engine.connect() as conn:
        return [r[0] for r in conn.execute(query)]


def _logic_id(template_id: str, params: dict[str, Any]) -> str:
    payload = json.dumps({k: _json_value(v) for k, v in sorted(params.items())}, ensure_ascii=False)
    return f"{template_id}:{hashlib.sha256(payload.encode('utf-8')).hexdigest()[:10]}"


def _phrase(template: SqlTemplate, texts: list, placeholders: tuple[Placeholder, ...], combo: tuple,
            params: dict[str, Any], rows: list[tuple[Any, ...]], report: TemplateReport, sql: str,
            on_no_answer: Policy, on_multiple: Policy) -> list[GrammarQuery]:
    """One SQL query's text forms, or none when its answer is missing or ambiguous and dropped."""
    distinct_rows = list(dict.fromkeys(r for r in rows if any(v is not None for v in r)))
    flag: Literal["no_answer", "multiple_answers"] | None = None
    if not distinct_rows:
        report.no_answer += 1
        flag = "no_answer"
        if on_no_answer == "drop":
            return []
    elif len(distinct_rows) > 1:
        report.multiple_answers += 1
        flag = "multiple_answers"
        if on_multiple == "drop":
            return []
    answer_values = [[_json_value(v) for v in row] for row in distinct_rows]
    answer = "; ".join(", ".join(format_value(v) for v in row if v is not None) for row in distinct_rows) or None
    by_key = {p.key: v for p, v in zip(placeholders, combo)}
    logic = _logic_id(template.id, by_key)
    report.logics += 1
    report.queries += len(texts)
    return [GrammarQuery(id=f"{logic}/{t.id}", logic_id=logic, template_id=template.id, text_id=t.id,
                         style=t.style, question=fill_text(t.text, by_key), answer=answer,
                         answer_values=answer_values[0] if len(answer_values) == 1 else answer_values or None,
                         sql=sql, params={k: _json_value(v) for k, v in params.items()}, flag=flag)
            for t in texts]


def build_dataset(db: str | Path | sa.Engine, templates: TemplateSet | list[SqlTemplate], *,
                  schema: DatabaseSchema | None = None, on_no_answer: Policy = "drop",
                  on_multiple: Policy = "drop", max_combinations: int = 5000, max_answer_rows: int = 20,
                  seed: int = 0) -> GrammarDataset:
    """Generate every (text query, answer) pair the templates allow. One template's problems (a
    missing column, an empty table) are reported in its :class:`TemplateReport`; the others run."""
    if max_combinations < 1:
        raise ConfigError("max_combinations must be at least 1")
    engine = db if isinstance(db, sa.Engine) else readonly_engine(db)
    schema = schema or introspect(engine)
    dialect = sqlglot_dialect(engine)
    items = templates.templates if isinstance(templates, TemplateSet) else list(templates)
    problems = list(templates.problems) if isinstance(templates, TemplateSet) else []
    queries: list[GrammarQuery] = []
    reports: list[TemplateReport] = []
    rng = random.Random(seed)
    for template in items:
        report = TemplateReport(template_id=template.id)
        reports.append(report)
        check = validate_template(template.sql, schema, dialect=dialect)
        report.warnings.extend(check.warnings)
        if not check.ok or check.bound is None:
            report.errors.extend(check.errors)
            continue
        texts, text_problems = validate_texts(template, check.bound)
        report.errors.extend(text_problems)
        if not texts:
            report.errors.append(f"template {template.id} has no usable text template")
            continue
        domains = [_distinct(engine, schema, p) for p in check.bound.placeholders]
        for p, values in zip(check.bound.placeholders, domains):
            if not values:
                report.errors.append(f"placeholder [{p.table}.{p.column}] has no non-NULL values "
                                     f"(table {p.table} is empty or the column is all NULL)")
        combos = list(itertools.product(*domains))
        report.combinations = len(combos)
        if len(combos) > max_combinations:
            report.skipped_combinations = len(combos) - max_combinations
            combos = rng.sample(combos, max_combinations)
        param_sets = [{p.name: v for p, v in zip(check.bound.placeholders, combo)} for combo in combos]
        try:
            for combo, params, rows in zip(combos, param_sets, run_many(
                    engine, check.bound.sql, param_sets, max_rows=max_answer_rows)):
                queries.extend(_phrase(template, texts, check.bound.placeholders, combo, params, rows,
                                       report, check.bound.sql, on_no_answer, on_multiple))
        except (sa.exc.DBAPIError, DataError) as exc:
            report.errors.append(f"running template {template.id} failed: {getattr(exc, 'orig', None) or exc}")
    return GrammarDataset(queries=queries, reports=reports, problems=problems)


def stratify(queries: list[GrammarQuery], per_logic: int, *, seed: int = 0) -> tuple[list[GrammarQuery], int]:
    """Keep exactly ``per_logic`` text forms of every SQL logic, balanced across styles (round-robin
    over styles, seeded within a style), so every group weighs the same (section 4.2). Logics with
    fewer forms are dropped; returns the kept queries and how many logics were dropped."""
    if per_logic < 1:
        raise ConfigError("per_logic must be at least 1")
    rng = random.Random(seed)
    groups: dict[str, list[GrammarQuery]] = defaultdict(list)
    for q in queries:
        groups[q.logic_id].append(q)
    kept: list[GrammarQuery] = []
    dropped = 0
    for logic in groups:
        forms = groups[logic]
        if len(forms) < per_logic:
            dropped += 1
            continue
        by_style: dict[str, list[GrammarQuery]] = defaultdict(list)
        for q in forms:
            by_style[q.style].append(q)
        for bucket in by_style.values():
            rng.shuffle(bucket)
        order = [q for tier in itertools.zip_longest(*(by_style[s] for s in sorted(by_style)))
                 for q in tier if q is not None]
        chosen = {q.id for q in order[:per_logic]}
        kept.extend(q for q in forms if q.id in chosen)
    return kept, dropped


def read_dataset(path: str | Path) -> list[GrammarQuery]:
    """Read a dataset JSONL written by :meth:`GrammarDataset.to_jsonl`; errors name line and field."""
    source = Path(path)
    lines = read_text(source, what="dataset file").splitlines()
    out: list[GrammarQuery] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(GrammarQuery.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or None
            raise DataError(first["msg"], path=str(source), line=number, field=where) from None
    if not out:
        raise DataError("the dataset holds no queries", path=str(source))
    return out
