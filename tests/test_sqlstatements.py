"""What counts as a statement in a sqlglot parse (sqlbench.sqlstatements)."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys

import pytest
import sqlglot
from sqlglot.errors import ParseError, concat_messages, merge_errors

import sqlbench.sqlstatements
from sqlbench.sqlstatements import error_text, statements


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


_GUARD_MESSAGE = """
from sqlbench.engines.guard import check_read_only
from sqlbench.errors import QueryError
try:
    check_read_only("SELECT i FROM range(", "duckdb")
except QueryError as err:
    print(err.message)
"""


def test_missing_arguments_are_named_in_one_order_whatever_the_hash_seed() -> None:
    # sqlglot lists DuckDB range('s missing 'start' and 'end' in a set's order: seeds 0 and 1
    # gave the two orders, so the guard's reason differed between two runs of the same SQL.
    messages = set()
    for seed in ("0", "1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-c", _GUARD_MESSAGE],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        messages.add(done.stdout.strip())
    assert len(messages) == 1
    (message,) = messages
    assert "Required keyword: 'end' missing" in message
    assert message.index("'end'") < message.index("'start'")


def _parse_error(*descriptions: str, col: int = 20) -> ParseError:
    errors = [
        ParseError.new(
            f"{d}. Line 1, Col: {col}.\n  SELECT i FROM \x1b[4mrange(\x1b[0m",
            description=d,
            line=1,
            col=col,
            start_context="SELECT i FROM ",
            highlight="range(",
            end_context="",
        )
        for d in descriptions
    ]
    return ParseError(concat_messages(errors, 3), errors=merge_errors(errors))


def test_only_one_expressions_missing_arguments_are_reordered() -> None:
    missing = "Required keyword: '{}' missing for <class 'sqlglot.expressions.X'>"
    in_order = _parse_error(missing.format("end"), missing.format("start"), "Expecting )")
    swapped = _parse_error(missing.format("start"), missing.format("end"), "Expecting )")
    # Already in order: sqlglot's own text, untouched; swapped: rebuilt to the same text.
    assert error_text(in_order, 1000) == error_text(ValueError(str(in_order)), 1000)
    assert error_text(swapped, 1000) == error_text(in_order, 1000)
    # Errors of another kind keep their places, and "... and N more" counts the rest.
    other = _parse_error("Expecting )", missing.format("start"), missing.format("end"), "Z")
    text = error_text(other, 1000)
    assert text.startswith("Expecting ). Line 1, Col: 20. SELECT i FROM range(")
    assert text.index("'end'") < text.index("'start'")
    assert text.endswith("... and 1 more")
    # Missing arguments of errors at different tokens are not one expression's.
    apart = _parse_error(missing.format("start"), col=5)
    apart.errors.extend(_parse_error(missing.format("end"), col=9).errors)
    assert error_text(apart, 1000) == error_text(ValueError(str(apart)), 1000)
