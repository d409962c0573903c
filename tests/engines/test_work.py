"""Warehouse work (docs/cost.md): what each engine reports a query read, from the query's run
(DuckDB's profiler, a local Spark's plan metrics) or its planner (PostgreSQL, SQLite); "not
reported" (None) where the engine reports nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_warehouses import FACTORIES, PG_READER_URL, ROWS, Warehouse, env_url

from sqlbench.engines.duckdb import DuckDBEngine
from sqlbench.engines.open import open_engine
from sqlbench.engines.work import BUFFERS, PLAN_COST, ROWS_SCANNED, TABLE_SCANS, Work, ratio
from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.project.files import Settings

EXPECTED_UNIT = {
    "duckdb": ROWS_SCANNED,
    "duckdb_file": ROWS_SCANNED,
    "sqlite": TABLE_SCANS,
    "postgres": PLAN_COST,
    "mariadb": None,
    "spark": ROWS_SCANNED,
    "spark_connect": ROWS_SCANNED,
}


def work(warehouse: Warehouse, sql: str) -> Work | None:
    """The work of ``sql``, run as agent SQL, as a run records it."""
    engine = warehouse.engine
    result = engine.run_agent(sql, timeout_s=warehouse.timeout_s, max_rows=1000)
    return engine.work_of(sql, result)


def test_each_engine_reports_its_work_or_nothing(warehouse: Warehouse) -> None:
    table = warehouse.table
    # Grouped, so that Spark runs a plan (a bare scan of a local relation is answered from the
    # relation's rows: Spark Connect then reports nothing).
    once = work(warehouse, f"SELECT customer, COUNT(*) AS n FROM {table} GROUP BY customer")
    twice = work(
        warehouse, f"SELECT a.customer FROM {table} a CROSS JOIN {table} b WHERE a.id <> b.id"
    )
    unit = EXPECTED_UNIT[warehouse.kind]
    if unit is None:
        assert once is None and twice is None
        return
    assert once is not None and twice is not None
    assert once.unit == twice.unit == unit
    if unit == ROWS_SCANNED:
        assert once.amount == len(ROWS) and twice.amount == 2 * len(ROWS)
        assert ratio(once, twice) == 2.0
        # A subquery's scan counts too, except on Spark Connect, whose server sends no metrics
        # of subqueries (docs/cost.md).
        nested = f"SELECT id FROM {table} WHERE amount > (SELECT AVG(amount) FROM {table})"
        scans = 1 if warehouse.kind == "spark_connect" else 2
        assert work(warehouse, nested) == Work(scans * len(ROWS), ROWS_SCANNED)
    else:
        if unit == TABLE_SCANS:
            assert (once.amount, twice.amount) == (1.0, 2.0)
        else:
            assert twice.amount > once.amount > 0
        # A planner's engine: SQL its planner refuses reports nothing.
        found = warehouse.engine.run_agent("SELECT 1 AS one", timeout_s=10, max_rows=1)
        assert warehouse.engine.work_of("SELECT no_such_column FROM nowhere", found) is None


@pytest.mark.parametrize(
    ("truth", "agent", "expected"),
    [
        ((100.0, ROWS_SCANNED), (4000.0, ROWS_SCANNED), 40.0),
        ((0.0, TABLE_SCANS), (1.0, TABLE_SCANS), None),
    ],
)
def test_the_ratio_is_agent_over_truth_in_one_unit(
    truth: tuple[float, str], agent: tuple[float, str], expected: float | None
) -> None:
    assert ratio(Work(*truth), Work(*agent)) == expected
    assert ratio(Work(1.0, ROWS_SCANNED), Work(1.0, PLAN_COST)) is None


def _big_duckdb(tmp_path: Path, **options: Any) -> DuckDBEngine:
    setup = tmp_path / "setup.sql"
    setup.write_text(
        "CREATE TABLE big AS SELECT range AS id, range % 7 AS k FROM range(1000000);\n"
    )
    engine = DuckDBEngine(**options)
    engine.setup(tmp_path, [setup])
    return engine


@pytest.mark.parametrize("process", [False, True], ids=["in-process", "query-process"])
def test_duckdb_counts_the_rows_its_scans_read_as_the_query_runs(
    tmp_path: Path, process: bool
) -> None:
    """The profiler's count, not the table's size: a range filter lets DuckDB's zone maps
    skip most row groups. Ground truth and agent SQL alike, in the query process too."""
    engine = _big_duckdb(tmp_path, query_process_mb=512 if process else None)
    with engine:
        whole = engine.run_agent("SELECT sum(k) FROM big", timeout_s=30, max_rows=10)
        few = engine.run_truth("SELECT k FROM big WHERE id < 10", timeout_s=30, max_rows=100)
        assert whole.work == Work(1_000_000.0, ROWS_SCANNED)
        assert few.work is not None and few.work.unit == ROWS_SCANNED
        assert 10 <= few.work.amount < 100_000
        assert engine.work_of("SELECT sum(k) FROM big", whole) == whole.work


def test_duckdbs_profiled_connections_change_no_result_and_survive_failures(
    tmp_path: Path,
) -> None:
    """A reused connection's previous query (failed, timed out, too many rows) leaves nothing
    behind, and its result is the one a connection without the profiler gives (whose work is
    not reported)."""
    engine = _big_duckdb(tmp_path, profiled_connections=1)
    plain = _big_duckdb(tmp_path, profiled_connections=0)
    sql = "SELECT k, count(*) AS n FROM big WHERE id % 3 = 0 GROUP BY k ORDER BY k"
    with engine, plain:
        expected = plain.run_agent(sql, timeout_s=30, max_rows=100)
        assert expected.work is None and expected.num_rows == 7
        failures = [
            ("SELECT no_such FROM big", QueryErrorKind.RUNTIME),
            ("SELECT * FROM big", QueryErrorKind.TOO_MANY_ROWS),
            (
                "SELECT count(*) FROM big a, big b WHERE (a.id * b.id) % 1000 = 7",
                QueryErrorKind.TIMEOUT,
            ),
        ]
        for bad, kind in failures:
            with pytest.raises(QueryError) as raised:
                engine.run_agent(bad, timeout_s=0.3, max_rows=10)
            assert raised.value.kind is kind
            found = engine.run_agent(sql, timeout_s=30, max_rows=100)
            assert found.table.equals(expected.table)
            assert found.work == Work(1_000_000.0, ROWS_SCANNED)


@pytest.mark.postgres
def test_postgres_with_explain_analyze_reports_the_buffers_the_query_read(tmp_path: Path) -> None:
    """``run.explain_analyze``: ``EXPLAIN (ANALYZE, BUFFERS)``'s shared buffers, hit and read;
    a query that reads the table twice reads about twice the buffers."""
    built = FACTORIES["postgres"](tmp_path)
    settings = Settings(warehouse=env_url(PG_READER_URL), run={"explain_analyze": True})
    engine = open_engine(settings, tmp_path)
    try:
        engine.setup(tmp_path, [])
        table = built.table
        once_sql = f"SELECT customer FROM {table}"
        twice_sql = f"SELECT a.customer FROM {table} a CROSS JOIN {table} b WHERE a.id <> b.id"
        once = engine.work_of(once_sql, engine.run_agent(once_sql, timeout_s=10, max_rows=100))
        twice = engine.work_of(twice_sql, engine.run_agent(twice_sql, timeout_s=10, max_rows=100))
        assert once is not None and twice is not None
        assert once.unit == twice.unit == BUFFERS
        assert twice.amount >= 2 * once.amount >= 2
        # The planner still refuses what it cannot plan: nothing is reported, nothing fails.
        found = engine.run_agent("SELECT 1 AS one", timeout_s=10, max_rows=1)
        assert engine.work_of("SELECT no_such_column FROM nowhere", found) is None
    finally:
        engine.close()
        built.engine.close()
        for step in built.cleanup:
            step()
