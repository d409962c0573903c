"""Limits and types on every engine: a runaway query stops within its timeout plus a second, an
over-long result is cut at max_rows without fetching the rest, and values keep their types."""

from __future__ import annotations

import datetime as dt
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from engine_warehouses import Warehouse

from sqlbench.errors import QueryError, QueryErrorKind

RUNAWAY = {
    "duckdb": "SELECT count(*) FROM range(1000000000) a, range(1000000000) b",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
    "SELECT count(*) FROM r",
    "postgres": "SELECT count(*) FROM generate_series(1, 100000000) a, "
    "generate_series(1, 100000000) b",
    "mariadb": "SELECT count(*) FROM seq_1_to_100000000 a, seq_1_to_100000000 b",
}
ENDLESS_ROWS = {
    "duckdb": "SELECT * FROM range(1000000000) r(i)",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT i FROM r",
    "postgres": "SELECT generate_series(1, 1000000000) AS i",
    "mariadb": "SELECT seq AS i FROM seq_1_to_1000000000",
}
RUNAWAY["spark"] = "SELECT max(id % 1000003) FROM range(1000000000000)"
"""A trillion rows aggregated: hours of work, and no overflow (SUM over it overflows under
Spark's ANSI mode and fails in seconds instead of running on)."""
ENDLESS_ROWS["spark"] = "SELECT id AS i FROM range(1000000000)"
for _name in ("duckdb_file", "spark_connect"):
    _source = "duckdb" if _name == "duckdb_file" else "spark"
    if _source in RUNAWAY:
        RUNAWAY[_name] = RUNAWAY[_source]
    ENDLESS_ROWS[_name] = ENDLESS_ROWS[_source]
STOP_SLACK_S = {"spark": 5.0, "spark_connect": 5.0}
"""How long past its timeout a query may take to stop: Spark cancels the query's jobs by tag,
and its tasks notice between batches of rows."""
SPARK_KINDS = {"spark", "spark_connect"}
RUNAWAY_TIMEOUT_S = 0.5
"""The runaway queries' timeout (each burns a core until it is stopped; Spark's 1 s, as its
cancellation waits for the query's first job)."""


@pytest.mark.parametrize("agent", [True, False], ids=["agent", "truth"])
def test_a_runaway_query_stops_within_its_timeout_plus_a_second(
    warehouse: Warehouse, agent: bool
) -> None:
    run = warehouse.engine.run_agent if agent else warehouse.engine.run_truth
    run("SELECT 1", timeout_s=warehouse.timeout_s, max_rows=10)  # started (a query process)
    slack = STOP_SLACK_S.get(warehouse.kind, 1.0)
    timeout_s = 1.0 if warehouse.kind in SPARK_KINDS else RUNAWAY_TIMEOUT_S
    if warehouse.kind in SPARK_KINDS:
        # Spark plans a query before its first job starts, and a job can only be cancelled
        # once it runs; on a busy machine planning alone takes seconds. The same query over
        # ten rows measures that here, so the slack is the cancellation's, not the planning's.
        small = RUNAWAY[warehouse.kind].replace("1000000000000", "10")
        began = time.monotonic()
        run(small, timeout_s=warehouse.timeout_s, max_rows=10)
        slack += time.monotonic() - began
    started = time.monotonic()
    with pytest.raises(QueryError) as caught:
        run(RUNAWAY[warehouse.kind], timeout_s=timeout_s, max_rows=10)
    elapsed = time.monotonic() - started
    assert caught.value.kind is QueryErrorKind.TIMEOUT
    assert caught.value.message == f"the query ran past its {timeout_s:g} s timeout and was stopped"
    assert 0.9 * timeout_s <= elapsed < timeout_s + slack, f"stopped after {elapsed:.2f} s"
    if warehouse.kind == "spark":
        _assert_no_spark_task_runs(warehouse)
    # The connection that ran it is still usable.
    again = warehouse.engine.run_agent(
        f"SELECT COUNT(*) FROM {warehouse.table}", timeout_s=warehouse.timeout_s, max_rows=1
    )
    assert again.table.column(0).to_pylist() == [4]


