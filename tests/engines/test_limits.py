"""Limits and types on every engine: a runaway query stops within its timeout plus a second, an
over-long result is cut at max_rows without fetching the rest, and values keep their types."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal

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
RUNAWAY["duckdb_file"] = RUNAWAY["duckdb"]
ENDLESS_ROWS["duckdb_file"] = ENDLESS_ROWS["duckdb"]


@pytest.mark.parametrize("agent", [True, False], ids=["agent", "truth"])
def test_a_runaway_query_stops_within_its_timeout_plus_a_second(
    warehouse: Warehouse, agent: bool
) -> None:
    run = warehouse.engine.run_agent if agent else warehouse.engine.run_truth
    started = time.monotonic()
    with pytest.raises(QueryError) as caught:
        run(RUNAWAY[warehouse.kind], timeout_s=1.0, max_rows=10)
    elapsed = time.monotonic() - started
    assert caught.value.kind is QueryErrorKind.TIMEOUT
    assert caught.value.message == "the query ran past its 1 s timeout and was stopped"
    assert 0.9 <= elapsed < 2.0
    # The connection that ran it is still usable.
    again = warehouse.engine.run_agent(
        f"SELECT COUNT(*) FROM {warehouse.table}", timeout_s=10, max_rows=1
    )
    assert again.table.column(0).to_pylist() == [4]


@pytest.mark.parametrize("agent", [True, False], ids=["agent", "truth"])
def test_a_result_over_max_rows_is_cut_without_fetching_the_rest(
    warehouse: Warehouse, agent: bool
) -> None:
    run = warehouse.engine.run_agent if agent else warehouse.engine.run_truth
    started = time.monotonic()
    with pytest.raises(QueryError) as caught:
        run(ENDLESS_ROWS[warehouse.kind], timeout_s=30, max_rows=1000)
    # A billion rows cannot be fetched in this time: the fetch stopped at max_rows + 1.
    assert time.monotonic() - started < 5
    assert caught.value.kind is QueryErrorKind.TOO_MANY_ROWS
    assert "more than max_rows=1000 rows" in caught.value.message
    again = warehouse.engine.run_agent(
        f"SELECT COUNT(*) FROM {warehouse.table}", timeout_s=10, max_rows=1
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
TYPED["duckdb_file"] = TYPED["duckdb"]


def test_types_and_duplicate_names_are_kept(warehouse: Warehouse) -> None:
    frame = warehouse.engine.run_agent(TYPED[warehouse.kind], timeout_s=10, max_rows=10).to_pandas()
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
        timeout_s=10,
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
        timeout_s=10,
        max_rows=10,
    )
    assert result.num_rows == 0
    assert result.table.column_names == ["id", "c", "c"]
    assert list(result.to_pandas().columns) == ["id", "c", "c"]


def test_errors_say_what_went_wrong(warehouse: Warehouse) -> None:
    with pytest.raises(QueryError) as caught:
        warehouse.engine.run_agent(
            "SELECT no_such_column FROM " + warehouse.table, timeout_s=10, max_rows=10
        )
    assert caught.value.kind is QueryErrorKind.RUNTIME
    assert "no_such_column" in caught.value.message
    assert "\n" not in caught.value.message
