"""Agent SQL on the embedded DuckDB in its query process: a query that takes the process past
its memory is too_large, and a query running beside it still gets its result."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from sqlbench.engines.duckdb import DuckDBEngine
from sqlbench.errors import QueryError, QueryErrorKind

pytestmark = [
    pytest.mark.slow,
    pytest.mark.hostile,
    pytest.mark.skipif(sys.platform != "linux", reason="the query process is Linux-only"),
]


def test_a_query_past_the_query_process_memory_is_too_large_and_others_keep_theirs(
    tmp_path: Path,
) -> None:
    engine = DuckDBEngine(memory_limit_mb=256, query_process_mb=300)
    engine.setup(tmp_path, [])
    try:
        assert engine.run_agent("SELECT 1 AS x", timeout_s=60, max_rows=10).num_rows == 1
        found: dict[str, object] = {}

        def run(name: str, sql: str) -> None:
            try:
                result = engine.run_agent(sql, timeout_s=120, max_rows=10)
                found[name] = result.table.to_pylist()
            except QueryError as err:
                found[name] = err

        beside = threading.Thread(
            target=run, args=("beside", "SELECT count(*) AS n FROM range(3000000000)")
        )
        bomb = threading.Thread(target=run, args=("bomb", "SELECT repeat('x', 1000000000) AS v"))
        beside.start()
        time.sleep(0.3)
        bomb.start()
        beside.join()
        bomb.join()
        assert found["beside"] == [{"n": 3_000_000_000}]
        err = found["bomb"]
        assert isinstance(err, QueryError) and err.kind is QueryErrorKind.TOO_LARGE, err
        assert err.message == (
            "it took sqlbench's DuckDB query process past the memory it may use (300 MB "
            "beyond its database); the process was stopped"
        )
        # A new query process answers the next query.
        again = engine.run_agent("SELECT 2 AS x", timeout_s=60, max_rows=10)
        assert again.table.to_pylist() == [{"x": 2}]
    finally:
        engine.close()
