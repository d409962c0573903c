"""Results reach the comparison with their types (docs/verdicts.md): the audit's wrong verdicts,
run as real SQL through each engine and judged by ``sqlbench.compare_results``.

- TIMETZ compares as its UTC time of day (DuckDB and PostgreSQL both lost the offset);
- DuckDB UHUGEINT and BIGNUM are exact integers (2^128-1 read as -1; BIGNUM was opaque bytes);
- PostgreSQL NUMERIC infinity/NaN and dates past Python's range come back as values, not a
  TypeError or a psycopg DataError;
- a SQLite column mixing storage classes keeps each value's type (1 is not '1', 1 is 1.0).
"""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from engine_warehouses import PG_URL, env_url

from sqlbench import compare_results
from sqlbench.engines.base import Engine, ResultSet
from sqlbench.engines.open import open_engine
from sqlbench.project.files import Settings
from sqlbench.verdicts import Verdict

UHUGEINT_MAX = 2**128 - 1


@pytest.fixture
def duck(tmp_path: Path) -> Iterator[Engine]:
    engine = open_engine(Settings(), tmp_path)
    yield engine
    engine.close()


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Engine]:
    engine = open_engine(Settings(warehouse=env_url(PG_URL)), tmp_path)
    yield engine
    engine.close()


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[Engine]:
    path = tmp_path / "mixed.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (v)")
        con.executemany("INSERT INTO t VALUES (?)", [(1,), ("a",), (None,), (b"a",), (2.5,)])
    con.close()
    engine = open_engine(Settings(warehouse=f"sqlite:///{path}"), tmp_path)
    yield engine
    engine.close()


def _truth(engine: Engine, sql: str) -> ResultSet:
    return engine.run_truth(sql, timeout_s=30, max_rows=10_000)


def verdict(engine: Engine, expected_sql: str, actual_sql: str) -> Verdict:
    """The verdict for the agent's SQL against the ground truth, on Arrow and on pandas (both
    must agree)."""
    expected = _truth(engine, expected_sql)
    actual = engine.run_agent(actual_sql, timeout_s=30, max_rows=10_000)
    on_arrow = compare_results(expected.table, actual.table).verdict
    on_pandas = compare_results(expected.to_pandas(), actual.to_pandas()).verdict
    assert on_arrow == on_pandas
    return Verdict(on_arrow)


def _raw(result: ResultSet, position: int) -> list[int | None]:
    """A temporal column's raw Arrow values (days or microseconds), which hold any value."""
    column = result.table.column(position)
    storage = pa.int32() if pa.types.is_date32(column.type) else pa.int64()
    return [v for chunk in column.chunks for v in chunk.view(storage).to_pylist()]


# --- TIMETZ: the UTC time of day --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["duckdb", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_timetz_compares_as_its_utc_time_of_day(kind: str, request: pytest.FixtureRequest) -> None:
    engine: Engine = request.getfixturevalue("duck" if kind == "duckdb" else "pg")
    ten_at_plus2 = "SELECT '10:00:00+02'::timetz AS a"
    assert verdict(engine, ten_at_plus2, "SELECT '10:00:00+00'::timetz AS a") == Verdict.FAIL
    assert verdict(engine, ten_at_plus2, "SELECT '08:00:00+00'::timetz AS a") == Verdict.PASS
    assert verdict(engine, ten_at_plus2, "SELECT '09:00:00+01'::timetz AS b") == Verdict.PASS
    # Across midnight, and a TIMETZ equals the plain TIME of its UTC clock.
    assert verdict(engine, "SELECT '01:00:00+02'::timetz", "SELECT TIME '23:00:00'") == Verdict.PASS
    # Arrays of TIMETZ too; names and positions (duplicates included) are kept.
    result = _truth(
        engine, "SELECT '10:00:00+02'::timetz AS a, 1 AS a, ARRAY['01:30:00-01'::timetz]"
    )
    assert result.table.column_names[:2] == ["a", "a"]
    assert result.table.column(0).to_pylist() == [dt.time(8, 0)]
    assert result.table.column(2).to_pylist() == [[dt.time(2, 30)]]


def test_duckdb_timetz_matches_duckdbs_own_utc_conversion(duck: Engine) -> None:
    rng = random.Random(7)
    literals = [
        f"'{rng.randrange(24):02}:{rng.randrange(60):02}:{rng.randrange(60):02}"
        f".{rng.randrange(10**6):06}{rng.choice('+-')}{rng.randrange(16):02}:{rng.randrange(60):02}'"
        for _ in range(300)
    ]
    values = ", ".join(f"({v}::timetz)" for v in literals)
    result = _truth(duck, f"SELECT t, timezone('UTC', t)::time AS u FROM (VALUES {values}) v(t)")
    assert result.table.column(0).to_pylist() == result.table.column(1).to_pylist()
    assert result.table.column(0).type == pa.time64("us")


