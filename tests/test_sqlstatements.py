"""What counts as a statement in a sqlglot parse (sqlbench.sqlstatements)."""

from __future__ import annotations

import doctest

import pytest
import sqlglot

import sqlbench.sqlstatements
from sqlbench.sqlstatements import statements


@pytest.mark.parametrize(
    ("sql", "count"),
    [
        ("SELECT 1", 1),
        ("SELECT 1;", 1),
        ("SELECT 1; -- done", 1),
        ("SELECT 1; /* done */", 1),
        ("SELECT 1;; -- done", 1),
        ("SELECT 1; SELECT 2; -- two", 2),
        ("-- nothing but a comment", 0),
    ],
)
def test_comments_and_empty_statements_are_not_statements(sql: str, count: int) -> None:
    assert len(statements(sqlglot.parse(sql, read="duckdb"))) == count


def test_docstring_examples() -> None:
    failed, attempted = doctest.testmod(sqlbench.sqlstatements)
    assert attempted > 0 and failed == 0
