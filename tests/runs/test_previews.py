"""Result previews: capped, JSON-safe, differing rows marked (even far down a long result)."""

from __future__ import annotations

import json
import pickle
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench.engines.base import ResultSet
from sqlbench.records.run import Preview
from sqlbench.runs.previews import PREVIEW_ROWS, json_safe, make_preview


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


def _reference_preview(result: ResultSet, differing: list[int], count: int) -> Preview:
    """make_preview as first written (every pick through sets; every value through
    json_safe): the shortcuts must not change a preview."""
    total, limit = result.num_rows, PREVIEW_ROWS
    marked = sorted({i for i in differing if 0 <= i < total})
    later = [i for i in marked if i >= limit][: limit // 2]
    picks = sorted(set(range(min(total, limit - len(later)))) | set(later))
    table = result.table.take(pa.array(picks, pa.int64()))
    columns = [[json_safe(v) for v in column.to_pylist()] for column in table.columns]
    rows = [list(row) for row in zip(*columns, strict=True)] if columns else [[] for _ in picks]
    return Preview(
        columns=list(result.table.column_names),
        types=[str(field.type) for field in result.table.schema],
        rows=rows,
        row_numbers=picks,
        differs=[i in set(marked) for i in picks],
        total_rows=total,
        differing_rows=max(len(marked), count),
    )


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 60),
    st.lists(st.integers(-2, 70), max_size=30),
    st.integers(0, 40),
)
def test_preview_shortcuts_change_nothing(rows: int, differing: list[int], count: int) -> None:
    table = pa.table(
        {
            "n": pa.array([i if i % 5 else None for i in range(rows)], pa.int64()),
            "f": pa.array([i / 3 if i % 7 else float("nan") for i in range(rows)]),
            "s": pa.array([f"r{i}" for i in range(rows)]),
            "d": pa.array([Decimal(i) / 4 for i in range(rows)], pa.decimal128(10, 2)),
            "b": pa.array([i % 2 == 0 for i in range(rows)]),
        }
    )
    result = ResultSet(table)
    got = make_preview(result, differing, differing_count=count)
    assert got == _reference_preview(result, differing, count)


def _typed(value: object) -> object:
    """``value`` with the type of every part spelled out (``1 == True == 1.0`` would hide one)."""
    if isinstance(value, list):
        return ["list", [_typed(v) for v in value]]
    if isinstance(value, dict):
        return ["dict", {k: _typed(v) for k, v in value.items()}]
    return [type(value).__name__, repr(value)]


def _same_as_validated(made: Preview) -> None:
    validated = Preview(**dict(made.__dict__))
    assert made == validated
    assert _typed(made.__dict__) == _typed(validated.__dict__)
    assert list(made.__dict__) == list(validated.__dict__)
    assert made.model_fields_set == validated.model_fields_set
    assert made.__pydantic_extra__ == validated.__pydantic_extra__
    assert made.__pydantic_private__ == validated.__pydantic_private__
    assert made.model_dump_json() == validated.model_dump_json()
    assert made.model_dump() == validated.model_dump()
    assert pickle.loads(pickle.dumps(made)) == validated
    assert made.model_copy(update={"total_rows": 3}) == validated.model_copy(
        update={"total_rows": 3}
    )


_COLUMNS = {
    "int": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "float": (pa.float64(), st.floats()),
    "text": (pa.string(), st.text(max_size=4)),
    "bool": (pa.bool_(), st.booleans()),
    "decimal": (pa.decimal128(12, 3), st.decimals(-(10**8), 10**8, places=3)),
    "date": (pa.date32(), st.dates()),
    "timestamp": (pa.timestamp("us", tz="UTC"), st.datetimes(timezones=st.just(UTC))),
    "binary": (pa.binary(), st.binary(max_size=4)),
    "list": (pa.list_(pa.int32()), st.lists(st.integers(-5, 5), max_size=2)),
}


@st.composite
def _any_results(draw: st.DrawFn) -> ResultSet:
    rows = draw(st.integers(0, 30))
    kinds = draw(st.lists(st.sampled_from(sorted(_COLUMNS)), max_size=4))
    arrays = []
    for kind in kinds:
        arrow_type, values = _COLUMNS[kind]
        column = draw(st.lists(st.one_of(st.none(), values), min_size=rows, max_size=rows))
        arrays.append(pa.array(column, arrow_type))
    names = [draw(st.sampled_from(["a", "a", "b", "é"])) for _ in kinds]
    if not arrays:
        return ResultSet(pa.table({}))
    return ResultSet(pa.Table.from_arrays(arrays, names=names))


@settings(max_examples=200, deadline=None)
@given(
    _any_results(),
    st.lists(st.integers(-2, 40), max_size=25),
    st.one_of(st.none(), st.integers(0, 50)),
)
def test_a_preview_made_without_validation_is_the_validated_one(
    result: ResultSet, differing: list[int], count: int | None
) -> None:
    """``make_preview`` skips validating values that are already what validation gives: the
    object, its fields set and its JSON are those of ``Preview(**fields)``, for every kind of
    column value."""
    _same_as_validated(make_preview(result, differing, differing_count=count))
    _same_as_validated(make_preview(result, differing, differing_count=count, limit=4))


def test_values_validation_would_convert_are_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cheap path is taken for plain ``int`` marks and count; marks or a count of another
    type (a numpy integer, a bool) go through validation, which turns them into ``int``."""
    result = ResultSet(pa.table({"a": [1, 2, 3]}))

    class Refuse:
        def validate_python(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("validated")

    with monkeypatch.context() as patched:
        patched.setattr(Preview, "__pydantic_validator__", Refuse())
        assert make_preview(result, [1], differing_count=2).differing_rows == 2
        with pytest.raises(AssertionError, match="validated"):
            make_preview(result, [np.int64(1)])
        with pytest.raises(AssertionError, match="validated"):
            make_preview(result, [], differing_count=True)  # type: ignore[arg-type]
    converted = make_preview(result, [np.int64(1)], differing_count=np.int64(2))  # type: ignore[arg-type]
    assert _typed(converted.row_numbers) == _typed([0, 1, 2])
    assert type(converted.differing_rows) is int