def _assert_no_spark_task_runs(warehouse: Warehouse) -> None:
    """The local Spark's jobs ended and its executor runs no task: the CPU is free, the query
    was not left running behind the timeout."""
    context = warehouse.engine._session.sparkContext  # type: ignore[attr-defined]
    assert context.statusTracker().getActiveJobsIds() == []
    # A killed task stops at its next batch of rows; give it the slack a busy machine needs.
    running = -1
    for _ in range(20):
        executors = context._jsc.sc().statusTracker().getExecutorInfos()
        running = sum(info.numRunningTasks() for info in executors)
        if running == 0:
            break
        time.sleep(0.25)
    assert running == 0


@pytest.mark.parametrize("agent", [True, False], ids=["agent", "truth"])
def test_a_result_over_max_rows_is_cut_without_fetching_the_rest(
    warehouse: Warehouse, agent: bool
) -> None:
    run = warehouse.engine.run_agent if agent else warehouse.engine.run_truth
    started = time.monotonic()
    with pytest.raises(QueryError) as caught:
        run(ENDLESS_ROWS[warehouse.kind], timeout_s=warehouse.timeout_s, max_rows=1000)
    # A billion rows cannot be fetched in this time: the fetch stopped at max_rows + 1.
    assert time.monotonic() - started < 5 + 3 * STOP_SLACK_S.get(warehouse.kind, 0.0)
    assert caught.value.kind is QueryErrorKind.TOO_MANY_ROWS
    assert "more than max_rows=1000 rows" in caught.value.message
    again = warehouse.engine.run_agent(
        f"SELECT COUNT(*) FROM {warehouse.table}", timeout_s=warehouse.timeout_s, max_rows=1
    )
    assert again.table.column(0).to_pylist() == [4]


def test_exactly_max_rows_is_not_too_many(warehouse: Warehouse) -> None:
    limited = f"SELECT * FROM ({ENDLESS_ROWS[warehouse.kind]}) x LIMIT 1000"
    if warehouse.kind == "sqlite":
        limited = ENDLESS_ROWS["sqlite"] + " LIMIT 1000"
    result = warehouse.engine.run_agent(limited, timeout_s=30, max_rows=1000)
    assert result.num_rows == 1000


TYPED = {
    "duckdb": "SELECT CAST(12.50 AS DECIMAL(10,2)) AS x, CAST(0.10 AS DECIMAL(10,2)) AS x, "
    "DATE '2024-02-29' AS d, TIMESTAMPTZ '2024-01-01 10:00:00+02' AS ts, "
    "TIMESTAMP '2024-01-01 10:00:00' AS naive, NULL AS n, 'é' AS s",
    "postgres": "SELECT CAST(12.50 AS NUMERIC(10,2)) AS x, CAST(0.10 AS NUMERIC(10,2)) AS x, "
    "DATE '2024-02-29' AS d, TIMESTAMPTZ '2024-01-01 10:00:00+02' AS ts, "
    "TIMESTAMP '2024-01-01 10:00:00' AS naive, NULL AS n, 'é' AS s",
    "mariadb": "SELECT CAST(12.50 AS DECIMAL(10,2)) AS x, CAST(0.10 AS DECIMAL(10,2)) AS x, "
    "DATE '2024-02-29' AS d, NULL AS ts, "
    "TIMESTAMP '2024-01-01 10:00:00' AS naive, NULL AS n, 'é' AS s",
    "sqlite": "SELECT 12.5 AS x, 0.1 AS x, '2024-02-29' AS d, NULL AS ts, "
    "'2024-01-01 10:00:00' AS naive, NULL AS n, 'é' AS s",
}
TYPED["spark"] = (
    "SELECT CAST(12.50 AS DECIMAL(10,2)) AS x, CAST(0.10 AS DECIMAL(10,2)) AS x, "
    "DATE '2024-02-29' AS d, TIMESTAMP '2024-01-01 10:00:00+02:00' AS ts, "
    "TIMESTAMP_NTZ '2024-01-01 10:00:00' AS naive, NULL AS n, 'é' AS s"
)
TYPED["duckdb_file"] = TYPED["duckdb"]
TYPED["spark_connect"] = TYPED["spark"]


