"""Setup SQL for server warehouses, made session-temporary so it never changes the warehouse.

On PostgreSQL and SQLite a project's ``setup`` files may only create views and tables; each
statement is checked with sqlglot (a CREATE VIEW or CREATE TABLE of an unqualified name) and
rewritten to ``CREATE TEMPORARY ...``, so the objects live in the session and vanish with it.
Anything else (INSERT into a real table, DROP, a schema-qualified name, a materialized view) is
refused with one sentence naming the file and statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import TokenType, exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, SqlglotError

from sqlbench.errors import EngineError

_CREATE_HEAD = re.compile(r"\s*CREATE\s+(OR\s+REPLACE\s+)?", re.IGNORECASE)
_ALREADY_TEMP = re.compile(r"(TEMP|TEMPORARY)\s", re.IGNORECASE)
_TEMP_SCHEMAS = frozenset({"pg_temp", "temp"})


@dataclass(frozen=True)
class SetupStatement:
    """One setup statement, ready to run in a session."""

    sql: str
    """The statement rewritten to create a temporary object."""
    where: str
    """``file (statement n)`` for messages."""


def split_statements(sql: str, dialect: str) -> list[str]:
    """The statements of a SQL script, as written, split at top-level semicolons (sqlglot's
    tokenizer: semicolons in strings, comments and dollar quotes do not split).

    Example:
        >>> split_statements("CREATE VIEW a AS SELECT ';' AS x; -- c\\nCREATE VIEW b AS SELECT 2;",
        ...                  "postgres")
        ["CREATE VIEW a AS SELECT ';' AS x", 'CREATE VIEW b AS SELECT 2']
    """
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError as err:
        raise EngineError(f"cannot split setup SQL into statements: {err}") from err
    statements: list[str] = []
    start: int | None = None
    end = 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if start is not None:
                statements.append(sql[start : end + 1])
            start = None
            continue
        if start is None:
            start = token.start
        end = token.end
    if start is not None:
        statements.append(sql[start : end + 1])
    return statements


def setup_statements(
    files: list[Path], project_root: Path, dialect: str
) -> Iterator[tuple[str, str]]:
    """Each statement of the setup files in order, as written, with where it is for messages:
    ``("models.sql (statement 2)", "CREATE VIEW ...")``. A file is read when its turn comes.

    Raises:
        EngineError: a file cannot be read or split into statements.
    """
    for path in files:
        shown = _relative(path, project_root)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise EngineError(f"{shown}: cannot read setup SQL: {err}") from err
        for number, statement in enumerate(split_statements(text, dialect), start=1):
            yield f"{shown} (statement {number})", statement


def temporary_setup(files: list[Path], project_root: Path, dialect: str) -> list[SetupStatement]:
    """Every statement of the setup files, checked and rewritten to create temporary objects.

    Raises:
        EngineError: a file cannot be read, or a statement is not a CREATE VIEW / CREATE TABLE
            of an unqualified name.
    """
    return [
        SetupStatement(_temporary(statement, dialect, where), where)
        for where, statement in setup_statements(files, project_root, dialect)
    ]


def _temporary(statement: str, dialect: str, where: str) -> str:
    refusal = (
        f"{where}: setup on a server warehouse may only create views and tables, which "
        "sqlbench makes session-temporary so the warehouse is never changed"
    )
    try:
        parsed = sqlglot.parse_one(statement, read=dialect, error_level=ErrorLevel.RAISE)
    except SqlglotError as err:
        raise EngineError(
            f"{refusal}; sqlglot cannot parse this statement, so it cannot be "
            f"checked ({' '.join(str(err).split())[:120]})"
        ) from err
    if not isinstance(parsed, exp.Create) or str(parsed.args.get("kind", "")).upper() not in {
        "VIEW",
        "TABLE",
    }:
        first = statement.split(None, 1)[0].upper() if statement.split() else "an empty statement"
        raise EngineError(f"{refusal}; this is {first}, not CREATE VIEW or CREATE TABLE")
    if re.search(r"\bMATERIALIZED\b", statement[:200], re.IGNORECASE):
        raise EngineError(f"{refusal}; a materialized view cannot be temporary")
    target = parsed.this.find(exp.Table)
    schema = target.db if target is not None else ""
    if target is None or target.catalog or (schema and schema.lower() not in _TEMP_SCHEMAS):
        raise EngineError(
            f"{refusal}; name the object without a schema (it is created in the "
            "session's temporary schema)"
        )
    head = _CREATE_HEAD.match(statement)
    if head is None:
        raise EngineError(f"{refusal}; it does not start with CREATE")
    rest = statement[head.end() :]
    if _ALREADY_TEMP.match(rest):
        return statement
    return statement[: head.end()] + "TEMPORARY " + rest


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
