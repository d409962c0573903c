"""Typing result columns: kinds and views, from Arrow and from pandas."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from sqlbench.compare.columns import Kind
from sqlbench.compare.normalize import normalize

D = decimal.Decimal


def _one(values: list[object], typ: pa.DataType | None = None) -> object:
    return normalize(pa.table({"c": pa.array(values, type=typ)}))[0]


@pytest.mark.parametrize(
    ("typ", "values", "kind", "ints", "floats"),
    [
        (pa.decimal128(12, 2), [D("1.10"), D("-2.50"), None], Kind.FLOAT, None, [1.1, -2.5, 0]),
        (pa.decimal128(12, 2), [D("7.00"), D("-3.00"), None], Kind.INT, [7, -3, 0], None),
        (
            pa.decimal128(38, 4),
            [D("0.0001"), D("-123456789.5")],
            Kind.FLOAT,
            None,
            [0.0001, -123456789.5],
        ),
        (pa.decimal256(50, 1), [D("-5.0"), D("6.0")], Kind.INT, [-5, 6], None),
        (pa.decimal128(38, 0), [D(10**30), D(-1)], Kind.INT, [10**30, -1], None),
    ],
)
def test_decimals(
    typ: pa.DataType,
    values: list[object],
    kind: Kind,
    ints: list[int] | None,
    floats: list[float] | None,
) -> None:
    col = _one(values, typ)
    assert col.kind is kind  # type: ignore[attr-defined]
    if ints is not None:
        assert list(col.ints) == ints  # type: ignore[attr-defined]
    if floats is not None:
        assert list(col.floats) == floats  # type: ignore[attr-defined]


def test_sliced_decimal_array_reads_the_right_values() -> None:
    arr = pa.array([D("1.50"), D("-2.25"), D("3.75"), None], type=pa.decimal128(10, 2))
    col = normalize(pa.table({"c": arr.slice(1, 3)}))[0]
    assert list(col.floats) == [-2.25, 3.75, 0.0]
    assert list(col.null) == [False, False, True]


@pytest.mark.parametrize(
    ("values", "kind", "numeric", "instants"),
    [
        (["1", "-2", None], Kind.TEXT, True, False),
        (["1.5", "20"], Kind.TEXT, True, False),
        (["007", "1"], Kind.TEXT, False, False),
        (["1e3"], Kind.TEXT, False, False),
        (
            ["2024-01-01", "2024-01-02 10:00:00", "2024-01-03T10:00:00.5+02:00"],
            Kind.TEXT,
            False,
            True,
        ),
        (["2024-13-01"], Kind.TEXT, False, False),
        ([None, None], Kind.NULL, False, False),
    ],
)
def test_text_views(values: list[object], kind: Kind, numeric: bool, instants: bool) -> None:
    col = _one(values, pa.string())
    assert col.kind is kind  # type: ignore[attr-defined]
    assert col.numeric is numeric  # type: ignore[attr-defined]
    assert (col.instants is not None) is instants  # type: ignore[attr-defined]


def test_iso_text_instants_in_utc_or_as_written() -> None:
    col = _one(["2024-01-01T10:00:00+05:00", "2024-01-01 05:00:00"], pa.string())
    us = col.instants.us  # type: ignore[attr-defined]
    assert us[0] == us[1]


def test_nan_is_null_and_negative_zero_is_zero() -> None:
    col = normalize(pd.DataFrame({"v": [float("nan"), -0.0, 1.5]}))[0]
    assert list(col.null) == [True, False, False]
    assert not np.signbit(col.floats).any()


def test_float32_compares_as_written() -> None:
    col = _one([0.1, 2.675], pa.float32())
    assert list(col.floats) == [0.1, 2.675]  # type: ignore[attr-defined]


def test_pandas_object_columns() -> None:
    frame = pd.DataFrame(
        {
            "dec": pd.Series([D("1.5"), None], dtype=object),
            "day": pd.Series([dt.date(2024, 1, 1), None], dtype=object),
            "mixed_days": pd.Series(
                [dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 5)], dtype=object
            ),
            "mixed": pd.Series([1, "a"], dtype=object),
            "big": pd.Series([2**70, 1], dtype=object),
            "empty": pd.Series([None, float("nan")], dtype=object),
        }
    )
    kinds = [c.kind for c in normalize(frame)]
    assert kinds == [Kind.FLOAT, Kind.INSTANT, Kind.INSTANT, Kind.MIXED, Kind.INT, Kind.NULL]
    mixed_days = normalize(frame)[2]
    assert mixed_days.instants.us[1] - mixed_days.instants.us[0] == 5 * 3600 * 10**6


def test_duplicate_names_by_position() -> None:
    frame = pd.DataFrame([[1, "a"]], columns=["x", "x"])
    cols = normalize(frame)
    assert [(c.position, c.name, c.kind) for c in cols] == [(0, "x", Kind.INT), (1, "x", Kind.TEXT)]


def test_decimal_infinity_in_object_column() -> None:
    frame = pd.DataFrame({"v": pd.Series([D("Infinity"), D("1")], dtype=object)})
    col = normalize(frame)[0]
    assert col.kind is Kind.FLOAT
    assert list(col.floats) == [float("inf"), 1.0]
