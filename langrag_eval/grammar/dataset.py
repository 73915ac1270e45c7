"""From templates to evaluation data (GRAMMAR, Algorithm 1 lines 6-17, section 3.2).

For each valid SQL template: the distinct non-NULL values of every placeholder's column
(``SELECT DISTINCT``, built with SQLAlchemy Core so identifiers are quoted), their Cartesian product,
and for each combination the template run with the values *bound as parameters* on a read-only
connection. The combination's answer set is the engine's full distinct result: every row is read
and de-duplicated (by Python value) before any cap applies. NULL is an answer value like any other:
``{NULL, 'Vários'}`` is two answers, not one.

A combination with exactly one distinct answer row becomes one SQL logic, phrased by every text
template. The others are each counted in the template's :class:`TemplateReport`, never lost silently:

* no row at all (``no_answer``): dropped, or kept with that ``flag`` (``on_no_answer="flag"``);
* several distinct rows (``multiple_answers``): dropped, or kept with that flag (``on_multiple``);
* only NULL (``null_answer``, e.g. a customer without a company): dropped (``on_null="drop"``, the
  default), or kept (``on_null="unknown"``) with the answer ``null_text`` ("unknown"), the flag
  ``null_answer`` and ``answer_rows == [[None]]``; such a query is graded (the database knows
  there is no value, and a system should say so);
* more than ``max_answer_rows`` distinct rows (``too_many_answers``): always dropped, because only
  part of the answer set was read and a partial set must not pass for the database's answer.
  ``max_answer_rows=None`` reads every row.

A NULL inside an otherwise filled row reads as ``null_text`` in the answer text.

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
from ..files.writing import atomic_write
from ..files.jsontext import lines_of, parse_json
from ..files.reading import read_text
from .db import AnswerRows, database_error, readonly_engine, run_many, sqlglot_dialect
from .schema import DatabaseSchema, introspect
from .templates import (
    _TEXT_PLACEHOLDER, Placeholder, SqlTemplate, TemplateSet, validate_template, validate_texts,
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
NullPolicy = Literal["drop", "unknown"]
Flag = Literal["no_answer", "multiple_answers", "null_answer"]


class GrammarQuery(BaseModel):
    """One text query with its ground truth. ``logic_id`` names the SQL query (template + values)
    it phrases; queries sharing it form one group in the modular evaluation. ``answer_rows`` is the
    full distinct answer set the database returned (JSON values, NULL as ``None``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    logic_id: str
    template_id: str
    text_id: str
    style: str
    question: str
    answer: str | None
    answer_values: list[Any] | None = None
    answer_rows: list[list[Any]] | None = None
    sql: str
    params: dict[str, Any]
    flag: Flag | None = None


class TemplateReport(BaseModel):
    template_id: str
    combinations: int = 0
    logics: int = 0
    queries: int = 0
    no_answer: int = 0
    multiple_answers: int = 0
    null_answer: int = 0
    too_many_answers: int = 0
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
            params: dict[str, Any], found: AnswerRows, report: TemplateReport, sql: str,
            policies: dict[str, str], null_text: str) -> list[GrammarQuery]:
    """One SQL query's text forms, or none when its answer is missing, ambiguous, NULL or too large
    and the policy drops it. Every outcome is counted in ``report``."""
    rows = found.rows
    flag: Flag | None = None
    if not found.complete:
        report.too_many_answers += 1
        return []
    if not rows:
        flag = "no_answer"
    elif len(rows) > 1:
        flag = "multiple_answers"
    elif all(v is None for v in rows[0]):
        flag = "null_answer"
    if flag is not None:
        setattr(report, flag, getattr(report, flag) + 1)
        if policies[flag] == "drop":
            return []
    answer_values = [[_json_value(v) for v in row] for row in rows]
    answer = "; ".join(", ".join(null_text if v is None else format_value(v) for v in row) for row in rows) or None
    by_key = {p.key: v for p, v in zip(placeholders, combo)}
    logic = _logic_id(template.id, by_key)
    report.logics += 1
    report.queries += len(texts)
    return [GrammarQuery(id=f"{logic}/{t.id}", logic_id=logic, template_id=template.id, text_id=t.id,
                         style=t.style, question=fill_text(t.text, by_key), answer=answer,
                         answer_values=answer_values[0] if len(answer_values) == 1 else answer_values or None,
                         answer_rows=answer_values, sql=sql,
                         params={k: _json_value(v) for k, v in params.items()}, flag=flag)
            for t in texts]


def build_dataset(db: str | Path | sa.Engine, templates: TemplateSet | list[SqlTemplate], *,
                  schema: DatabaseSchema | None = None, on_no_answer: Policy = "drop",
                  on_multiple: Policy = "drop", on_null: NullPolicy = "drop", null_text: str = "unknown",
                  max_combinations: int = 5000, max_answer_rows: int | None = 20,
                  seed: int = 0) -> GrammarDataset:
    """Generate every (text query, answer) pair the templates allow. One template's problems (a
    missing column, an empty table) are reported in its :class:`TemplateReport`; the others run.
    The policies for missing, several, NULL-only and too many answers are in the module docstring.
    A URL or path opens :func:`~langrag_eval.grammar.db.readonly_engine` with its statement timeout;
    an engine of your own keeps its own settings (make it with ``readonly_engine`` to keep them)."""
    if max_combinations < 1:
        raise ConfigError("max_combinations must be at least 1")
    if max_answer_rows is not None and max_answer_rows < 1:
        raise ConfigError("max_answer_rows must be at least 1 (or None to read every row)")
    for name, value, allowed in (("on_no_answer", on_no_answer, ("drop", "flag")),
                                 ("on_multiple", on_multiple, ("drop", "flag")),
                                 ("on_null", on_null, ("drop", "unknown"))):
        if value not in allowed:
            raise ConfigError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    policies = {"no_answer": on_no_answer, "multiple_answers": on_multiple,
                "null_answer": "drop" if on_null == "drop" else "keep"}
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
        try:
            domains = [_distinct(engine, schema, p) for p in check.bound.placeholders]
        except sa.exc.SQLAlchemyError as exc:
            report.errors.append(f"reading the values of template {template.id}'s placeholders failed: "
                                 f"{database_error(exc)}")
            continue
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
            for combo, params, found in zip(combos, param_sets, run_many(
                    engine, check.bound.sql, param_sets, max_distinct=max_answer_rows)):
                queries.extend(_phrase(template, texts, check.bound.placeholders, combo, params, found,
                                       report, check.bound.sql, policies, null_text))
        except DataError as exc:
            report.errors.append(f"running template {template.id} failed: {exc}")
        except sa.exc.SQLAlchemyError as exc:
            report.errors.append(f"running template {template.id} failed: {database_error(exc)}")
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
    lines = lines_of(read_text(source, what="dataset file"))
    out: list[GrammarQuery] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            # parsed here, not by pydantic: a repeated key or a NaN is refused, not read as one value
            out.append(GrammarQuery.model_validate(parse_json(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON ({exc.msg})", path=str(source), line=number,
                            field=getattr(exc, "field", None)) from None  # a lone surrogate's field
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or None
            raise DataError(first["msg"], path=str(source), line=number, field=where) from None
    if not out:
        raise DataError("the dataset holds no queries", path=str(source))
    return out
