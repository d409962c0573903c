"""A SQLite warehouse keeps the connection a query leaves for the next query of the same engine,
without the pool's checkout: every limit still applies to each query on it, and a forked
process never uses the connections it inherited."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from engine_warehouses import sqlite_file_engine

from sqlbench.engines.sqlalchemy import SqlAlchemyEngine
from sqlbench.errors import QueryError, QueryErrorKind

MB = 2**20
RUNAWAY = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"


@pytest.fixture
def engine(tmp_path: Path) -> Any:
    opened = sqlite_file_engine(
        tmp_path, "CREATE TABLE t (a INTEGER, b TEXT)", "INSERT INTO t VALUES (1, 'x'), (2, 'y')"
    )
    assert isinstance(opened, SqlAlchemyEngine)
    yield opened
    opened.close()


def _error(call: Any) -> QueryError:
    with pytest.raises(QueryError) as caught:
        call()
    return caught.value


def _connection(engine: SqlAlchemyEngine) -> Any:
    assert len(engine._idle) == 1
    return engine._idle[0].dbapi_connection


def test_every_limit_applies_to_each_query_on_a_reused_connection(
    engine: SqlAlchemyEngine,
) -> None:
    assert engine.run_agent("SELECT a, b FROM t", timeout_s=30, max_rows=10).num_rows == 2
    reused = _connection(engine)

    # Agent SQL may not build a value past max_bytes (SQLITE_LIMIT_LENGTH) ...
    huge = "SELECT hex(zeroblob(2000000)) AS v"
    refused = _error(lambda: engine.run_agent(huge, timeout_s=30, max_rows=10, max_bytes=MB))
    assert refused.kind is QueryErrorKind.TOO_LARGE
    assert "string or blob too big" in refused.message
    # ... ground truth on the same connection may (the limit is reset for it) ...
    measured = "SELECT length(hex(zeroblob(2000000))) AS n"
    truth = engine.run_truth(measured, timeout_s=30, max_rows=10, max_bytes=MB)
    assert truth.table.column(0).to_pylist() == [4_000_000]
    # ... and agent SQL after it still may not.
    again = _error(lambda: engine.run_agent(huge, timeout_s=30, max_rows=10, max_bytes=MB))
    assert again.kind is QueryErrorKind.TOO_LARGE
    # A value returned past max_bytes is counted while fetched.
    wide = "SELECT hex(zeroblob(300000)) AS v FROM t"
    counted = _error(lambda: engine.run_truth(wide, timeout_s=30, max_rows=10, max_bytes=MB))
    assert counted.kind is QueryErrorKind.TOO_LARGE
    assert counted.message.startswith("the result reached")
    # max_rows, the timeout, and the read-only authorizer (ground truth is not guarded).
    many = _error(lambda: engine.run_agent("SELECT a FROM t", timeout_s=30, max_rows=1))
    assert many.kind is QueryErrorKind.TOO_MANY_ROWS
    started = time.monotonic()
    stopped = _error(lambda: engine.run_agent(RUNAWAY, timeout_s=1, max_rows=10))
    assert stopped.kind is QueryErrorKind.TIMEOUT
    assert time.monotonic() - started < 2.0
    write = _error(lambda: engine.run_truth("DELETE FROM t", timeout_s=30, max_rows=10))
    assert write.kind is QueryErrorKind.NOT_READ_ONLY
    # The timeout of the stopped query is not left behind: the next one runs.
    after = engine.run_agent("SELECT count(*) AS n FROM t", timeout_s=30, max_rows=10)
    assert after.table.column(0).to_pylist() == [2]
    assert _connection(engine) is reused
    assert reused.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 1_000_000_000


def test_setup_and_close_give_the_idle_connections_back(
    engine: SqlAlchemyEngine, tmp_path: Path
) -> None:
    engine.run_agent("SELECT a FROM t", timeout_s=30, max_rows=10)
    before = _connection(engine)
    view = tmp_path / "v.sql"
    view.write_text("CREATE VIEW v AS SELECT a * 10 AS a10 FROM t", encoding="utf-8")
    engine.setup(tmp_path, [view])
    # A connection made before setup lacks its view: it is not used again.
    result = engine.run_agent("SELECT a10 FROM v ORDER BY a10", timeout_s=30, max_rows=10)
    assert result.table.column(0).to_pylist() == [10, 20]
    assert _connection(engine) is not before
    engine.close()
    assert engine._idle == []


@pytest.mark.skipif(sys.platform != "linux", reason="forks")
def test_a_forked_process_does_not_use_the_connections_it_inherited(
    engine: SqlAlchemyEngine,
) -> None:
    engine.run_agent("SELECT a FROM t", timeout_s=30, max_rows=10)
    inherited = _connection(engine)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            # No after_fork call: the engine sees it is in another process.
            rows = engine.run_agent("SELECT b FROM t", timeout_s=30, max_rows=10).num_rows
            ok = rows == 2 and _connection(engine) is not inherited
            ok = ok and any(raw.dbapi_connection is inherited for raw in engine._inherited)
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 2) == b"ok"
    finally:
        os.close(read)
        os.waitpid(child, 0)
    # The parent's connection is still its own, and works.
    assert engine.run_agent("SELECT a FROM t", timeout_s=30, max_rows=10).num_rows == 2
    assert _connection(engine) is inherited
