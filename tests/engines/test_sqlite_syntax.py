"""Agent SQL sqlglot cannot parse, on a SQLite file: SQLite compiles it behind EXPLAIN (which
runs nothing) and its own message says what is wrong; SQL SQLite compiles but sqlglot cannot
parse is refused as unchecked; neither is ever run, and the connection is left as a query
leaves it."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from engine_warehouses import sqlite_file_engine

from sqlbench.engines.agent_sql import QueryLimits
from sqlbench.engines.sqlalchemy import SqlAlchemyEngine
from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.grading import agent_sql_reason


@pytest.fixture
def engine(tmp_path: Path) -> Any:
    opened = sqlite_file_engine(
        tmp_path,
        "CREATE TABLE member (first_name TEXT, t_shirt_size TEXT)",
        "INSERT INTO member VALUES ('Amy', 'Medium'), ('Bo', 'Large')",
    )
    assert isinstance(opened, SqlAlchemyEngine)
    yield opened
    opened.close()


def _refused(engine: SqlAlchemyEngine, sql: str) -> QueryError:
    with pytest.raises(QueryError) as caught:
        engine.run_agent(sql, timeout_s=5, max_rows=100)
    return caught.value


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        # BIRD dev student_club q1317, as dail_sql wrote it: the quote ends the string early
        (
            "SELECT count(*) FROM member WHERE first_name = 'Women's Soccer' "
            "AND t_shirt_size = 'Medium'",
            'near "s": syntax error',
        ),
        ("SELEC first_name FROM member", 'near "SELEC": syntax error'),
        ("SELECT first_name FROM member WHERE", "incomplete input"),
        ("SELECT first_name FROM member WHERE t_shirt_size = 'Medium", "unrecognized token"),
    ],
)
def test_a_syntax_error_carries_sqlites_own_message(
    engine: SqlAlchemyEngine, sql: str, message: str
) -> None:
    err = _refused(engine, sql)
    assert err.kind is QueryErrorKind.SYNTAX
    assert err.message.startswith(message)
    assert "sqlglot" not in err.message
    assert agent_sql_reason(err).startswith(f"the agent's SQL has a syntax error: {message}")


def test_sql_sqlite_compiles_but_sqlglot_cannot_parse_is_refused_unchecked_and_not_run(
    engine: SqlAlchemyEngine,
) -> None:
    """A type name SQLite takes and sqlglot does not, in a query that would count forever: it is
    refused at once as unchecked (the guard cannot prove what it cannot parse), not run, and
    not called a syntax error."""
    runaway = (
        "WITH RECURSIVE r(i) AS (SELECT CAST(1 AS UNSIGNED BIG INT) UNION ALL "
        "SELECT i + 1 FROM r) SELECT count(*) FROM r"
    )
    began = time.monotonic()
    err = _refused(engine, runaway)
    assert time.monotonic() - began < 1.0
    assert err.kind is QueryErrorKind.NOT_READ_ONLY
    assert err.message.startswith("not a read-only query: sqlglot cannot parse it as sqlite SQL")
    assert err.message.endswith("(SQLite itself parses it: sqlglot lacks this syntax)")


def test_the_connection_is_left_as_a_query_leaves_it(engine: SqlAlchemyEngine) -> None:
    """After the compile, the next query runs on the same connection with nothing of the
    compile left on it (no authorizer, the length limit back, no open transaction)."""
    _refused(engine, "SELEC 1")
    assert len(engine._idle) == 1
    connection = engine._idle[0].dbapi_connection
    assert connection.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 1_000_000_000
    assert not connection.in_transaction
    result = engine.run_agent("SELECT count(*) FROM member", timeout_s=5, max_rows=10)
    assert result.table.column(0).to_pylist() == [2]
    assert engine._idle[0].dbapi_connection is connection


def test_sql_with_a_word_that_writes_is_refused_before_sqlite_sees_it(
    engine: SqlAlchemyEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unparseable SQL whose words write or hold a second statement is refused by the guard's
    own words, as before: SQLite is not asked to compile it."""
    compiled: list[str] = []
    real = SqlAlchemyEngine._sqlite_syntax_error

    def spying(self: SqlAlchemyEngine, sql: str, *args: Any) -> QueryError:
        compiled.append(sql)
        return real(self, sql, *args)

    monkeypatch.setattr(SqlAlchemyEngine, "_sqlite_syntax_error", spying)
    err = _refused(engine, "SELECT 1 FROM member; DELETE FROM member WHERE (")
    assert err.kind is QueryErrorKind.NOT_READ_ONLY
    assert "sqlglot cannot parse it" in err.message
    assert compiled == []


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM member",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA query_only = 0",
        "SELECT 1; DELETE FROM member",
    ],
)
def test_the_compile_runs_nothing_and_takes_only_what_a_query_may(
    engine: SqlAlchemyEngine, sql: str
) -> None:
    """Were SQL that writes ever to reach the compile (SQL sqlglot cannot even tokenize is
    judged by no word), SQLite refuses it there, under the read-only authorizer, and nothing
    is run: EXPLAIN compiles only."""
    guard = QueryError(QueryErrorKind.SYNTAX, "sqlglot cannot parse it")
    err = engine._sqlite_syntax_error(sql, guard, QueryLimits(5.0, 100, None, 0.0))
    assert err.kind is QueryErrorKind.NOT_READ_ONLY
    assert err.message.startswith("not a read-only query: the database refused it: ")
    count = engine.run_truth("SELECT count(*) FROM member", timeout_s=5, max_rows=10)
    assert count.table.column(0).to_pylist() == [2]
    connection = engine._idle[0].dbapi_connection
    assert connection.execute("PRAGMA query_only").fetchone() == (1,)
    assert [row[1] for row in connection.execute("PRAGMA database_list")] == ["main"]
