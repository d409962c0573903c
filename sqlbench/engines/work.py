"""What a query read, as the warehouse reports it (docs/cost.md, "Warehouse work").

Each engine reports a different thing, named by ``Work.unit``: DuckDB's plan (``EXPLAIN
(FORMAT JSON)``, nothing run) scans tables whose rows it knows (``rows scanned``: the sizes of
the tables each scan reads; DuckDB's profiler cannot be turned on once sqlbench has locked the
engine's configuration, and running the query again under EXPLAIN ANALYZE would double its
cost); PostgreSQL's planner
gives ``EXPLAIN (FORMAT JSON)``'s total cost (``plan cost``, the planner's estimate, nothing
run); SQLite's ``EXPLAIN QUERY PLAN`` lists the tables it scans in full (``full table
scans``). MySQL/MariaDB and Spark report nothing here (None, "not reported"). Wall time is
never used: it is noise, not work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ROWS_SCANNED = "rows scanned"
PLAN_COST = "plan cost"
TABLE_SCANS = "full table scans"


@dataclass(frozen=True)
class Work:
    """How much one query read, in the engine's own unit."""

    amount: float
    unit: str


def duckdb_table_rows(cursor: Any) -> dict[str, int]:
    """Rows per table of a DuckDB database, by ``database.schema.table`` (as its plans name
    them)."""
    rows = cursor.execute(
        "SELECT database_name, schema_name, table_name, estimated_size FROM duckdb_tables()"
    ).fetchall()
    return {f"{db}.{schema}.{table}": int(size or 0) for db, schema, table, size in rows}


def duckdb_plan_work(plan_json: str, table_rows: dict[str, int]) -> Work | None:
    """The rows DuckDB's plan reads: each table scan's table size (zone maps may skip some at
    run time, so it is an upper bound), from ``EXPLAIN (FORMAT JSON)``'s text; None when the
    plan scans something else (a file, a function) whose size is unknown.

    Example:
        >>> plan = '[{"name": "SEQ_SCAN", "extra_info": {"Table": "memory.main.t"}}]'
        >>> duckdb_plan_work(plan, {"memory.main.t": 4000})
        Work(amount=4000.0, unit='rows scanned')
    """
    try:
        nodes = json.loads(plan_json)
    except ValueError:
        return None
    total = 0
    stack = list(nodes) if isinstance(nodes, list) else [nodes]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        stack.extend(node.get("children") or [])
        name = str(node.get("name", ""))
        if "SCAN" not in name:
            continue
        info = node.get("extra_info")
        table = info.get("Table") if isinstance(info, dict) else None
        if not isinstance(table, str) or table not in table_rows:
            if name in ("SEQ_SCAN", "TABLE_SCAN", "READ_CSV", "READ_PARQUET"):
                return None
            continue  # a scan of a constant, a CTE or a column data collection: no table read
        total += table_rows[table]
    return Work(float(total), ROWS_SCANNED)


def explain_statement(dialect: str, sql: str) -> str | None:
    """The statement that makes ``dialect``'s planner describe ``sql`` without running it;
    None where the engine reports nothing cheap (MySQL/MariaDB, others)."""
    if dialect == "postgres":
        return f"EXPLAIN (FORMAT JSON) {sql}"
    if dialect == "sqlite":
        return f"EXPLAIN QUERY PLAN {sql}"
    return None


def explained_work(dialect: str, rows: Sequence[Sequence[Any]]) -> Work | None:
    """The work ``explain_statement``'s rows report.

    Example:
        >>> explained_work("sqlite", [(2, 0, 0, "SCAN t"), (5, 0, 0, "SEARCH u USING INDEX i")])
        Work(amount=1.0, unit='full table scans')
        >>> explained_work("postgres", [([{"Plan": {"Total Cost": 35.5}}],)])
        Work(amount=35.5, unit='plan cost')
    """
    if dialect == "postgres":
        if not rows or not rows[0]:
            return None
        plan = rows[0][0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        try:
            cost = plan[0]["Plan"]["Total Cost"]
        except (KeyError, IndexError, TypeError):
            return None
        return Work(float(cost), PLAN_COST) if isinstance(cost, int | float) else None
    if dialect == "sqlite":
        scans = 0
        for row in rows:
            detail = str(row[-1]) if row else ""
            if detail.startswith("SCAN ") and "CONSTANT ROW" not in detail:
                scans += 1
        return Work(float(scans), TABLE_SCANS)
    return None


def ratio(truth: Work | None, agent: Work | None) -> float | None:
    """agent / truth in the same unit; None when either is unknown, the units differ or the
    ground truth's work is 0.

    Example:
        >>> ratio(Work(100, ROWS_SCANNED), Work(4000, ROWS_SCANNED))
        40.0
    """
    if truth is None or agent is None or truth.unit != agent.unit or truth.amount <= 0:
        return None
    return agent.amount / truth.amount
