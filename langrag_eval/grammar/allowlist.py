"""What a GRAMMAR query may call: an allowlist per SQL dialect, not a blocklist.

A question-answering SELECT needs aggregates, string, date and arithmetic functions, casts,
comparisons, ``CASE`` and ``COALESCE``; the engines offer thousands more (PostgreSQL alone about
2,600 function names), among them functions that read files, run SQL given as text, write the
catalog inside a read-only transaction, take locks, wait or allocate without bound. A blocklist
misses some of them; this module accepts a statement only when

* every node of sqlglot's tree is of a kind listed in :data:`NODES` (operators, clauses, the typed
  functions sqlglot knows), every function sqlglot does not know is named in the dialect's list,
  and every cast is to a plain scalar type;
* every name written before ``(`` in the token stream, folded as the server folds it (unquoted
  names lowercased, PostgreSQL's quoted names kept exact, ``U&"..."`` escapes decoded, a
  ``pg_catalog.`` prefix dropped, any other schema refused), is a function on the dialect's list,
  a cast type after ``AS``/``::``, a keyword of the SELECT grammar, or the name of a CTE or alias
  the statement declares. The tree alone is not enough: sqlglot maps many spellings to one typed
  node, and the server calls the spelling.

Both checks read the SQL text the server will run; nothing is rewritten.

>>> import sqlglot
>>> check_allowed(sqlglot.parse_one("SELECT upper(name) FROM t", read="postgres"),
...               sqlglot.tokenize("SELECT upper(name) FROM t", read="postgres"), "postgres")
>>> sql = "SELECT ts_stat('SELECT 1')"
>>> check_allowed(sqlglot.parse_one(sql, read="postgres"), sqlglot.tokenize(sql, read="postgres"), "postgres")
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
langrag_eval.errors.DataError: the SQL calls ts_stat, which is not on the list of functions ...
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from ..errors import DataError

__all__ = ["FUNCTIONS", "NODES", "allowed_functions", "check_allowed", "fold_unicode_escapes"]

_COMMON = """count sum avg min max coalesce nullif abs round ceil ceiling floor mod sign sqrt power
    lower upper length trim ltrim rtrim replace substr substring row_number rank dense_rank ntile lag
    lead first_value last_value nth_value percent_rank cume_dist cast"""
# Per dialect, as each server spells them. Left out on purpose even where harmless-looking: value
# builders that allocate what their argument says (randomblob, zeroblob, repeat, lpad/rpad, space,
# printf/format), anything reading settings, sessions, files or the catalog through a function,
# random values, sequences, locks and waits.
FUNCTIONS: dict[str, frozenset[str]] = {
    "sqlite": frozenset((_COMMON + """ ifnull iif instr date time datetime julianday strftime
        unixepoch total group_concat pow ln log log10 log2 exp trunc typeof""").split()),
    "postgres": frozenset((_COMMON + """ char_length character_length octet_length position strpos
        initcap left right split_part btrim concat concat_ws reverse to_char to_date to_timestamp
        to_number date_part date_trunc extract age now make_date greatest least string_agg
        array_agg bool_and bool_or every stddev stddev_pop stddev_samp variance var_pop var_samp
        percentile_cont percentile_disc mode trunc div log ln exp cbrt""").split()),
    "mysql": frozenset((_COMMON + """ ifnull if isnull nvl char_length character_length
        octet_length locate instr position left right concat concat_ws mid lcase ucase reverse
        strcmp substring_index find_in_set field date_format time_format year month day dayofmonth
        dayofweek dayofyear hour minute second quarter week weekday weekofyear yearweek monthname
        dayname date time datediff timediff timestampdiff timestampadd date_add date_sub adddate
        subdate str_to_date curdate curtime now last_day makedate from_days to_days extract
        greatest least group_concat std stddev stddev_pop stddev_samp variance var_pop var_samp
        median percentile_cont percentile_disc truncate pow ln log log10 log2 exp convert""").split()),
}

# Words of the SELECT grammar that may stand before "(" without being a call.
_KEYWORDS = frozenset("""in exists as over filter values any all some from join on and or not where
    select case when then else like ilike glob regexp rlike between is using by distinct union
    intersect except limit offset having group with recursive escape div mod""".split())
# Infix words that SQLite and MySQL also offer as functions (like(a, b), glob(a, b)): a keyword
# only after a value or NOT, a call anywhere else.
_INFIX = frozenset("like ilike glob regexp rlike escape div mod".split())
_VALUE_END = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.NUMBER, TokenType.STRING,
                        TokenType.R_PAREN, TokenType.NULL, TokenType.TRUE, TokenType.FALSE,
                        TokenType.PLACEHOLDER, TokenType.COLON, TokenType.NOT})
_CAST_TYPES = frozenset("""int integer int2 int4 int8 bigint smallint tinyint mediumint decimal
    numeric dec real float float4 float8 double precision varchar char character varying text nchar
    nvarchar date time timestamp timestamptz datetime boolean bool signed unsigned interval""".split())

# PostgreSQL reads any run of these as one operator (its catalog has 74 of them, users may add
# more); sqlglot splits runs it does not know, so touching operators are refused, not guessed at.
_OPERATOR_CHARS = frozenset("+-*/<>=~!@#%^&|`?")

_T = exp.DataType.Type
_DATA_TYPES = frozenset(getattr(_T, n) for n in """INT BIGINT SMALLINT TINYINT MEDIUMINT UINT UBIGINT
    USMALLINT UTINYINT UMEDIUMINT DECIMAL UDECIMAL DOUBLE FLOAT TEXT VARCHAR CHAR NCHAR NVARCHAR DATE
    DATETIME TIMESTAMP TIMESTAMPTZ TIMESTAMPLTZ TIME TIMETZ BOOLEAN INTERVAL CHARACTER_SET""".split()
                         if hasattr(_T, n))

# Every kind of node a question-answering SELECT needs. Typed functions stand here under
# sqlglot's names; the token check below holds them to the dialect's spelling list.
NODES: frozenset[type] = frozenset(c for c in (getattr(exp, n, None) for n in """
    Select Union Intersect Except Subquery With CTE TableAlias From Join Where Group Having Order
    Ordered Limit Offset Fetch Distinct Column Identifier Table Alias Star Literal Null Boolean
    Placeholder Paren Tuple Values In Between Like ILike Glob RegexpLike Escape Is Not And Or EQ NEQ
    GT GTE LT LTE NullSafeEQ NullSafeNEQ Add Sub Mul Div IntDiv Mod Neg DPipe Case If Cast DataType
    DataTypeParam Var Exists Any All Window WindowSpec Filter WithinGroup IgnoreNulls RespectNulls
    Interval Collate Dot Anonymous
    Count Sum Avg Min Max Coalesce Nullif Abs Round Ceil Floor Sign Sqrt Pow Exp Ln Log Cbrt Trunc
    Greatest Least Lower Upper Length Trim Replace Substring SubstringIndex StrPosition Left Right
    Initcap Reverse SplitPart Concat ConcatWs GroupConcat ArrayAgg LogicalAnd LogicalOr Stddev
    StddevPop StddevSamp Variance VariancePop Median Mode PercentileCont PercentileDisc RowNumber
    Rank DenseRank Ntile Lag Lead FirstValue LastValue NthValue PercentRank CumeDist Typeof
    CurrentDate CurrentTime CurrentTimestamp Date Time Year Quarter Month Week WeekOfYear Day
    DayOfMonth DayOfWeek DayOfYear Dayname Hour Minute Second LastDay Extract DateAdd DateSub
    DateDiff TimestampAdd TimestampDiff TimestampTrunc DateTrunc TimeToStr StrToDate StrToTime
    UnixToTime TsOrDsToDate TsOrDsToTimestamp ToNumber
