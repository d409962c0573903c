"""What a query reads, decided by parsing (sqlglot), never by searching the text.

Two questions the grader asks of an answer's SQL (docs/verdicts.md, "Answers that do not read
the data" and "Flags"):

- ``reads_data``: can the query's output depend on the data at all? Not when it reads no table
  or view (only literals, ``VALUES``, table functions of constants such as ``range(10)``), nor
  when every output column is a literal or an expression of literals alone (no column, no
  aggregate, no window, no subquery that reads a table), whatever its FROM reads. A column taken
  from a CTE or a derived table is followed to the expression that makes it there.
- ``same_query``: are two SQL texts the same query once normalised (whitespace, keyword and
  unquoted identifier case, comments, a trailing semicolon)?

Both are cached per (text, dialect): a run asks them once per distinct SQL.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlglot import exp

_MAX_DEPTH = 32
"""How deep a column is followed through CTEs and derived tables before it counts as data
(a deeper chain is no proof of a constant)."""
_SPACES = re.compile(r"\s+")


@functools.lru_cache(maxsize=4096)
def reads_data(sql: str, dialect: str) -> bool | None:
    """Whether the output of ``sql`` can depend on the data; None when it does not parse (then
    nothing is claimed about it).

    Example:
        >>> reads_data("SELECT SUM(x) FROM t", "duckdb")
        True
        >>> reads_data("SELECT 1234.5", "duckdb"), reads_data("VALUES (1), (2)", "duckdb")
        (False, False)
        >>> reads_data("SELECT 2 AS n, 'a' || 'b' FROM t LIMIT 1", "duckdb")
        False
        >>> reads_data("WITH c AS (SELECT 7 AS v FROM t) SELECT v + 1 FROM c", "duckdb")
        False
        >>> reads_data("SELECT COUNT(*) FROM t", "duckdb")
        True
    """
    tree = _parse(sql, dialect)
    if tree is None:
        return None
    if not _real_tables(tree):
        return False
    return _output_reads(tree, 0)


@functools.lru_cache(maxsize=4096)
def normalized(sql: str, dialect: str) -> str:
    """``sql`` in one canonical form: parsed and written back (keywords upper case, unquoted
    identifiers lower case, comments dropped), or, when it does not parse, its text with
    whitespace collapsed, case folded and a trailing semicolon dropped.

    Example:
        >>> normalized("select  SUM(x)\\nfrom T;", "duckdb")
        'SELECT SUM(x) FROM t'
    """
    tree = _parse(sql, dialect)
    if tree is None:
        return _SPACES.sub(" ", sql.strip().rstrip(";").strip()).casefold()
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

    return normalize_identifiers(tree, dialect=dialect).sql(dialect=dialect, comments=False)


def same_query(first: str, second: str, dialect: str) -> bool:
    """Whether two SQL texts are the same query after normalising (``normalized``).

    Example:
        >>> same_query("SELECT a FROM t", "select A\\n  from t ;", "duckdb")
        True
        >>> same_query("SELECT a FROM t", "SELECT b FROM t", "duckdb")
        False
    """
    return normalized(first, dialect) == normalized(second, dialect)


def _parse(sql: str, dialect: str) -> exp.Expr | None:
    import sqlglot
    from sqlglot.errors import SqlglotError

    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect or None) if s is not None]
    except (SqlglotError, ValueError, RecursionError):
        return None
    return statements[-1] if statements else None


def _cte_names(tree: exp.Expr) -> set[str]:
    from sqlglot import exp

    return {cte.alias_or_name.casefold() for cte in tree.find_all(exp.CTE)}


def _real_tables(tree: exp.Expr) -> list[exp.Table]:
    """The tables and views the query reads: named ones (not a CTE, not a table function)."""
    from sqlglot import exp

    ctes = _cte_names(tree)
    found = []
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue  # range(10), generate_series(...), read_csv(...): no table of the data
        if not table.args.get("db") and table.name.casefold() in ctes:
            continue
        found.append(table)
    return found


def _output_reads(query: exp.Expr, depth: int) -> bool:
    """Whether some output column of ``query`` depends on the data."""
    from sqlglot import exp

    if depth > _MAX_DEPTH:
        return True
    if isinstance(query, exp.Subquery):
        return _output_reads(query.this, depth + 1)
    if isinstance(query, exp.SetOperation):
        return _output_reads(query.left, depth + 1) or _output_reads(query.right, depth + 1)
    if isinstance(query, exp.Values):
        return False
    if not isinstance(query, exp.Select):
        return bool(_real_tables(query))  # another statement shape: no claim beyond rule one
    return any(_expression_reads(item, query, depth) for item in query.expressions)


def _expression_reads(node: exp.Expr, scope: exp.Select, depth: int) -> bool:
    """Whether one output expression of ``scope`` depends on the data."""
    from sqlglot import exp

    for part in node.walk():
        if isinstance(part, (exp.Star, exp.AggFunc, exp.Window)):
            if isinstance(part, exp.Star) and not scope.args.get("from_"):
                continue
            return True
        nested = isinstance(part, (exp.Subquery, exp.Exists)) or (
            isinstance(part, exp.Select) and part is not scope
        )
        if nested and _real_tables(part):
            return True
        if isinstance(part, exp.Column) and _column_reads(part, scope, depth):
            return True
    return False


def _column_reads(column: exp.Column, scope: exp.Select, depth: int) -> bool:
    """Whether ``column`` of ``scope`` depends on the data: it does unless it comes from a CTE
    or derived table whose expression for it does not."""
    source = _source_of(column, scope)
    if source is None:
        return True
    wanted = column.name.casefold()
    return _named_output_reads(source, wanted, depth + 1)


def _named_output_reads(query: exp.Expr, wanted: str, depth: int) -> bool:
    from sqlglot import exp

    if depth > _MAX_DEPTH:
        return True
    if isinstance(query, exp.Subquery):
        return _named_output_reads(query.this, wanted, depth + 1)
    if isinstance(query, exp.Values):
        return False
    if isinstance(query, exp.SetOperation):
        return _output_reads(query, depth + 1)
    if not isinstance(query, exp.Select):
        return True
    for item in query.expressions:
        if isinstance(item, exp.Star):
            return _expression_reads(item, query, depth)
        if item.alias_or_name.casefold() == wanted:
            return _expression_reads(item, query, depth)
    return _output_reads(query, depth)  # renamed by a column list: any column decides


def _source_of(column: exp.Column, scope: exp.Select) -> exp.Expr | None:
    """The CTE or derived table ``column`` reads from in ``scope``; None when it is a table of
    the data (or cannot be told)."""
    from sqlglot import exp

    sources: dict[str, exp.Expr | None] = {}
    joins = [j.this for j in scope.args.get("joins") or []]
    from_clause = scope.args.get("from_")
    for item in ([from_clause.this] if from_clause is not None else []) + joins:
        name = item.alias_or_name.casefold()
        if isinstance(item, (exp.Subquery, exp.Values)):
            sources[name] = item
        elif isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
            sources[name] = _cte_body(scope, item.name.casefold())
        else:
            sources[name] = exp.Values()  # a table function of constants: no data
    qualifier = column.table.casefold()
    if qualifier:
        return sources.get(qualifier)
    if len(sources) == 1:
        return next(iter(sources.values()))
    return None


def _cte_body(scope: exp.Expr, name: str) -> exp.Expr | None:
    """The body of the CTE ``name`` visible from ``scope`` (None: a table of the data)."""
    from sqlglot import exp

    node: exp.Expr | None = scope
    while node is not None:
        with_clause = node.args.get("with_") if isinstance(node, exp.Query) else None
        if with_clause is not None:
            for cte in with_clause.expressions:
                if cte.alias_or_name.casefold() == name:
                    body: exp.Expr = cte.this
                    return body
        node = node.parent
    return None