def test_types_and_duplicate_names_are_kept(warehouse: Warehouse) -> None:
    frame = warehouse.engine.run_agent(
        TYPED[warehouse.kind], timeout_s=warehouse.timeout_s, max_rows=10
    ).to_pandas()
    assert list(frame.columns) == ["x", "x", "d", "ts", "naive", "n", "s"]
    row = frame.iloc[0].tolist()
    assert row[6] == "é"
    assert row[5] is None
    if warehouse.kind == "sqlite":  # SQLite has no DECIMAL, DATE or TIMESTAMP storage types
        assert row[:3] == [12.5, 0.1, "2024-02-29"]
        return
    assert row[0] == Decimal("12.50") and isinstance(row[0], Decimal)
    assert row[1] == Decimal("0.10") and isinstance(row[1], Decimal)
    assert row[2] == dt.date(2024, 2, 29) and not isinstance(row[2], dt.datetime)
    assert row[4].to_pydatetime() == dt.datetime(2024, 1, 1, 10, 0)
    assert row[4].tzinfo is None
    if warehouse.kind != "mariadb":  # MariaDB has no time-zone-aware type
        assert row[3].tzinfo is not None
        assert row[3].to_pydatetime() == dt.datetime(2024, 1, 1, 8, 0, tzinfo=dt.UTC)


def test_the_orders_table_keeps_its_types(warehouse: Warehouse) -> None:
    result = warehouse.engine.run_agent(
        f"SELECT id, customer, amount, ordered_at FROM {warehouse.table} ORDER BY id",
        timeout_s=warehouse.timeout_s,
        max_rows=10,
    )
    first = result.table.to_pylist()[0]
    assert first["id"] == 1 and first["customer"] == "ann"
    if warehouse.kind == "sqlite":
        assert first["amount"] == 10.5 and first["ordered_at"] == "2024-01-05"
    else:
        assert first["amount"] == Decimal("10.50") and isinstance(first["amount"], Decimal)
        assert first["ordered_at"] == dt.date(2024, 1, 5)


def test_empty_results_keep_their_columns(warehouse: Warehouse) -> None:
    result = warehouse.engine.run_agent(
        f"SELECT id, customer AS c, customer AS c FROM {warehouse.table} WHERE id < 0",
        timeout_s=warehouse.timeout_s,
        max_rows=10,
    )
    assert result.num_rows == 0
    assert result.table.column_names == ["id", "c", "c"]
    assert list(result.to_pandas().columns) == ["id", "c", "c"]


def test_errors_say_what_went_wrong(warehouse: Warehouse) -> None:
    with pytest.raises(QueryError) as caught:
        warehouse.engine.run_agent(
            "SELECT no_such_column FROM " + warehouse.table,
            timeout_s=warehouse.timeout_s,
            max_rows=10,
        )
    assert caught.value.kind is QueryErrorKind.RUNTIME
    assert "no_such_column" in caught.value.message
    assert "\n" not in caught.value.message


WIDE_ROWS = {  # 2,000 rows of 10 KB: 20 MB, over a 1 MB limit long before the end
    "duckdb": "SELECT repeat('x', 10000) AS v FROM range(2000)",
    "sqlite": "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 2000) "
    "SELECT printf('%.*c', 10000, 'x') AS v FROM r",
    "postgres": "SELECT repeat('x', 10000) AS v FROM generate_series(1, 2000)",
    "mariadb": "SELECT repeat('x', 10000) AS v FROM seq_1_to_2000",
}
WIDE_ROWS["duckdb_file"] = WIDE_ROWS["duckdb"]
WIDE_ROWS["spark"] = WIDE_ROWS["spark_connect"] = "SELECT repeat('x', 10000) AS v FROM range(2000)"
ONE_HUGE_VALUE = {  # one value of 64 MB, over a 1 MB limit
    "duckdb": "SELECT repeat('x', 67108864) AS v",
    "sqlite": "SELECT hex(zeroblob(33554432)) AS v",
    "postgres": "SELECT repeat('x', 67108864) AS v",
    "mariadb": "SELECT repeat('x', 67108864) AS v",
}
ONE_HUGE_VALUE["duckdb_file"] = ONE_HUGE_VALUE["duckdb"]
ONE_HUGE_VALUE["spark"] = ONE_HUGE_VALUE["spark_connect"] = "SELECT repeat('x', 67108864) AS v"
COLLECTED_AT_ONCE = {"spark", "spark_connect"}
"""Engines that bring a (row-limited) result over in one piece: Spark's toArrow. Their bytes are
measured on arrival; what bounds the transfer is Spark's spark.driver.maxResultSize."""
MB = 2**20


