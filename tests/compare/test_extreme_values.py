"""Values at the edges of Python's and float64's range, straight from DuckDB.

Dates and timestamps Python cannot hold (year 12024, infinity) must never crash a comparison
and are shown as text; integers past int64 compare by value with plain-number text; numbers
past float64's precision compare exactly; reasons show nanoseconds and never an x100 near miss
made of an infinity or an overflow. Every comparison here runs with warnings as errors, so a
numpy overflow warning leaking to stderr fails the test.
"""

from __future__ import annotations

import warnings

import duckdb
import pyarrow as pa
import pytest

from sqlbench.compare import Comparison, NearMissKind, compare_results
from sqlbench.verdicts import Verdict


def _duckdb(sql: str) -> pa.Table:
    con = duckdb.connect()
    try:
        return con.sql(f"SELECT {sql} AS a").to_arrow_table()
    finally:
        con.close()


def _compare(expected: str, actual: str, **options: float) -> Comparison:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return compare_results(_duckdb(expected), _duckdb(actual), **options)


@pytest.mark.parametrize(
    ("expected", "actual", "verdict", "shown"),
    [
        ("DATE '2024-01-01'", "DATE '12024-01-01'", Verdict.FAIL, "got 12024-01-01"),
        ("DATE '2024-01-01'", "'infinity'::DATE", Verdict.FAIL, "got infinity"),
        ("'infinity'::DATE", "DATE '2024-01-01'", Verdict.FAIL, "expected infinity"),
        ("'-infinity'::DATE", "'infinity'::DATE", Verdict.FAIL, "expected -infinity"),
        ("'infinity'::DATE", "'infinity'::DATE", Verdict.PASS, None),
        ("'infinity'::DATE", "'infinity'::TIMESTAMP", Verdict.PASS, None),
        ("'-infinity'::DATE", "'-infinity'::TIMESTAMPTZ", Verdict.PASS, None),
        ("'infinity'::TIMESTAMP", "'infinity'::TIMESTAMP_NS", Verdict.PASS, None),
        ("'infinity'::TIMESTAMP_S", "'infinity'::TIMESTAMP_MS", Verdict.PASS, None),
        ("'infinity'::TIMESTAMP", "TIMESTAMP '2024-01-01'", Verdict.FAIL, "expected infinity"),
        ("DATE '12024-01-01'", "TIMESTAMP '12024-01-01'", Verdict.PASS, None),
        ("DATE '12024-01-01'", "DATE '12024-01-02'", Verdict.FAIL, "got 12024-01-02"),
        (
            "TIMESTAMP '12024-01-01 10:00:00'",
            "TIMESTAMP '2024-01-01 10:00:00'",
            Verdict.FAIL,
            "expected 12024-01-01T10:00:00",
        ),
        # Past int64 microseconds (year 294,247): compared exactly, per value.
        ("DATE '1000000-01-01'", "DATE '1000000-01-01'", Verdict.PASS, None),
        ("DATE '1000000-01-01'", "DATE '1000001-01-01'", Verdict.FAIL, "expected 1000000-01-01"),
        ("DATE '1000000-01-01'", "TIMESTAMP '2024-01-01'", Verdict.FAIL, "expected 1000000-01-01"),
        # Inside LIST and STRUCT values.
        ("[DATE '12024-01-01']", "[DATE '12024-01-01']", Verdict.PASS, None),
        ("[DATE '12024-01-01']", "[DATE '12024-01-02']", Verdict.FAIL, "expected [12024-01-01]"),
        ("{'x': 'infinity'::DATE}", "{'x': 'infinity'::DATE}", Verdict.PASS, None),
        (
            "{'x': 'infinity'::DATE}",
            "{'x': DATE '2024-01-01'}",
            Verdict.FAIL,
            "expected {x: infinity}",
        ),
    ],
)
def test_dates_python_cannot_hold(
    expected: str, actual: str, verdict: Verdict, shown: str | None
) -> None:
    result = _compare(expected, actual)
    assert result.verdict is verdict, result.reason
    if shown is not None:
        assert shown in result.reason


def test_out_of_range_dates_among_ordinary_rows() -> None:
    expected = "UNNEST([DATE '2024-01-01', 'infinity'::DATE, NULL, DATE '12024-01-01'])"
    actual = "UNNEST([NULL, DATE '12024-01-01', DATE '2024-01-01', 'infinity'::DATE])"
    assert _compare(expected, actual).passed
    wrong = "UNNEST([NULL, DATE '12024-01-01', DATE '2024-01-01', '-infinity'::DATE])"
    result = _compare(expected, wrong)
    assert result.verdict is Verdict.FAIL
    assert "expected (infinity), got (-infinity)" in result.reason


@pytest.mark.parametrize(
    ("expected", "actual", "verdict"),
    [
        ("18446744073709551615::UBIGINT", "'18446744073709551615'", Verdict.PASS),
        ("18446744073709551615::UBIGINT", "'18446744073709551616'", Verdict.FAIL),
        ("99999999999999999999::HUGEINT", "'99999999999999999999'", Verdict.PASS),
        ("99999999999999999999::HUGEINT", "'99999999999999999998'", Verdict.FAIL),
        ("-99999999999999999999::HUGEINT", "'-99999999999999999999'", Verdict.PASS),
        ("18446744073709551615::UBIGINT", "18446744073709551615::HUGEINT", Verdict.PASS),
    ],
)
def test_integers_past_int64_against_plain_number_text(
    expected: str, actual: str, verdict: Verdict
) -> None:
    result = _compare(expected, actual)
    assert result.verdict is verdict, result.reason