# --- DuckDB's wide integers: exact ------------------------------------------------------------


def test_uhugeint_is_its_unsigned_value(duck: Engine) -> None:
    top = f"SELECT {UHUGEINT_MAX}::uhugeint AS a"
    assert verdict(duck, top, "SELECT -1 AS a") == Verdict.FAIL
    assert verdict(duck, top, f"SELECT {UHUGEINT_MAX - 1}::uhugeint AS a") == Verdict.FAIL
    assert verdict(duck, top, f"SELECT {UHUGEINT_MAX}::bignum AS a") == Verdict.PASS
    assert verdict(duck, "SELECT 5::uhugeint", "SELECT 5") == Verdict.PASS
    result = _truth(duck, f"SELECT x FROM (VALUES (1::uhugeint), ({UHUGEINT_MAX}), (NULL)) v(x)")
    assert result.table.column(0).to_pylist() == [1, UHUGEINT_MAX, None]


def test_hugeint_extremes_and_nested_wide_integers_are_exact(duck: Engine) -> None:
    low = -(2**127)
    result = _truth(
        duck,
        f"SELECT ({low + 1}::hugeint - 1) AS h, [1::hugeint, NULL, -2] AS l, "
        f"{{'u': {UHUGEINT_MAX}::uhugeint}} AS s, sum(x) AS total FROM range(3) r(x)",
    )
    assert result.table.to_pylist() == [
        {"h": low, "l": [1, None, -2], "s": {"u": UHUGEINT_MAX}, "total": 3}
    ]
    assert verdict(duck, f"SELECT {low + 1}::hugeint - 1", f"SELECT {low}::bignum") == Verdict.PASS
    assert verdict(duck, "SELECT sum(x) FROM range(4) r(x)", "SELECT 6") == Verdict.PASS


def test_bignum_is_an_exact_integer(duck: Engine) -> None:
    assert verdict(duck, "SELECT 5::bignum AS a", "SELECT 5 AS a") == Verdict.PASS
    assert verdict(duck, "SELECT -5::bignum AS a", "SELECT 5 AS a") == Verdict.FAIL
    huge = 10**90 + 1
    assert verdict(duck, f"SELECT '{huge}'::bignum", f"SELECT '{huge}'::bignum") == Verdict.PASS
    assert verdict(duck, f"SELECT '{huge}'::bignum", f"SELECT '{huge + 1}'::bignum") == (
        Verdict.FAIL
    )
    rng = random.Random(11)
    numbers = [0, 1, -1, 255, -256, 2**64, -(2**64), 10**80]
    numbers += [rng.getrandbits(rng.randrange(1, 600)) * rng.choice((1, -1)) for _ in range(200)]
    values = ", ".join(f"('{n}'::bignum)" for n in numbers)
    result = _truth(duck, f"SELECT b FROM (VALUES {values}) v(b)")
    assert [int(v) for v in result.table.column(0).to_pylist()] == numbers


# --- dates and timestamps past Python's range: values, not errors -----------------------------


def test_duckdb_returns_dates_past_pythons_range(duck: Engine) -> None:
    result = duck.run_agent(
        "SELECT DATE '12024-01-01' AS d, 'infinity'::date AS i, '-infinity'::date AS n, "
        "'infinity'::timestamp AS t, '-infinity'::timestamptz AS z, DATE '2024-01-01' AS ok",
        timeout_s=30,
        max_rows=10,
    )
    assert _raw(result, 0) == [3672148]
    assert _raw(result, 1) == [2**31 - 1] and _raw(result, 2) == [-(2**31 - 1)]
    assert _raw(result, 3) == [2**63 - 1] and _raw(result, 4) == [-(2**63 - 1)]
    frame = result.to_pandas()
    assert frame.iloc[0, 5] == dt.date(2024, 1, 1)
    assert frame.iloc[0, 0].year == 12024


def test_sqlite_returns_dates_past_pythons_range_as_written(lite: Engine) -> None:
    result = lite.run_agent(
        "SELECT '12024-01-01' AS d, date('12024-01-01') AS n, 'infinity' AS i",
        timeout_s=30,
        max_rows=10,
    )
    assert result.table.to_pylist() == [{"d": "12024-01-01", "n": None, "i": "infinity"}]


# --- SQLite: a column mixing storage classes keeps each value's type ---------------------------


