"""Warehouse work (docs/cost.md): what each engine reports a query reads, from its planner,
nothing run; "not reported" (None) where the engine reports nothing."""

from __future__ import annotations

import pytest
from engine_warehouses import ROWS, Warehouse

from sqlbench.engines.work import PLAN_COST, ROWS_SCANNED, TABLE_SCANS, ratio

EXPECTED_UNIT = {
    "duckdb": ROWS_SCANNED,
    "duckdb_file": ROWS_SCANNED,
    "sqlite": TABLE_SCANS,
    "postgres": PLAN_COST,
    "mariadb": None,
    "spark": None,
    "spark_connect": None,
}


def test_each_engine_reports_its_work_or_nothing(warehouse: Warehouse) -> None:
    table = warehouse.table
    once = warehouse.engine.work_of(f"SELECT customer FROM {table}")
    twice = warehouse.engine.work_of(
        f"SELECT a.customer FROM {table} a CROSS JOIN {table} b WHERE a.id <> b.id"
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
    elif unit == TABLE_SCANS:
        assert (once.amount, twice.amount) == (1.0, 2.0)
    else:
        assert twice.amount > once.amount > 0


def test_sql_the_planner_refuses_reports_nothing(warehouse: Warehouse) -> None:
    assert warehouse.engine.work_of("SELECT no_such_column FROM nowhere") is None


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
    from sqlbench.engines.work import Work

    assert ratio(Work(*truth), Work(*agent)) == expected
    assert ratio(Work(1.0, ROWS_SCANNED), Work(1.0, PLAN_COST)) is None