""".split()) if c is not None)


def allowed_functions(dialect: str | None) -> frozenset[str]:
    """The function names a query may call in ``dialect`` (sqlglot's name; None: SQLite's list)."""
    common = FUNCTIONS["sqlite"] & FUNCTIONS["postgres"] & FUNCTIONS["mysql"]
    return FUNCTIONS.get(dialect or "sqlite", common)


def fold_unicode_escapes(text: str, escape: str = "\\") -> str:
    r"""The text of a PostgreSQL ``U&"..."`` identifier or string with its escapes decoded.

    >>> fold_unicode_escapes(r"pg_read_fil\0065")
    'pg_read_file'
    """
    e = re.escape(escape)
    pattern = re.compile(rf"{e}{e}|{e}\+([0-9A-Fa-f]{{6}})|{e}([0-9A-Fa-f]{{4}})")

    def one(m: re.Match[str]) -> str:
        code = m.group(1) or m.group(2)
        return escape if code is None else chr(int(code, 16)) if int(code, 16) < 0x110000 else "\ufffd"

    return pattern.sub(one, text)


def _name(token: Any, dialect: str | None) -> str:
    """A called name as the server reads it: PostgreSQL keeps a quoted name exact; every other
    spelling (and every MySQL/SQLite name, which ignore case) is lowercased."""
    if token.token_type == TokenType.IDENTIFIER and dialect == "postgres":
        return str(token.text)
    return str(token.text).lower()


def _refuse(name: str) -> DataError:
    shown = name if name.isprintable() and len(name) <= 60 else repr(name[:60])
    return DataError(f"the SQL calls {shown}, which is not on the list of functions a question's "
                     "query may use (README: What is safe)")


def check_allowed(tree: exp.Expression, tokens: list[Any], dialect: str | None) -> None:
    """Raise DataError unless every call, operator and cast in the statement is allowed."""
    names = allowed_functions(dialect)
    declared = {n.name for n in tree.find_all(exp.TableAlias) if n.name}
    declared |= {i.name for a in tree.find_all(exp.TableAlias) for i in a.columns}
    _check_tokens(tokens, dialect, names, declared)
    _check_tree(tree, dialect, names)


def _check_tokens(tokens: list[Any], dialect: str | None, names: frozenset[str], declared: set[str]) -> None:
    calls: list[str] = []  # the word before each "(" still open: CONVERT(x, CHAR(3)) names a type
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        before = tokens[i - 1] if i else None
        if (before is not None and before.end + 1 == token.start and _operator(before) and _operator(token)
                and not _splits(str(before.text), str(token.text))):
            raise DataError(f"the SQL writes the operator {before.text}{token.text}, which sqlglot reads as "
                            "two; put a space between them")
        if token.token_type == TokenType.L_PAREN:
            calls.append(str(before.text).lower() if before is not None else "")
        elif token.token_type == TokenType.R_PAREN and calls:
            calls.pop()
        if (str(token.text) in ("U", "u") and token.token_type == TokenType.VAR and following is not None
                and following.token_type == TokenType.AMP and i + 2 < len(tokens)
                and following.start == token.end + 1 and tokens[i + 2].start == following.end + 1):
            folded = fold_unicode_escapes(str(tokens[i + 2].text))
            raise DataError(f"the SQL writes {folded!r} with U& escapes, which sqlglot does not read "
                            "as the server does; write the name plainly")
        if following is None or following.token_type != TokenType.L_PAREN:
            continue
        text = str(token.text)
        quoted = token.token_type in (TokenType.IDENTIFIER, TokenType.STRING)
        if not quoted and not re.fullmatch(r"\w+", text):
            continue  # punctuation and operators: the tree check holds those
        name = _name(token, dialect)
        if before is not None and before.token_type == TokenType.DOT:
            schema = tokens[i - 2] if i >= 2 else None
            if dialect != "postgres" or schema is None or _name(schema, dialect) != "pg_catalog":
                raise _refuse(f"{schema.text if schema is not None else ''}.{text}")
        if name in names:
            continue
        if before is not None and name in _CAST_TYPES and (
                before.token_type == TokenType.DCOLON or str(before.text).lower() in ("as", *_CAST_TYPES)
                or (before.token_type == TokenType.COMMA and calls[-1:] == ["convert"])):
            continue
        if token.token_type not in (TokenType.IDENTIFIER, TokenType.STRING) and name in _KEYWORDS and (
                name not in _INFIX or (before is not None and before.token_type in _VALUE_END)):
            continue
        if text in declared and before is not None and (
                before.token_type in (TokenType.COMMA, TokenType.WITH, TokenType.RECURSIVE, TokenType.ALIAS)
                or str(before.text).lower() in ("as", "with", "recursive")):
            continue  # a CTE's or an alias's column list
        raise _refuse(name)


def _operator(token: Any) -> bool:
    return bool(token.text) and set(str(token.text)) <= _OPERATOR_CHARS


def _splits(first: str, second: str) -> bool:
    """Whether PostgreSQL, too, reads two touching operators as two: it ends an operator before a
    trailing + or - unless the operator holds one of ~!@#%^&|`? (``=-1`` is = and -1)."""
    return second in ("+", "-") and not set(first) & set("~!@#%^&|`?")


