"""``{{ ref('m') }}`` in ground truth (docs/dbt.md), without dbt: the project's checks read it
as the table ``m``, and an engine with a dbt build's relations runs it against them."""

from __future__ import annotations

from pathlib import Path

import pytest

from sqlbench.dbt.refs import resolve_refs
from sqlbench.engines.duckdb import DuckDBEngine
from sqlbench.errors import QueryError
from sqlbench.testing import write_project
from sqlbench.validation import check_project


def test_a_ref_in_ground_truth_is_no_parse_warning(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "sqlbench.yml": {"dialect": "duckdb"},
            "eval_questions/q.yml": {
                "eval_questions": [
                    {
                        "name": "total",
                        "question": "Total?",
                        "sql": "SELECT sum(amount) FROM {{ ref('orders') }} ORDER BY 1",
                        "compare": {"order": "auto"},
                    }
                ]
            },
        },
    )
    checked = check_project(tmp_path)
    assert [p.message for p in checked.problems] == []


def test_an_engine_runs_ground_truth_refs_against_the_builds_relations(tmp_path: Path) -> None:
    sql = tmp_path / "setup.sql"
    sql.write_text("CREATE SCHEMA shop; CREATE TABLE shop.orders AS SELECT 42 AS amount;")
    with DuckDBEngine() as engine:
        engine.setup(tmp_path, [sql])
        engine.relations = {"orders": '"shop"."orders"'}
        result = engine.run_truth(
            "SELECT amount FROM {{ ref('orders') }}", timeout_s=10, max_rows=10
        )
        assert result.table.to_pylist() == [{"amount": 42}]
        with pytest.raises(QueryError, match="no model 'ordrs'; did you mean 'orders'"):
            engine.run_truth("SELECT * FROM {{ ref('ordrs') }}", timeout_s=10, max_rows=10)


def test_a_ref_without_a_dbt_build_says_what_is_missing() -> None:
    with pytest.raises(QueryError, match=r"sqlbench\.yml has no `dbt:` key"):
        resolve_refs("SELECT * FROM {{ ref('orders') }}", {})
