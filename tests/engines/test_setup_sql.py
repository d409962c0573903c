"""Setup files split into labelled statements, shared by the server engines and Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from sqlbench.engines.setup_sql import setup_statements, temporary_setup
from sqlbench.errors import EngineError


def test_each_statement_is_labelled_with_its_file_and_number(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    first = tmp_path / "models" / "a.sql"
    first.write_text("CREATE VIEW a AS SELECT ';' AS x;\n-- note; here\nCREATE VIEW b AS SELECT 2;")
    second = tmp_path / "b.sql"
    second.write_text("CREATE TABLE c AS SELECT 3 AS y")
    assert list(setup_statements([first, second], tmp_path, "duckdb")) == [
        ("models/a.sql (statement 1)", "CREATE VIEW a AS SELECT ';' AS x"),
        ("models/a.sql (statement 2)", "CREATE VIEW b AS SELECT 2"),
        ("b.sql (statement 1)", "CREATE TABLE c AS SELECT 3 AS y"),
    ]
    assert [s.where for s in temporary_setup([first, second], tmp_path, "postgres")] == [
        "models/a.sql (statement 1)",
        "models/a.sql (statement 2)",
        "b.sql (statement 1)",
    ]


def test_a_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    fine = tmp_path / "fine.sql"
    fine.write_text("CREATE VIEW a AS SELECT 1 AS x;")
    statements = setup_statements([fine, tmp_path / "missing.sql"], tmp_path, "duckdb")
    assert next(statements)[0] == "fine.sql (statement 1)"
    with pytest.raises(EngineError, match=r"^missing.sql: cannot read setup SQL"):
        next(statements)