@pytest.mark.parametrize("agent", [True, False], ids=["agent", "truth"])
def test_a_result_over_max_result_mb_is_too_large_with_the_size_reached(
    warehouse: Warehouse, agent: bool
) -> None:
    run = warehouse.engine.run_agent if agent else warehouse.engine.run_truth
    with pytest.raises(QueryError) as caught:
        run(WIDE_ROWS[warehouse.kind], timeout_s=30, max_rows=100_000, max_bytes=MB)
    assert caught.value.kind is QueryErrorKind.TOO_LARGE
    message = caught.value.message
    assert message.startswith("the result reached ") and "over run.max_result_mb=1;" in message
    reached = float(message.split("reached ")[1].split(" MB")[0])
    # Counted while fetching: stopped within one chunk past the limit, not at 20 MB.
    assert 1.0 < reached < (25 if warehouse.kind in COLLECTED_AT_ONCE else 10)
    # Under the limit the same rows are fine.
    fine = run(WIDE_ROWS[warehouse.kind], timeout_s=30, max_rows=100_000, max_bytes=64 * MB)
    assert fine.num_rows == 2000


def test_one_huge_value_is_too_large(warehouse: Warehouse) -> None:
    if warehouse.kind == "mariadb":
        pytest.skip("MariaDB returns NULL for a repeat() past max_allowed_packet (a warning)")
    with pytest.raises(QueryError) as caught:
        warehouse.engine.run_agent(
            ONE_HUGE_VALUE[warehouse.kind], timeout_s=30, max_rows=10, max_bytes=MB
        )
    assert caught.value.kind is QueryErrorKind.TOO_LARGE
    if warehouse.kind == "sqlite":
        # SQLite builds the value in this process: it is refused at the limit, not fetched.
        assert "string or blob too big" in caught.value.message