def test_sqlite_mixed_columns_compare_value_by_value(lite: Engine) -> None:
    one_and_a = "SELECT 1 AS v UNION ALL SELECT 'a'"
    assert verdict(lite, one_and_a, "SELECT '1' AS v UNION ALL SELECT 'a'") == Verdict.FAIL
    assert verdict(lite, one_and_a, "SELECT 1.0 AS v UNION ALL SELECT 'a'") == Verdict.PASS
    assert verdict(lite, one_and_a, "SELECT 'a' AS v UNION ALL SELECT 1") == Verdict.PASS
    # Bytes are not text, and NULLs still match NULLs.
    assert verdict(lite, "SELECT v FROM t", "SELECT v FROM t ORDER BY rowid DESC") == Verdict.PASS
    assert (
        verdict(
            lite,
            "SELECT x'61' AS v UNION ALL SELECT 1",
            "SELECT 'a' AS v UNION ALL SELECT 1",
        )
        == Verdict.FAIL
    )
    result = _truth(lite, "SELECT v FROM t")
    assert result.table.column(0).to_pylist() == [1, "a", None, b"a", 2.5]
    assert list(result.to_pandas()["v"]) == [1, "a", None, b"a", 2.5]


# --- PostgreSQL: NUMERIC infinity and NaN, dates and times Python cannot hold ------------------


@pytest.mark.postgres
def test_postgres_numeric_infinity_and_nan_are_values(pg: Engine) -> None:
    for sql in (
        "SELECT 'infinity'::numeric AS a",
        "SELECT '-infinity'::numeric AS a",
        "SELECT 'NaN'::numeric AS a",
    ):
        pg.run_agent(sql, timeout_s=30, max_rows=10)
        pg.run_truth(sql, timeout_s=30, max_rows=10)
    infinity = "SELECT 'infinity'::numeric AS a"
    assert verdict(pg, infinity, "SELECT 'infinity'::float8 AS a") == Verdict.PASS
    assert verdict(pg, infinity, "SELECT 1e308::float8 AS a") == Verdict.FAIL
    assert verdict(pg, infinity, "SELECT '-infinity'::numeric AS a") == Verdict.FAIL
    assert verdict(pg, "SELECT 'NaN'::numeric AS a", "SELECT NULL::int AS a") == Verdict.PASS
    # NaN is NULL; the other values of the column stay exact decimals.
    result = _truth(pg, "SELECT x FROM (VALUES (1.50::numeric), ('NaN')) v(x)")
    assert result.table.column(0).to_pylist() == [Decimal("1.50"), None]
    assert pa.types.is_decimal(result.table.column(0).type)


@pytest.mark.postgres
def test_postgres_returns_dates_and_times_past_pythons_range(pg: Engine) -> None:
    result = pg.run_agent(
        "SELECT 'infinity'::timestamp AS t, '-infinity'::date AS d, "
        "'infinity'::timestamptz AS z, '24:00:00'::time AS midnight, "
        "'24:00:00+02'::timetz AS tz, DATE '2024-01-01' AS ok",
        timeout_s=30,
        max_rows=10,
    )
    assert _raw(result, 0) == [2**63 - 1]
    assert _raw(result, 1) == [-(2**31 - 1)]
    assert _raw(result, 2) == [2**63 - 1]
    assert _raw(result, 3) == [86_400_000_000]
    assert result.table.column(4).to_pylist() == [dt.time(22, 0)]
    assert result.table.column(5).to_pylist() == [dt.date(2024, 1, 1)]
    result.to_pandas()


@pytest.mark.postgres
def test_postgres_far_dates_and_timestamps_count_days_as_postgres_does(pg: Engine) -> None:
    dates = ["2024-02-29", "12024-01-01", "0044-03-15 BC", "0001-01-01 BC", "5874897-12-31"]
    values = ", ".join(f"('{d}'::date)" for d in dates)
    result = _truth(pg, f"SELECT d, d - DATE '1970-01-01' AS n FROM (VALUES {values}) v(d)")
    assert _raw(result, 0) == result.table.column(1).to_pylist()
    stamps = ["2024-01-01 10:00:00", "12024-06-01 10:30:00.25+05:30", "0044-03-15 12:00:00+00 BC"]
    values = ", ".join(f"('{s}'::timestamptz)" for s in stamps)
    result = _truth(
        pg,
        f"SELECT z, (extract(epoch FROM z) * 1000000)::int8 AS us FROM (VALUES {values}) v(z)",
    )
    assert _raw(result, 0) == result.table.column(1).to_pylist()
