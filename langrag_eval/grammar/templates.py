"""SQL and text templates with ``[Table.Column]`` placeholders: binding, validation, and the editable
JSON file a human reviews between generation and use (GRAMMAR, Appendix B.2).

A placeholder, quoted or not (``'[company.Name]'`` or ``[company.Name]``), becomes a bound parameter
``:p0``; values never enter SQL text. Validation parses the bound SQL with sqlglot and reports
*errors* (the template cannot run: not one SELECT, unknown table, column or placeholder, no
placeholder) and *warnings* (the paper's criteria: ``*`` projections, projecting a column the WHERE
clause fixes, joins along no declared foreign key, placeholders outside WHERE).

The file is JSON (``ensure_ascii=False``, two-space indent): one object per SQL template, each with
its text templates. Reviewers edit ``sql`` and ``texts`` freely; ``issues`` is rewritten on save.

>>> b = bind_placeholders("SELECT Industry FROM company WHERE Name = '[company.Name]'")
>>> b.sql, [(p.name, p.key) for p in b.placeholders]
('SELECT Industry FROM company WHERE Name = :p0', [('p0', 'company.name')])
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlglot import exp

from ..errors import DataError
from ..files.writing import write_text_atomic
from ..files.jsontext import parse_json
from ..files.reading import read_text
from .db import guard_select
from .schema import DatabaseSchema

__all__ = [
    "BoundSql",
    "Placeholder",
    "SqlTemplate",
    "TemplateSet",
    "TextTemplate",
    "Validation",
    "bind_placeholders",
    "load_templates",
    "save_templates",
    "text_placeholders",
    "validate_template",
    "validate_texts",
]

_SQL_PLACEHOLDER = re.compile(r"(?P<q>['\"]?)\[\s*(?P<table>[A-Za-z_]\w*)\s*\.\s*(?P<column>[A-Za-z_]\w*)\s*\](?P=q)")
_TEXT_PLACEHOLDER = re.compile(r"\[\s*(?P<table>[A-Za-z_]\w*)\s*\.\s*(?P<column>[A-Za-z_]\w*)\s*\]")


@dataclass(frozen=True)
class Placeholder:
    """One ``[table.column]`` placeholder and the parameter name it binds to."""

    name: str
    table: str
    column: str

    @property
    def key(self) -> str:
        return f"{self.table}.{self.column}".lower()


@dataclass(frozen=True)
class BoundSql:
    sql: str
    placeholders: tuple[Placeholder, ...]


def bind_placeholders(sql: str) -> BoundSql:
    """Replace each placeholder (and its quotes) by a ``:pN`` parameter; repeats share a name."""
    seen: dict[str, Placeholder] = {}

    def swap(m: re.Match[str]) -> str:
        key = f"{m['table']}.{m['column']}".lower()
        if key not in seen:
            seen[key] = Placeholder(f"p{len(seen)}", m["table"], m["column"])
        return ":" + seen[key].name

    bound = _SQL_PLACEHOLDER.sub(swap, sql.strip().rstrip(";").strip())
    return BoundSql(bound, tuple(seen.values()))


def text_placeholders(text: str) -> list[str]:
    """Placeholder keys (``table.column``, lower case) a text template uses, in order."""
    return [f"{m['table']}.{m['column']}".lower() for m in _TEXT_PLACEHOLDER.finditer(text)]


class TextTemplate(BaseModel):
    """One phrasing of a SQL template. ``style`` names its linguistic cluster (short, long ...)."""

    model_config = ConfigDict(frozen=True)

    id: str
    style: str
    text: str


class SqlTemplate(BaseModel):
    """One query logic: a SELECT with placeholders, and its phrasings."""

    model_config = ConfigDict(frozen=True)

    id: str
    sql: str
    texts: tuple[TextTemplate, ...] = ()
    note: str | None = None
    issues: tuple[str, ...] = ()


class TemplateSet(BaseModel):
    """The editable file's content. ``problems`` holds what loading skipped; it is never saved."""

    version: int = 1
    database: str | None = None
    templates: list[SqlTemplate] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list, exclude=True)


@dataclass
class Validation:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    bound: BoundSql | None = None

    @property
    def ok(self) -> bool:
        return not self.errors