def test_the_check_counts_against_the_query_timeout(
    warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.engines.guard as guard

    if warehouse.kind in ("duckdb_file", "postgres", "mariadb"):
        pytest.skip(
            "agent SQL runs in the query process, which this patch does not reach; the "
            "in-memory duckdb and sqlite warehouses run the same check in this process"
        )
    original = guard._parse

    def slow_parse(sql: str, dialect: str) -> object:
        time.sleep(0.4)
        return original(sql, dialect)

    monkeypatch.setattr(guard, "_parse", slow_parse)
    guard._REMEMBERED.clear()  # checked afresh, not remembered from another test
    with pytest.raises(QueryError) as caught:
        warehouse.engine.run_agent("SELECT 1 AS x", timeout_s=0.3, max_rows=10)
    assert caught.value.kind is QueryErrorKind.TIMEOUT
    assert caught.value.message == (
        "parsing and checking the SQL took its whole 0.3 s timeout; it was not run"
    )


def test_agent_sql_over_max_sql_kb_or_too_deep_is_not_parsed_or_run(
    warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlbench.engines.guard as guard
    from sqlbench.engines.limits import run_agent_sql
    from sqlbench.project.files import RunSettings

    parsed: list[str] = []
    original = guard._sqlglot_parse
    monkeypatch.setattr(
        guard,
        "_sqlglot_parse",
        lambda sql, dialect, tokens: parsed.append(sql) or original(sql, dialect, tokens),
    )
    run = RunSettings(max_sql_kb=4, query_timeout_s=30)
    in_list = f"SELECT 1 AS x WHERE 1 IN ({','.join(map(str, range(2000)))})"  # 9 KB
    started = time.monotonic()
    with pytest.raises(QueryError) as caught:
        run_agent_sql(warehouse.engine, in_list, run)
    assert caught.value.kind is QueryErrorKind.SQL_LIMIT
    assert caught.value.message == (
        "the SQL is 8.71 KB, over run.max_sql_kb=4; it was not parsed or run"
    )
    deep = "SELECT " + "(" * 3000 + "1" + ")" * 3000
    with pytest.raises(QueryError) as caught:
        run_agent_sql(warehouse.engine, deep, RunSettings())
    assert caught.value.kind is QueryErrorKind.SQL_LIMIT
    assert "nests parentheses 3000 deep, over sqlbench's limit of 30" in caught.value.message
    assert parsed == [] and time.monotonic() - started < 1
    # Nesting the parenthesis count misses (NOT NOT ...) overflows the parser: a verdict too.
    with pytest.raises(QueryError) as caught:
        run_agent_sql(warehouse.engine, "SELECT " + "NOT " * 3000 + "TRUE", RunSettings())
    assert caught.value.kind is QueryErrorKind.SQL_LIMIT
    assert "nested too deeply for sqlbench's SQL parser" in caught.value.message
    # Under the limits, the same engine still answers.
    fine = run_agent_sql(warehouse.engine, "SELECT " + "(" * 30 + "1" + ")" * 30 + " AS x", run)
    assert fine.table.column(0).to_pylist() == [1]


def test_sqlite_runs_no_python_while_a_query_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A deadline check inside SQLite (a progress handler) is a Python call that takes the GIL
    # from the run's other threads, and waits for it while they hold it: a long query beside
    # them ran into its timeout. The deadline is kept by one thread that interrupts the query.
    import sqlite3

    from sqlbench.engines import profiles
    from sqlbench.engines.open import open_engine
    from sqlbench.project.files import Settings

    path = tmp_path / "w.sqlite"
    sqlite3.connect(path).close()
    sql = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 300000) "
    sql += "SELECT sum(i) AS s FROM r"
    checks: list[float] = []

    class CountingTime:
        @staticmethod
        def monotonic() -> float:
            checks.append(1.0)
            return time.monotonic()

    engine = open_engine(Settings(warehouse=f"sqlite:///{path}"), tmp_path)
    try:
        engine.run_agent("SELECT 1 AS one", timeout_s=30, max_rows=10)  # the pool is warm
        monkeypatch.setattr(profiles, "time", CountingTime)
        calls: list[str] = []
        sys.setprofile(lambda frame, event, arg: calls.append(event))
        try:
            result = engine.run_agent(sql, timeout_s=30, max_rows=10)
        finally:
            sys.setprofile(None)
    finally:
        engine.close()
    assert result.table.column(0).to_pylist() == [300000 * 300001 // 2]
    assert len(checks) <= 2  # arming, and the watcher's one look at the clock
    assert len(calls) < 5_000  # the run's own Python, not one call per few SQLite instructions


def test_a_sqlite_deadline_never_reaches_the_connections_next_query(tmp_path: Path) -> None:
    """A query that ended before its deadline is not interrupted when that deadline comes,
    even while the same connection runs its next query; a runaway query still stops."""
    import sqlite3

    from sqlbench.engines.open import open_engine
    from sqlbench.project.files import Settings

    path = tmp_path / "w.sqlite"
    sqlite3.connect(path).close()
    slow = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3000000) "
    slow += "SELECT sum(i) AS s FROM r"
    engine = open_engine(Settings(warehouse=f"sqlite:///{path}"), tmp_path)
    try:
        started = time.monotonic()
        engine.run_agent(slow, timeout_s=30, max_rows=10)
        took = time.monotonic() - started
        # Short deadlines that pass while the slow query runs on the same (kept) connection.
        for _ in range(3):
            engine.run_agent("SELECT 1 AS one", timeout_s=max(0.05, took / 4), max_rows=10)
        result = engine.run_agent(slow, timeout_s=30, max_rows=10)
        assert result.table.column(0).to_pylist() == [3000000 * 3000001 // 2]
        endless = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
        started = time.monotonic()
        with pytest.raises(QueryError) as caught:
            engine.run_agent(endless + "SELECT count(*) FROM r", timeout_s=0.5, max_rows=10)
        assert caught.value.kind is QueryErrorKind.TIMEOUT
        assert time.monotonic() - started < 1.5
    finally:
        engine.close()


def test_a_query_that_waits_for_the_query_process_to_start_says_how_long() -> None:
    """The time a query spent waiting for sqlbench's query process to start is told apart
    (``take_startup_ms``), once; a run starts it before its first question instead."""
    from sqlbench.engines.agent_process import take_startup_ms
    from sqlbench.engines.duckdb import DuckDBEngine

    take_startup_ms()
    with DuckDBEngine(memory_limit_mb=256, query_process_mb=256) as lazy:
        lazy.run_agent("SELECT 1 AS x", timeout_s=30, max_rows=10)
        assert take_startup_ms() > 0
        lazy.run_agent("SELECT 2 AS x", timeout_s=30, max_rows=10)
        assert take_startup_ms() == 0
    with DuckDBEngine(memory_limit_mb=256, query_process_mb=256) as eager:
        eager.start_query_process()
        take_startup_ms()  # this thread started it: not a query's wait
        eager.run_agent("SELECT 1 AS x", timeout_s=30, max_rows=10)
        assert take_startup_ms() == 0
