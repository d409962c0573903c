"""The dialects sqlbench names without asking sqlglot are sqlglot's own."""

from __future__ import annotations

from sqlbench.project import dialect
from sqlbench.project.dialect import known_dialects, unknown_dialect_message


def test_every_dialect_a_warehouse_url_names_is_a_sqlglot_dialect() -> None:
    # unknown_dialect_message accepts these without importing sqlglot: they must be its names.
    assert set(known_dialects()) >= dialect._URL_DIALECTS


def test_a_known_dialect_passes_and_a_misspelt_one_gets_the_closest() -> None:
    for name in [*sorted(dialect._URL_DIALECTS), "DuckDB", "tsql", "materialize"]:
        assert unknown_dialect_message(name) is None, name
    assert unknown_dialect_message("duckbd") == "unknown dialect 'duckbd'; did you mean 'duckdb'?"
