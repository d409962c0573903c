"""Ground-truth warnings: relative dates in questions and SQL, SQL sqlglot cannot parse."""

from __future__ import annotations

import doctest
import importlib

import pytest

from sqlbench.project.rules import parse_problem, sql_drift, text_drift


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("What was revenue over the last two years?", "last two years"),
        ("Revenue last year in Europe", "last year"),
        ("Orders in the past 12 months", "past 12 months"),
        ("How many signups this quarter?", "this quarter"),
        ("ARR for the current fiscal year", "current fiscal year"),
        ("Orders placed yesterday", "yesterday"),
        ("Revenue YTD by region", "YTD"),
        ("Customers who churned 3 months ago", "3 months ago"),
        ("trailing twelve months revenue", "trailing twelve months"),
    ],
)
def test_relative_phrases_are_found(text: str, phrase: str) -> None:
    assert text_drift(text) == phrase


@pytest.mark.parametrize(
    "text",
    [
        "What was revenue in 2023 compared with the prior year?",
        "Who placed the last order in 2024?",
        "Revenue in the last quarter of 2022",
        "How many days between signup and first order, on average, in 2024?",
        "Which customers were active on 2024-12-31?",
    ],
)
def test_absolute_questions_are_not_flagged(text: str) -> None:
    assert text_drift(text) is None


@pytest.mark.parametrize(
    ("sql", "found"),
    [
        ("SELECT * FROM t WHERE d >= CURRENT_DATE - INTERVAL 30 DAY", "CURRENT_DATE"),
        ("SELECT * FROM t WHERE ts > now() - INTERVAL '1 day'", "now()"),
        ("SELECT current_timestamp", "CURRENT_TIMESTAMP"),
        ("SELECT * FROM t WHERE d = DATE 'today'", "'today'"),
        ("SELECT GETDATE()", "GETDATE()"),
        ("SELECT unix_timestamp()", "UNIX_TIMESTAMP()"),
    ],
)
def test_sql_relative_to_now_is_found(sql: str, found: str) -> None:
    assert sql_drift(sql, "duckdb") == found


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 'current_date' AS label",
        'SELECT "now" FROM t',
        "SELECT now_value FROM t",
        "SELECT unix_timestamp(created_at) FROM t",
        "-- CURRENT_DATE would drift\nSELECT DATE '2024-01-01'",
    ],
)
def test_sql_mentions_in_strings_names_and_comments_do_not_count(sql: str) -> None:
    assert sql_drift(sql, "duckdb") is None


def test_parse_problems() -> None:
    assert parse_problem("SELECT a FROM t ORDER BY 1", "duckdb") is None
    assert parse_problem("SELECT x::int FROM t", "postgres") is None
    problem = parse_problem("SELECT (a FROM t", "duckdb")
    assert problem is not None and "line 1" in problem
    assert parse_problem("", "duckdb") == "it holds 0 statements, not one query"
    # Regression: a comment after the final semicolon was a second statement (a warning).
    assert parse_problem("SELECT 1; -- the count", "duckdb") is None
    assert parse_problem("SELECT 1; SELECT 2", "duckdb") == "it holds 2 statements, not one query"


MODULES = ["envvars", "dialect", "yamlload", "problems", "rules", "select", "validate"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(f"sqlbench.project.{name}")
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
