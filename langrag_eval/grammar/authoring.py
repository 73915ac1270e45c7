"""LLM-written templates (GRAMMAR Algorithm 1, steps 2 and 3): SQL templates from the schema under
the paper's semantic criteria, then text templates per SQL template under linguistic criteria.

Only the schema (names, types, keys, row counts) goes to the model, never a row of data. Every SQL
template is validated; problems are written into the template's ``issues`` so the reviewer sees
them in the saved file, and the dataset builder skips templates that still have errors.

>>> import asyncio
>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.grammar.demo import demo_database
>>> from langrag_eval.grammar.schema import introspect
>>> model = ScriptedModel({"SQL query templates": "<templates>\\nSELECT country FROM office WHERE city = '[office.city]'\\n</templates>",
...                        "natural questions": '{"short": ["Where is the [office.city] office?"]}'})
>>> out = asyncio.run(aauthor_templates(introspect(demo_database()), Judge(model),
...                                     styles=(Style("short", "a brief question", 1),)))
>>> out.templates[0].texts[0].text
'Where is the [office.city] office?'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field, RootModel

from ..evaluator import FunctionEvaluator
from ..prompting.templates import load_prompt
from ..results import Unscored
from ..run.evaluation import Executor, aevaluate
from ..runtime import Judge, synchronous
from ..verdicts.formats import JsonFormat, TagFormat
from .db import sqlglot_dialect
from .schema import DatabaseSchema
from .templates import (
    SqlTemplate, TemplateSet, TextTemplate, bind_placeholders, validate_template, validate_texts,
)

__all__ = [
    "DEFAULT_STYLES",
    "AuthoringResult",
    "SqlTemplateGenerator",
    "Style",
    "TextTemplateGenerator",
    "aauthor_templates",
    "aphrase_templates",
    "author_templates",
    "parse_template_lines",
    "phrase_templates",
]


@dataclass(frozen=True)
class Style:
    """A linguistic criterion: the cluster name, what its phrasings look like, how many to write."""

    name: str
    description: str
    count: int = 2


DEFAULT_STYLES = (
    Style("short", "a brief question of at most about twelve words, the way a busy colleague types it"),
    Style("long", "a wordy question of twenty-five words or more that wraps the request in context "
                  "(why it is asked, what it is for) before asking it"),
)

_NUMBERING = re.compile(r"^\s*(?:\d+\s*[.):]|[-*\u2022])\s*")


def parse_template_lines(block: str) -> list[str]:
    """SQL templates from the model's block: one a line, numbering, fences and blank lines removed.

    >>> parse_template_lines("```sql\\n1. SELECT a FROM t WHERE b = '[t.b]';\\n```")
    ["SELECT a FROM t WHERE b = '[t.b]'"]
    """
    out: list[str] = []
    for line in block.splitlines():
        line = _NUMBERING.sub("", line.strip()).strip().rstrip(";").strip()
        if not line or line.startswith(("```", "--")):
            continue
        out.append(line)
    return out


@dataclass
class SqlTemplateGenerator:
    """g_sql: asks the judge model for SQL templates and validates each one."""

    judge: Judge
    requirements: str = ""
    max_templates: int = 20
    prompt: str | Path = "grammar/sql_templates"

    async def generate(self, schema: DatabaseSchema) -> tuple[list[SqlTemplate], list[str]]:
        """The templates (invalid ones included, with their issues) and any problems of the call."""
        rendered = load_prompt(self.prompt).render(schema=schema.describe(), requirements=self.requirements,
                                                   max_templates=self.max_templates)
        answer = await self.judge.ask(rendered, TagFormat("templates"))
        if isinstance(answer.value, Unscored):
            return [], [f"SQL template generation failed: {answer.value.reason}"]
        templates: list[SqlTemplate] = []
        seen: set[str] = set()
        for sql in parse_template_lines(answer.value)[: self.max_templates]:
            norm = " ".join(sql.lower().split())
            if norm in seen:
                continue
            seen.add(norm)
            check = validate_template(sql, schema, dialect=sqlglot_dialect(schema.dialect))
            issues = tuple([f"error: {e}" for e in check.errors] + [f"warning: {w}" for w in check.warnings])
            templates.append(SqlTemplate(id=f"t{len(templates) + 1}", sql=sql, issues=issues))
        problems = [] if templates else ["the model wrote no SQL template for this schema"]
        return templates, problems


@dataclass
class TextTemplateGenerator:
    """g_t: asks the judge model for phrasings of one SQL template in each style."""

    judge: Judge
    styles: tuple[Style, ...] = DEFAULT_STYLES
    prompt: str | Path = "grammar/text_templates"

    async def generate(self, template: SqlTemplate) -> tuple[SqlTemplate, list[str]]:
        bound = bind_placeholders(template.sql)
        placeholders = [f"[{p.table}.{p.column}]" for p in bound.placeholders]
        rendered = load_prompt(self.prompt).render(
            sql=template.sql, placeholders=placeholders,
            styles=[{"name": s.name, "description": s.description, "count": s.count} for s in self.styles])
        answer = await self.judge.ask(rendered, JsonFormat(RootModel[dict[str, list[str]]]))
        if isinstance(answer.value, Unscored):
            return template, [f"template {template.id}: text generation failed: {answer.value.reason}"]
        by_style = answer.value.root
        texts: list[TextTemplate] = []
        problems: list[str] = []
        for style in self.styles:
            written = [t.strip() for t in by_style.get(style.name, []) if t.strip()]
            if not written:
                problems.append(f"template {template.id}: the model wrote no {style.name!r} phrasing")
            for j, text in enumerate(written[: style.count], start=1):
                texts.append(TextTemplate(id=f"{style.name}-{j}", style=style.name, text=text))
        candidate = template.model_copy(update={"texts": tuple(texts)})
        kept, bad = validate_texts(candidate, bound)
        return candidate.model_copy(update={"texts": tuple(kept)}), problems + bad


@dataclass
class AuthoringResult:
    templates: list[SqlTemplate]
    problems: list[str] = field(default_factory=list)

    def to_template_set(self, database: str | None = None) -> TemplateSet:
        return TemplateSet(database=database, templates=self.templates)


class _Phrased(BaseModel):
    template: SqlTemplate
    problems: list[str] = Field(default_factory=list)


async def aphrase_templates(templates: Sequence[SqlTemplate], writer: TextTemplateGenerator, *,
                            skip_errors: bool = False, concurrency: int = 8,
                            executor: Executor | None = None) -> AuthoringResult:
    """Step 3 of Algorithm 1 for each template, through :func:`langrag_eval.run.aevaluate` (each
    template a sample, phrased on ``executor``, at most ``concurrency`` at once). With
    ``skip_errors``, a template with errors is left unphrased until the reviewer fixes them. A
    template whose phrasing failed is kept as it was, with the reason among the problems."""
    async def phrase(t: SqlTemplate) -> _Phrased:
        if skip_errors and any(i.startswith("error:") for i in t.issues):
            return _Phrased(template=t, problems=[f"template {t.id}: not phrased until its errors are fixed: "
                                                  + "; ".join(i[7:] for i in t.issues if i.startswith("error:"))])
        template, problems = await writer.generate(t)
        return _Phrased(template=template, problems=problems)

    step = FunctionEvaluator(phrase, "grammar/text_templates", _Phrased, description="phrasing templates")
    run = await aevaluate(templates, {"phrasing": step}, concurrency=concurrency, executor=executor)
    out = AuthoringResult(templates=[])
    for t, r in zip(templates, run["phrasing"]):
        if isinstance(r, Unscored):
            out.templates.append(t)
            out.problems.append(f"template {t.id}: text generation failed: {r.reason}")
        else:
            out.templates.append(r.template)
            out.problems.extend(r.problems)
    return out


async def aauthor_templates(schema: DatabaseSchema, judge: Judge, *, text_judge: Judge | None = None,
                            styles: tuple[Style, ...] = DEFAULT_STYLES, requirements: str = "",
                            max_templates: int = 20, concurrency: int = 8,
                            executor: Executor | None = None) -> AuthoringResult:
    """Steps 2 and 3 of Algorithm 1: SQL templates, then text templates for each one without
    errors (a template the reviewer must fix first gets its phrasings after reloading)."""
    sql_templates, problems = await SqlTemplateGenerator(judge, requirements, max_templates).generate(schema)
    phrased = await aphrase_templates(sql_templates, TextTemplateGenerator(text_judge or judge, styles),
                                      skip_errors=True, concurrency=concurrency, executor=executor)
    return AuthoringResult(templates=phrased.templates, problems=problems + phrased.problems)


author_templates = synchronous(aauthor_templates)
phrase_templates = synchronous(aphrase_templates)
