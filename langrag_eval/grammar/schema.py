"""Schema introspection through SQLAlchemy: tables, columns, keys, row counts, and the problems a
template generator should know about (empty tables, column names that say nothing).

>>> from langrag_eval.grammar.demo import demo_database
>>> schema = introspect(demo_database())
>>> schema.table("Project").column("NAME").name
'name'
>>> print(schema.describe().splitlines()[0])
Table client (5 rows)
"""

from __future__ import annotations

import re
from pathlib import Path

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from .db import database_error, readonly_engine, write_access

__all__ = ["ColumnInfo", "DatabaseSchema", "ForeignKey", "TableInfo", "introspect", "is_meaningless_name"]

# Names like c1, col_2, field3, x, attr7, a_b: identifiers that tell a reader nothing about the entity.
_MEANINGLESS = re.compile(r"^(?:[a-z]|[a-z]{1,2}_?\d+|(?:col|column|field|attr|attribute|var|value|val|"
                          r"data|unnamed|tmp|temp|misc)_?\d*)$", re.IGNORECASE)


def is_meaningless_name(name: str) -> bool:
    """True for identifiers such as ``c1``, ``col_3``, ``x`` or ``field``.

    >>> [is_meaningless_name(n) for n in ("c1", "col_3", "full_name", "Age")]
    [True, True, False, False]
    """
    return bool(_MEANINGLESS.match(name.strip()))


class ColumnInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    type: str
    primary_key: bool = False
    nullable: bool = True


class ForeignKey(BaseModel):
    """``table.columns`` references ``ref_table.ref_columns``."""

    model_config = ConfigDict(frozen=True)

    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]


class TableInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    columns: tuple[ColumnInfo, ...]
    foreign_keys: tuple[ForeignKey, ...] = ()
    rows: int = 0

    def column(self, name: str) -> ColumnInfo | None:
        """The column named ``name``, compared case-insensitively as SQL identifiers usually are."""
        wanted = name.lower()
        return next((c for c in self.columns if c.name.lower() == wanted), None)


class DatabaseSchema(BaseModel):
    """What the SQL template generator sees: structure only, never a row of data."""

    model_config = ConfigDict(frozen=True)

    dialect: str
    tables: tuple[TableInfo, ...]
    warnings: tuple[str, ...] = Field(default=())

    def table(self, name: str) -> TableInfo | None:
        wanted = name.lower()
        return next((t for t in self.tables if t.name.lower() == wanted), None)

    def foreign_key_pairs(self) -> set[frozenset[tuple[str, str]]]:
        """Every declared (table, column) = (table, column) link, lower-cased, in either direction."""
        pairs: set[frozenset[tuple[str, str]]] = set()
        for t in self.tables:
            for fk in t.foreign_keys:
                for col, ref in zip(fk.columns, fk.ref_columns):
                    pairs.add(frozenset({(fk.table.lower(), col.lower()), (fk.ref_table.lower(), ref.lower())}))
        return pairs

    def describe(self) -> str:
        """The schema as plain text for a prompt: tables, typed columns, keys, row counts."""
        lines: list[str] = []
        for t in self.tables:
            lines.append(f"Table {t.name} ({t.rows} rows)")
            for c in t.columns:
                key = " PRIMARY KEY" if c.primary_key else ""
                lines.append(f"  - {c.name} {c.type}{key}")
            for fk in t.foreign_keys:
                lines.append(f"  FOREIGN KEY ({', '.join(fk.columns)}) REFERENCES "
                             f"{fk.ref_table} ({', '.join(fk.ref_columns)})")
        return "\n".join(lines)


def introspect(db: str | Path | sa.Engine) -> DatabaseSchema:
    """Read the schema of ``db`` (a SQLAlchemy URL, a SQLite path, or an engine) read-only."""
    engine = db if isinstance(db, sa.Engine) else readonly_engine(db)
    try:
        return _introspect(engine)
    except sa.exc.SQLAlchemyError as exc:  # unreachable server, missing database, refused login
        raise ConfigError(f"cannot read the database schema: {database_error(exc)}") from None


def _introspect(engine: sa.Engine) -> DatabaseSchema:
    inspector = sa.inspect(engine)
    names = sorted(inspector.get_table_names())
    tables: list[TableInfo] = []
    warnings: list[str] = []
    for name in names:
        pk = set(inspector.get_pk_constraint(name).get("constrained_columns") or [])
        columns = tuple(ColumnInfo(name=c["name"], type=str(c["type"]), primary_key=c["name"] in pk,
                                   nullable=bool(c.get("nullable", True)))
                        for c in inspector.get_columns(name))
        fks = tuple(ForeignKey(table=name, columns=tuple(fk["constrained_columns"]),
                               ref_table=fk["referred_table"], ref_columns=tuple(fk["referred_columns"]))
                    for fk in inspector.get_foreign_keys(name) if fk.get("referred_table"))
        with engine.connect() as conn:
            rows = conn.execute(sa.select(sa.func.count()).select_from(sa.table(name))).scalar_one()
        tables.append(TableInfo(name=name, columns=columns, foreign_keys=fks, rows=int(rows)))
        if rows == 0:
            warnings.append(f"table {name} is empty: templates on it yield no queries")
        vague = [c.name for c in columns if is_meaningless_name(c.name)]
        if vague:
            warnings.append(f"table {name}: column name(s) {', '.join(vague)} say nothing about their "
                            "content; templates using them read poorly (rename them or describe them "
                            "in the requirements)")
    if not tables:
        raise ConfigError("the database has no tables")
    risk = write_access(engine)
    if risk:
        warnings.append(risk)
    return DatabaseSchema(dialect=engine.dialect.name, tables=tuple(tables), warnings=tuple(warnings))
