"""Result previews: capped, JSON-safe, differing rows marked (even far down a long result)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

import pyarrow as pa

from sqlbench.engines.base import ResultSet
from sqlbench.runs.previews import json_safe, make_preview


def test_small_results_are_kept_whole() -> None:
    result = ResultSet(pa.table({"a": [1, 2, 3]}))
    preview = make_preview(result, [1])
    assert preview.rows == [[1], [2], [3]] and preview.row_numbers == [0, 1, 2]
    assert preview.differs == [False, True, False] and not preview.truncated
    assert preview.columns == ["a"] and preview.types == ["int64"]


def test_long_results_keep_the_head_and_later_differences() -> None:
    result = ResultSet(pa.table({"n": list(range(1000))}))
    preview = make_preview(result, [3, 500, 998], differing_count=7)
    assert len(preview.rows) == 20 and preview.truncated and preview.total_rows == 1000
    assert preview.row_numbers[:18] == list(range(18))
    assert preview.row_numbers[18:] == [500, 998]
    assert [n for n, d in zip(preview.row_numbers, preview.differs, strict=True) if d] == [
        3,
        500,
        998,
    ]
    assert preview.differing_rows == 7


def test_duplicate_column_names_and_types_survive() -> None:
    table = pa.Table.from_arrays(
        [
            pa.array(["a"]),
            pa.array(["b"]),
            pa.array([Decimal("1.50")], pa.decimal128(5, 2)),
            pa.array([date(2024, 1, 31)]),
            pa.array([None], pa.int64()),
        ],
        names=["name", "name", "amount", "day", "missing"],
    )
    preview = make_preview(ResultSet(table))
    assert preview.columns == ["name", "name", "amount", "day", "missing"]
    assert preview.rows == [["a", "b", "1.50", "2024-01-31", None]]
    json.dumps(preview.model_dump(mode="json"))


def test_empty_result() -> None:
    preview = make_preview(ResultSet(pa.table({"a": pa.array([], pa.int64())})))
    assert preview.rows == [] and preview.total_rows == 0 and preview.columns == ["a"]


def test_json_safe_values() -> None:
    moment = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    values = [
        Decimal("0.10"),
        float("nan"),
        float("inf"),
        float("-inf"),
        moment,
        time(8, 15),
        timedelta(days=1, hours=2),
        b"\x00\xff",
        {"k": [Decimal(1)]},
        (1, 2),
        2.5,
        True,
    ]
    assert json_safe(values) == [
        "0.10",
        "NaN",
        "Infinity",
        "-Infinity",
        "2024-05-01T12:30:00+00:00",
        "08:15:00",
        "1 day, 2:00:00",
        "base64:AP8=",
        {"k": ["1"]},
        [1, 2],
        2.5,
        True,
    ]
    json.dumps(json_safe(values), allow_nan=False)


def test_dates_past_pythons_range_are_shown_not_raised() -> None:
    # DuckDB's 'infinity'::date and year-12024 dates reach previews as date32 values that
    # datetime.date cannot hold; a preview shows them as text instead of crashing the run.
    days = pa.array([3_650_000, 2_147_483_647, None], pa.date32())
    preview = make_preview(ResultSet(pa.table({"d": days, "n": [1, 2, 3]})))
    assert preview.rows[0] == ["11963-05-13", 1]
    assert isinstance(preview.rows[1][0], str) and preview.rows[1][1] == 2
    assert preview.rows[2] == [None, 3]
