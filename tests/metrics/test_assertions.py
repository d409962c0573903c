"""Assertions: every operator, both types, JSONPath filters, no match, several matches."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sqlbench.metrics.assertions import check_assertions
from sqlbench.project.files import Assertion

RECORD: dict[str, Any] = {
    "sql": "SELECT region, SUM(amount) FROM revenue GROUP BY 1",
    "answer": "EMEA leads with 1,575,870.",
    "latency_ms": 1250.0,
    "usage": {"input_tokens": 1800, "output_tokens": 96},
    "tool_calls": [
        {"name": "list_tables", "arguments": {}, "output": "revenue, customers"},
        {"name": "run_sql", "arguments": {"sql": "SELECT 1"}, "output": "1 row"},
        {"name": "run_sql", "arguments": {"sql": "SELECT region FROM revenue"}, "output": "4"},
    ],
}


def check(actual: str, operator: str, expected: Any, kind: str = "string") -> Any:
    rule = Assertion(label="x", actual=actual, operator=operator, expected=expected, type=kind)
    return check_assertions([rule], RECORD)[0]


@pytest.mark.parametrize(
    ("operator", "expected", "passed"),
    [
        ("equals", "SELECT region, SUM(amount) FROM revenue GROUP BY 1", True),
        ("equals", "select region, sum(amount) from revenue group by 1", False),  # case matters
        ("contains", "FROM revenue", True),
        ("contains", "from revenue", False),
        ("startswith", "SELECT", True),
        ("startswith", "WITH", False),
        ("endswith", "GROUP BY 1", True),
        ("endswith", "ORDER BY 1", False),
    ],
)
def test_string_operators(operator: str, expected: str, passed: bool) -> None:
    assert check("$.sql", operator, expected).passed is passed


@pytest.mark.parametrize(
    ("operator", "expected", "passed"),
    [
        ("equals", 1250, True),
        ("equals", 1250.5, False),
        ("greater_than", 1000, True),
        ("greater_than", 1250, False),
        ("greater_than_or_equal", 1250, True),
        ("greater_than_or_equal", 1251, False),
        ("less_than", 5000, True),
        ("less_than", 1250, False),
        ("less_than_or_equal", 1250, True),
        ("less_than_or_equal", 1249.9, False),
    ],
)
def test_numeric_operators(operator: str, expected: float, passed: bool) -> None:
    assert check("$.latency_ms", operator, expected, "numeric").passed is passed


def test_failure_reason_quotes_the_actual_value() -> None:
    result = check("$.latency_ms", "less_than", 1000, "numeric")
    assert result.actual == 1250.0
    assert result.reason == "1250 is not less than 1000"
    tokens = check("$.usage.output_tokens", "less_than", 50, "numeric")
    assert tokens.reason == "96 is not less than 50"


def test_filter_expression_selects_tool_calls_by_name() -> None:
    result = check("$.tool_calls[?(@.name=='list_tables')].output", "contains", "revenue")
    assert result.passed and result.actual == "revenue, customers"


def test_several_matches_pass_only_when_every_value_passes() -> None:
    path = "$.tool_calls[?(@.name=='run_sql')].arguments.sql"
    every = check(path, "startswith", "SELECT")
    assert every.passed and every.actual == ["SELECT 1", "SELECT region FROM revenue"]
    one_fails = check(path, "contains", "revenue")
    assert not one_fails.passed
    assert one_fails.reason == "'SELECT 1' does not contain 'revenue' (one of 2 values)"


def test_a_path_that_matches_nothing_fails() -> None:
    result = check("$.tool_calls[?(@.name=='search')].output", "contains", "x")
    assert not result.passed
    assert result.actual is None
    assert "matched nothing" in result.reason


def test_numeric_assertion_on_text_that_is_not_a_number_fails() -> None:
    result = check("$.answer", "greater_than", 1, "numeric")
    assert not result.passed and "is not a number" in result.reason


def test_string_operators_read_numbers_as_json_text() -> None:
    assert check("$.usage.input_tokens", "startswith", "18").passed


def test_invalid_assertions_are_refused_when_loaded() -> None:
    with pytest.raises(ValidationError, match="not a valid JSONPath"):
        Assertion(label="x", actual="$.[?(", operator="equals", expected="a")
    with pytest.raises(ValidationError, match="not a numeric operator"):
        Assertion(label="x", actual="$.sql", operator="contains", expected=1, type="numeric")
    with pytest.raises(ValidationError, match="needs a number"):
        Assertion(label="x", actual="$.sql", operator="equals", expected="a", type="numeric")
