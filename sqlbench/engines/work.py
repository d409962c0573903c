"""What a query read, as the warehouse reports it (docs/cost.md, "Warehouse work").

Each engine reports a different thing, named by ``Work.unit``. As the query runs: DuckDB's
profiler counts the rows its table scans read (``rows scanned``, row groups its zone maps
skipped not included), and a local Spark session's executed plan the rows its scan nodes
output (``rows scanned``); both come with the query's result (``ResultSet.work``), nothing is
run twice. From the planner, asked separately: PostgreSQL's ``EXPLAIN (FORMAT JSON)`` total
cost (``plan cost``, an estimate, nothing run), or with the warehouse's ``run.explain_analyze``
its ``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`` shared buffers hit and read (``buffers``: the
query runs again under EXPLAIN); SQLite's ``EXPLAIN QUERY PLAN`` tables scanned in full
(``full table scans``). MySQL/MariaDB and Spark Connect report nothing here (None, "not
reported"). Wall time is never used: it is noise, not work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ROWS_SCANNED = "rows scanned"
PLAN_COST = "plan cost"
TABLE_SCANS = "full table scans"
BUFFERS = "buffers"


@dataclass(frozen=True)
class Work:
    """How much one query read, in the engine's own unit."""

    amount: float
    unit: str


DUCKDB_PROFILED_METRICS = "['query.total_rows_scanned']"
"""The one metric DuckDB's profiler collects for sqlbench (``tracked_metrics``): collecting
every metric (its default) costs about 0.2 ms a query, this one nothing measurable."""


def duckdb_profiled_work(profile_json: str) -> Work | None:
    """The rows DuckDB's table scans read, from its profiler's JSON
    (``get_profiling_information()``); None when it holds no count.

    Example:
        >>> duckdb_profiled_work('{"query": {"total_rows_scanned": 16684}}')
        Work(amount=16684.0, unit='rows scanned')
        >>> duckdb_profiled_work('{"result": "disabled"}') is None
        True
    """
    try:
        profile = json.loads(profile_json)
    except ValueError:
        return None
    query = profile.get("query") if isinstance(profile, dict) else None
    rows = query.get("total_rows_scanned") if isinstance(query, dict) else None
    if not isinstance(rows, int | float) or isinstance(rows, bool):
        return None
    return Work(float(rows), ROWS_SCANNED)


def explain_statement(dialect: str, sql: str, *, analyze: bool = False) -> str | None:
    """The statement that makes ``dialect``'s planner describe ``sql``: without running it,
    or on PostgreSQL with ``analyze`` running it under ``EXPLAIN (ANALYZE, BUFFERS)``; None
    where the engine reports nothing cheap (MySQL/MariaDB, others)."""
    if dialect == "postgres":
        if analyze:
            return f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}"
        return f"EXPLAIN (FORMAT JSON) {sql}"
    if dialect == "sqlite":
        return f"EXPLAIN QUERY PLAN {sql}"
    return None


def explained_work(
    dialect: str, rows: Sequence[Sequence[Any]], *, analyze: bool = False
) -> Work | None:
    """The work ``explain_statement``'s rows report.

    Example:
        >>> explained_work("sqlite", [(2, 0, 0, "SCAN t"), (5, 0, 0, "SEARCH u USING INDEX i")])
        Work(amount=1.0, unit='full table scans')
        >>> explained_work("postgres", [([{"Plan": {"Total Cost": 35.5}}],)])
        Work(amount=35.5, unit='plan cost')
        >>> plan = {"Total Cost": 35.5, "Shared Hit Blocks": 3, "Shared Read Blocks": 1}
        >>> explained_work("postgres", [([{"Plan": plan}],)], analyze=True)
        Work(amount=4.0, unit='buffers')
    """
    if dialect == "postgres":
        if not rows or not rows[0]:
            return None
        plan = rows[0][0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        try:
            top = plan[0]["Plan"]
        except (KeyError, IndexError, TypeError):
            return None
        if analyze:
            # The top node's counts include its children's (EXPLAIN's BUFFERS are cumulative).
            hit, read = top.get("Shared Hit Blocks"), top.get("Shared Read Blocks")
            if not isinstance(hit, int) or not isinstance(read, int):
                return None
            return Work(float(hit + read), BUFFERS)
        cost = top.get("Total Cost")
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