def validate_template(sql: str, schema: DatabaseSchema, *, dialect: str | None = "sqlite") -> Validation:
    """Check one SQL template against the schema. Errors mean it cannot be used as it stands."""
    v = Validation()
    bound = bind_placeholders(sql)
    v.bound = bound
    if not bound.placeholders:
        v.errors.append("has no [Table.Column] placeholder: every template needs one in its WHERE clause")
    for p in bound.placeholders:
        t = schema.table(p.table)
        if t is None:
            v.errors.append(f"placeholder [{p.table}.{p.column}]: no table {p.table}")
        elif t.column(p.column) is None:
            v.errors.append(f"placeholder [{p.table}.{p.column}]: table {t.name} has no column "
                            f"{p.column} (columns: {', '.join(c.name for c in t.columns)})")
    try:
        tree = guard_select(bound.sql, dialect)
    except DataError as exc:
        v.errors.append(exc.message)
        return v
    _check_tree(tree, bound, schema, v)
    return v


def _check_tree(tree: exp.Expression, bound: BoundSql, schema: DatabaseSchema, v: Validation) -> None:
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    aliases: dict[str, str] = {}
    for t in tree.find_all(exp.Table):
        if t.name.lower() in ctes:
            continue
        info = schema.table(t.name)
        if info is None:
            v.errors.append(f"no table {t.name} in the database "
                            f"(tables: {', '.join(x.name for x in schema.tables)})")
            continue
        aliases[t.alias_or_name.lower()] = info.name
        aliases.setdefault(info.name.lower(), info.name)
    select_aliases = {e.alias.lower() for e in tree.find_all(exp.Alias)}

    def resolve(col: exp.Column) -> tuple[str, str] | None:
        if isinstance(col.this, exp.Star):
            return None
        if col.table:
            if col.table.lower() in ctes:
                return None
            table = aliases.get(col.table.lower())
            if table is None:
                v.errors.append(f"{col.sql()}: no table or alias {col.table} in the query")
                return None
            info = schema.table(table)
            if info is not None and info.column(col.name) is None:
                v.errors.append(f"{col.sql()}: table {table} has no column {col.name}")
                return None
            return table.lower(), col.name.lower()
        owners = [t for t in set(aliases.values()) if schema.table(t).column(col.name)]  # type: ignore[union-attr]
        if not owners:
            if col.name.lower() not in select_aliases and not ctes:
                v.errors.append(f"no table in the query has a column {col.name}")
            return None
        if len(owners) > 1:
            v.warnings.append(f"column {col.name} is ambiguous between {', '.join(sorted(owners))}")
        return owners[0].lower(), col.name.lower()

    resolved = {id(c): resolve(c) for c in tree.find_all(exp.Column)}
    if any(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, exp.Star))
           for s in tree.find_all(exp.Star, exp.Column)):
        v.warnings.append("selects *: name the column(s) that hold the answer")
    fixed = {p.key for p in bound.placeholders}
    for node in tree.find_all(exp.Placeholder):
        if node.find_ancestor(exp.Where) is None:
            v.warnings.append(f"placeholder :{node.name} is outside the WHERE clause")
        parent = node.parent
        if isinstance(parent, exp.Binary):
            other = parent.left if parent.right is node else parent.right
            if isinstance(other, exp.Column) and resolved.get(id(other)):
                fixed.add(".".join(resolved[id(other)]))  # type: ignore[arg-type]
            elif isinstance(other, exp.Literal) and other.is_string:
                # MySQL reads "Name" as a string, not a column: the query would match nothing.
                v.errors.append(f"placeholder :{node.name} is compared with the string {other.sql()}, not "
                                "a column (in MySQL/MariaDB double quotes make a string: quote "
                                "identifiers with backticks)")
    if isinstance(tree, exp.Select):
        for projection in tree.expressions:
            for col in projection.find_all(exp.Column):
                key = resolved.get(id(col))
                if key and ".".join(key) in fixed:
                    v.warnings.append(f"projects {col.sql()}, which the WHERE clause fixes to the "
                                      "placeholder value: the question would contain its answer")
    links = schema.foreign_key_pairs()
    for join in tree.find_all(exp.Join):
        on = join.args.get("on")
        if on is None and not join.args.get("using"):
            v.warnings.append(f"join with {join.this.sql()} has no ON condition (a cross join)")
            continue
        for eq in (on.find_all(exp.EQ) if on is not None else ()):
            left, right = eq.left, eq.right
            if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                a, b = resolved.get(id(left)), resolved.get(id(right))
                if a and b and frozenset({a, b}) not in links:
                    v.warnings.append(f"join on {eq.sql()} follows no declared foreign key")