def _check_tree(tree: exp.Expression, dialect: str | None, names: frozenset[str]) -> None:
    for node in tree.walk():
        if type(node) not in NODES:
            raise DataError(f"the SQL uses {_describe(node)}, which a question's query may not use "
                            "(only the functions and operators listed in README: What is safe)")
        if isinstance(node, exp.Anonymous):
            name = node.this if isinstance(node.this, str) else node.this.name
            quoted = isinstance(node.this, exp.Identifier) and node.this.quoted
            folded = name if quoted and dialect == "postgres" else name.lower()
            if folded not in names:
                raise _refuse(folded)
        elif isinstance(node, exp.Placeholder) and not (isinstance(node.this, str) and node.this):
            raise DataError("the SQL holds a ? placeholder; values are bound by name (:p0), and "
                            "PostgreSQL reads ? as an operator")
        elif isinstance(node, exp.DataType) and node.this not in _DATA_TYPES:
            raise DataError(f"the SQL casts to {node.sql(dialect=dialect)}; only plain number, text, "
                            "date and boolean types may be cast to")
        elif isinstance(node, exp.Dot) and not (
                dialect == "postgres" and isinstance(node.this, exp.Identifier)
                and node.this.name == "pg_catalog" and isinstance(node.expression, exp.Func)):
            raise DataError(f"the SQL uses {node.sql(dialect=dialect)[:60]!r}; a function may be "
                            "named with no schema, or pg_catalog on PostgreSQL")


def _describe(node: exp.Expression) -> str:
    if isinstance(node, exp.Func):
        return f"the function {node.sql_name()}"
    return f"{type(node).__name__} ({node.sql()[:40]!r})"
