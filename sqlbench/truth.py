"""Ground truth per question, and its transpilation to the warehouse's dialect
(docs/project-files.md, ``dialect``).

Ground truth is written in the project's ``dialect`` (default: the warehouse's). When that differs
from the warehouse's dialect, sqlglot transpiles it before it runs. A construct sqlglot cannot
carry over faithfully is an error, never a silent approximation: a ground truth that means
something else on the warehouse would grade every answer against the wrong result.
"""

from __future__ import annotations

import sqlglot
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, UnsupportedError

from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.project.files import Question, Settings
from sqlbench.sqlstatements import error_text, statements


def transpile_truth(sql: str, from_dialect: str, to_dialect: str) -> str:
    """``sql`` written in ``from_dialect``, as ``to_dialect`` SQL. Unchanged when the two name
    the same dialect.

    Raises:
        QueryError: SYNTAX when sqlglot cannot parse it, RUNTIME when it cannot express it in
            ``to_dialect`` (the reason names the construct) or it is not one statement.

    Example:
        >>> transpile_truth("SELECT a::INT FROM t", "duckdb", "duckdb")
        'SELECT a::INT FROM t'
        >>> transpile_truth("SELECT list(x) FROM t", "duckdb", "postgres")
        'SELECT ARRAY_AGG(x) FROM t'
    """
    source, target = _dialect(from_dialect), _dialect(to_dialect)
    if source == target:
        return sql
    try:
        parsed = sqlglot.parse(sql, read=source, error_level=ErrorLevel.RAISE)
        texts = [
            node.sql(dialect=target, unsupported_level=ErrorLevel.RAISE)
            for node in statements(parsed)
        ]
    except ParseError as err:
        raise QueryError(
            QueryErrorKind.SYNTAX,
            f"sqlglot cannot parse the ground truth as {from_dialect} SQL to "
            f"transpile it to {to_dialect}: {error_text(err, 200)}",
        ) from err
    except UnsupportedError as err:
        raise QueryError(
            QueryErrorKind.RUNTIME,
            f"sqlglot cannot transpile the ground truth from {from_dialect} to "
            f"{to_dialect}: {error_text(err, 200)}",
        ) from err
    except SqlglotError as err:
        raise QueryError(
            QueryErrorKind.RUNTIME,
            f"the ground truth cannot be transpiled from {from_dialect} to "
            f"{to_dialect}: {error_text(err, 200)}",
        ) from err
    texts = [text for text in texts if text.strip()]
    if len(texts) != 1:
        raise QueryError(
            QueryErrorKind.RUNTIME,
            f"the ground truth holds {len(texts)} statements; it must be exactly one query",
        )
    return texts[0]


def truth_dialect(settings: Settings, warehouse_dialect: str) -> str:
    """The dialect ground truth is written in: ``dialect`` from sqlbench.yml, else the
    warehouse's.

    Example:
        >>> truth_dialect(Settings(), "postgres")
        'postgres'
        >>> truth_dialect(Settings(dialect="duckdb"), "mysql")
        'duckdb'
    """
    return settings.dialect or warehouse_dialect


def ground_truths(question: Question) -> list[str]:
    """The question's ground-truth SQL texts: the main one first, then each ``also_accept``
    (empty when the question has no ground truth); a conversation's, every turn's in order."""
    if question.turns is not None:
        return [
            sql
            for index in range(len(question.turns))
            for sql in ground_truths(question.turn_question(index))
        ]
    if question.truth_sql is None:
        return []
    return [question.truth_sql, *question.also_accept]


def _dialect(name: str) -> str:
    try:
        Dialect.get_or_raise(name.lower())
    except ValueError as err:
        raise QueryError(QueryErrorKind.RUNTIME, f"unknown SQL dialect {name!r}") from err
    return name.lower()
