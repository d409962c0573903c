"""The same ground truth, written in DuckDB's dialect, returns the same result on DuckDB, SQLite,
PostgreSQL and MariaDB (transpiled with sqlglot where the warehouse's dialect differs)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from engine_warehouses import Warehouse

from sqlbench.truth import transpile_truth

TRUTHS = [
    "SELECT customer, SUM(amount) AS total, COUNT(*) AS n FROM {t} GROUP BY customer "
    "ORDER BY customer",
    "SELECT id, amount FROM {t} WHERE ordered_at >= DATE '2024-02-01' AND amount > 5 ORDER BY id",
    "WITH c AS (SELECT customer, SUM(amount) AS s FROM {t} GROUP BY customer) "
    "SELECT customer, s FROM c WHERE s > (SELECT AVG(s) FROM c) ORDER BY customer",
    "SELECT customer, MAX(amount) - MIN(amount) AS spread FROM {t} GROUP BY customer "
    "HAVING COUNT(*) > 1 ORDER BY customer",
    "SELECT COUNT(DISTINCT customer) AS customers, MIN(ordered_at) AS first_order FROM {t}",
    "SELECT o.id, p.id FROM {t} o JOIN {t} p ON o.customer = p.customer AND o.id < p.id "
    "ORDER BY o.id, p.id",
    "SELECT CASE WHEN amount >= 10 THEN 'big' ELSE 'small' END AS size, COUNT(*) AS n "
    "FROM {t} GROUP BY CASE WHEN amount >= 10 THEN 'big' ELSE 'small' END ORDER BY size",
    "SELECT id, ROW_NUMBER() OVER (PARTITION BY customer ORDER BY ordered_at DESC) AS recent "
    "FROM {t} ORDER BY id",
    "SELECT customer, CAST(AVG(amount) AS DECIMAL(10, 2)) AS mean FROM {t} "
    "WHERE customer IN ('ann', 'cy') GROUP BY customer ORDER BY customer",
]

EXPECTED = [
    [("ann", 13.5, 2), ("bob", 7.25, 1), ("cy", 99.99, 1)],
    [(2, 7.25), (4, 99.99)],
    [("cy", 99.99)],
    [("ann", 7.5)],
    [(3, "2024-01-05")],
    [(1, 3)],
    [("big", 2), ("small", 2)],
    [(1, 2), (2, 1), (3, 1), (4, 1)],
    [("ann", 6.75), ("cy", 99.99)],
]


def _plain(value: Any) -> Any:
    """One representation per value across drivers (SQLite keeps dates as text, REAL for
    DECIMAL): numbers as rounded floats, dates as ISO text."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Decimal | float) and not isinstance(value, bool):
        number = round(float(value), 6)
        return int(number) if number.is_integer() and isinstance(value, Decimal) else number
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


@pytest.mark.parametrize(("truth", "expected"), list(zip(TRUTHS, EXPECTED, strict=True)))
def test_the_same_duckdb_ground_truth_gives_the_same_rows_everywhere(
    warehouse: Warehouse, truth: str, expected: list[tuple[Any, ...]]
) -> None:
    sql = transpile_truth(truth.format(t=warehouse.table), "duckdb", warehouse.dialect)
    result = warehouse.engine.run_truth(sql, timeout_s=warehouse.timeout_s, max_rows=100)
    columns = [column.to_pylist() for column in result.table.columns]
    rows = [tuple(_plain(v) for v in row) for row in zip(*columns, strict=True)]
    assert rows == [tuple(_plain(v) for v in row) for row in expected]