@pytest.mark.parametrize(
    ("expected", "actual", "tolerance", "verdict"),
    [
        ("9007199254740993::BIGINT", "9007199254740992::DOUBLE", 0.0, Verdict.FAIL),
        ("9007199254740993::BIGINT", "9007199254740992::DOUBLE", 1e-9, Verdict.PASS),
        ("9007199254740992::BIGINT", "9007199254740992::DOUBLE", 0.0, Verdict.PASS),
        ("18446744073709551615::UBIGINT", "18446744073709551616::DOUBLE", 0.0, Verdict.FAIL),
        ("18446744073709551616::HUGEINT", "18446744073709551616::DOUBLE", 0.0, Verdict.PASS),
        (
            "123456789012345678901234567.5::DECIMAL(38,1)",
            "123456789012345678901234568.5::DECIMAL(38,1)",
            0.0,
            Verdict.FAIL,
        ),
        (
            "123456789012345678901234567.5::DECIMAL(38,1)",
            "123456789012345678901234567.50::DECIMAL(38,2)",
            0.0,
            Verdict.PASS,
        ),
        (
            "123456789012345678901234567.5::DECIMAL(38,1)",
            "123456789012345678901234568.5::DECIMAL(38,1)",
            1e-9,
            Verdict.PASS,
        ),
        (
            "1234567890123456.5::DECIMAL(18,1)",
            "1234567890123457.5::DECIMAL(18,1)",
            0.0,
            Verdict.FAIL,
        ),
        ("0.1::DECIMAL(4,1)", "0.1::DOUBLE", 0.0, Verdict.PASS),
    ],
)
def test_exact_numbers_past_float64_precision(
    expected: str, actual: str, tolerance: float, verdict: Verdict
) -> None:
    result = _compare(expected, actual, rel_tol=tolerance, abs_tol=tolerance)
    assert result.verdict is verdict, result.reason


def test_time_ns_reason_shows_nanoseconds() -> None:
    result = _compare("'10:00:00.123456789'::TIME_NS", "'10:00:00.123456788'::TIME_NS")
    assert result.verdict is Verdict.FAIL
    assert "expected 10:00:00.123456789, got 10:00:00.123456788" in result.reason
    nested = _compare("['10:00:00.123456789'::TIME_NS]", "['10:00:00.123456788'::TIME_NS]")
    assert nested.verdict is Verdict.FAIL  # inside a LIST: exact, nanoseconds included
    assert "expected [10:00:00.123456789]" in nested.reason


def test_timestamp_ns_against_microseconds() -> None:
    assert not _compare(
        "TIMESTAMP_NS '2024-01-01 00:00:00.123456789'", "TIMESTAMP '2024-01-01 00:00:00.123456'"
    ).passed
    assert _compare(
        "TIMESTAMP_NS '2024-01-01 00:00:00.123456'", "TIMESTAMP '2024-01-01 00:00:00.123456'"
    ).passed


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("'inf'::DOUBLE", "1e308::DOUBLE"),
        ("1e308::DOUBLE", "'inf'::DOUBLE"),
        ("UNNEST(['inf'::DOUBLE, 50])", "UNNEST(['inf'::DOUBLE, 0.5])"),
        ("'-inf'::DOUBLE", "-1e308::DOUBLE"),
    ],
)
def test_no_scaled_near_miss_from_infinity_or_overflow(expected: str, actual: str) -> None:
    result = _compare(expected, actual)
    assert result.verdict is Verdict.FAIL
    assert result.details.near_miss(NearMissKind.SCALED) is None, result.reason
    assert "100" not in result.reason


def test_scaled_near_miss_still_found_for_finite_values() -> None:
    result = _compare("UNNEST([50.0::DOUBLE, 12.5])", "UNNEST([0.125::DOUBLE, 0.5])")
    assert result.details.near_miss(NearMissKind.SCALED) is not None, result.reason


@pytest.mark.parametrize(
    ("expected", "actual", "verdict"),
    [
        ("[1]", "[1.0::DOUBLE]", Verdict.PASS),  # numbers by value across types
        ("['1']", "[1]", Verdict.FAIL),  # text stays text
        ("[0.1::DOUBLE + 0.2]", "[0.3::DOUBLE]", Verdict.FAIL),  # no tolerance inside
        ("{'a': 1.5::DECIMAL(4,2)}", "{'a': 1.5::DOUBLE}", Verdict.PASS),
        ("[0.1::DECIMAL(3,1)]", "[0.1::DOUBLE]", Verdict.PASS),
        (
            "[123456789012345678901234567.5::DECIMAL(38,1)]",
            "[123456789012345678901234568.5::DECIMAL(38,1)]",
            Verdict.FAIL,
        ),
        (
            "[123456789012345678901234567.5::DECIMAL(38,1)]",
            "[123456789012345678901234567.50::DECIMAL(38,2)]",
            Verdict.PASS,
        ),
        ("[9007199254740993::BIGINT]", "[9007199254740992::DOUBLE]", Verdict.FAIL),
    ],
)
def test_nested_values_compare_exactly(expected: str, actual: str, verdict: Verdict) -> None:
    result = _compare(expected, actual)
    assert result.verdict is verdict, result.reason


@pytest.mark.parametrize(
    ("expected", "actual", "verdict"),
    [
        ("repeat('1', 5000)", "repeat('1', 5000)", Verdict.PASS),
        ("repeat('1', 5000)", "repeat('1', 4999) || '2'", Verdict.FAIL),
        ("repeat('1', 5000)", "12", Verdict.FAIL),
    ],
)
def test_plain_number_text_past_pythons_digit_limit(
    expected: str, actual: str, verdict: Verdict
) -> None:
    """A text column of one plain number longer than Python converts (4,300 digits) is graded
    as the text it is: a verdict, not an error from the comparison."""
    result = _compare(expected, actual)
    assert result.verdict is verdict, result.reason