def validate_texts(template: SqlTemplate, bound: BoundSql) -> tuple[list[TextTemplate], list[str]]:
    """Keep the text templates that name exactly the SQL template's placeholders."""
    wanted = {p.key for p in bound.placeholders}
    kept: list[TextTemplate] = []
    problems: list[str] = []
    for t in template.texts:
        used = set(text_placeholders(t.text))
        missing, extra = sorted(wanted - used), sorted(used - wanted)
        if missing:
            problems.append(f"template {template.id}, text {t.id}: lacks placeholder(s) "
                            f"{', '.join(f'[{k}]' for k in missing)}, so its question would not say which one")
        elif extra:
            problems.append(f"template {template.id}, text {t.id}: uses placeholder(s) "
                            f"{', '.join(f'[{k}]' for k in extra)} that the SQL does not bind")
        else:
            kept.append(t)
    return kept, problems


def save_templates(path: str | Path, templates: TemplateSet) -> Path:
    """Write the editable JSON file (human-readable: UTF-8, indented, one template per object)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = templates.model_dump(mode="json", exclude={"problems"})
    write_text_atomic(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return target


def load_templates(path: str | Path) -> TemplateSet:
    """Read a (possibly hand-edited) template file. A malformed template is skipped with a message
    naming file, line and field in ``problems``; the others load."""
    source = Path(path)
    text = read_text(source, what="template file")
    try:
        raw = parse_json(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON: {exc.msg} (column {exc.colno})", path=str(source),
                        line=exc.lineno) from None
    if isinstance(raw, list):
        raw = {"templates": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("templates"), list):
        raise DataError('expected an object with a "templates" list', path=str(source), field="templates")
    out = TemplateSet(version=int(raw.get("version", 1)), database=raw.get("database"))
    seen: set[str] = set()
    taken = {str(t["id"]) for t in raw["templates"] if isinstance(t, dict) and "id" in t}
    for i, item in enumerate(raw["templates"]):
        line = _line_of(text, item, i)
        try:
            if isinstance(item, dict) and "id" not in item:
                n = i + 1  # a template the reviewer added without an id gets the next free t<n>
                while f"t{n}" in taken:
                    n += 1
                taken.add(f"t{n}")
                item = {**item, "id": f"t{n}"}
            template = SqlTemplate.model_validate(_texts_with_ids(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            out.problems.append(str(DataError(first["msg"], path=str(source), line=line,
                                              field=f"templates[{i}]" + (f".{where}" if where else ""))))
            continue
        if template.id in seen:
            out.problems.append(str(DataError(f"duplicate template id {template.id!r}; skipped",
                                              path=str(source), line=line, field=f"templates[{i}].id")))
            continue
        seen.add(template.id)
        out.templates.append(template)
    return out


def _texts_with_ids(item: Any) -> Any:
    """Reviewers may add a text as a bare string or without an id; give it one."""
    if not isinstance(item, dict) or not isinstance(item.get("texts"), list):
        return item
    texts = []
    for j, t in enumerate(item["texts"]):
        if isinstance(t, str):
            t = {"text": t}
        if isinstance(t, dict):
            t = {"id": f"{t.get('style', 'text')}-{j + 1}", "style": "default", **t}
        texts.append(t)
    return {**item, "texts": texts}


def _line_of(text: str, item: Any, index: int) -> int | None:
    """The line where template ``index`` starts: found by its id, else by its position."""
    if isinstance(item, dict) and isinstance(item.get("id"), str):
        m = re.search(r'"id"\s*:\s*' + re.escape(json.dumps(item["id"], ensure_ascii=False)), text)
        if m:
            return text.count("\n", 0, m.start()) + 1
    starts = [m.start() for m in re.finditer(r"\{", text)][1:]  # skip the file's own object
    depth_ok = [s for s in starts if text.count("[", 0, s) - text.count("]", 0, s) == 1]
    return text.count("\n", 0, depth_ok[index]) + 1 if index < len(depth_ok) else None
