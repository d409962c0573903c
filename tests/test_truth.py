"""Ground truth in the project's dialect, transpiled to the warehouse's only when they differ, and
never approximated: what sqlglot cannot carry over is an error with a reason."""

from __future__ import annotations

import pytest

from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.project.files import Question, Settings
from sqlbench.truth import ground_truths, transpile_truth, truth_dialect


def test_same_dialect_is_returned_as_written() -> None:
    sql = "SELECT a::INT, list(b) FROM t -- kept as is\n"
    assert transpile_truth(sql, "duckdb", "duckdb") == sql
    assert transpile_truth(sql, "DuckDB", "duckdb") == sql


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("postgres", "SELECT ARRAY_AGG(x) AS xs, CAST(d AS DATE) AS d FROM t"),
        ("mysql", "SELECT GROUP_CONCAT(x SEPARATOR ',') AS xs, CAST(d AS DATE) AS d FROM t"),
        ("sqlite", "SELECT GROUP_CONCAT(x, ',') AS xs, DATE(d) AS d FROM t"),
    ],
)
def test_another_dialect_is_transpiled(target: str, expected: str) -> None:
    sql = (
        "SELECT list(x) AS xs, d::DATE AS d FROM t"
        if target == "postgres"
        else ("SELECT string_agg(x, ',') AS xs, CAST(d AS DATE) AS d FROM t")
    )
    assert transpile_truth(sql, "duckdb", target) == expected


def test_what_sqlglot_cannot_carry_over_is_an_error_not_an_approximation() -> None:
    with pytest.raises(QueryError) as caught:
        transpile_truth("SELECT a FROM t GROUP BY a ORDER BY 1", "duckdb", "mysql")
    assert caught.value.kind is QueryErrorKind.RUNTIME
    assert caught.value.message.startswith(
        "sqlglot cannot transpile the ground truth from duckdb to mysql: 'NULLS LAST'"
    )


def test_unparseable_ground_truth_is_a_syntax_error() -> None:
    with pytest.raises(QueryError) as caught:
        transpile_truth("SELECT FROM WHERE (", "duckdb", "postgres")
    assert caught.value.kind is QueryErrorKind.SYNTAX
    assert "cannot parse the ground truth as duckdb SQL" in caught.value.message
    assert "\x1b" not in caught.value.message


def test_more_than_one_statement_is_refused() -> None:
    with pytest.raises(QueryError, match="holds 2 statements"):
        transpile_truth("SELECT 1; SELECT 2", "duckdb", "postgres")


def test_a_comment_after_the_final_semicolon_is_not_a_statement() -> None:
    # Regression: it was transpiled to a second statement '/* ... */', so the ground truth
    # was refused and every answer to the question graded error.
    assert transpile_truth("SELECT 1; -- the count", "duckdb", "postgres") == "SELECT 1"
    assert transpile_truth("SELECT 1;\n/* done */\n", "duckdb", "postgres") == "SELECT 1"


def test_unknown_dialect() -> None:
    with pytest.raises(QueryError, match="unknown SQL dialect 'postgress'"):
        transpile_truth("SELECT 1", "postgress", "duckdb")


def test_truth_dialect_defaults_to_the_warehouse() -> None:
    assert truth_dialect(Settings(), "postgres") == "postgres"
    assert truth_dialect(Settings(dialect="duckdb"), "mysql") == "duckdb"


def test_ground_truths_lists_main_then_alternatives() -> None:
    question = Question.build(
        {"name": "q", "question": "Q?", "sql": "SELECT 1", "also_accept": ["SELECT 1.0"]},
        space="auto",
        path="q.yml",
        line=2,
    )
    assert ground_truths(question) == ["SELECT 1", "SELECT 1.0"]
    bare = Question(name="b", question="B?")
    assert ground_truths(bare) == []
