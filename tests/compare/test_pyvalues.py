"""Arrow values as Python objects: never raising, exact, and read back faithfully as text."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from sqlbench.compare.pyvalues import INT32_MAX, INT64_MAX, py_values
from sqlbench.compare.values import ExactValue, display, iso_date, tagged_key


def test_iso_date_agrees_with_python_over_its_whole_range() -> None:
    epoch = dt.date(1970, 1, 1)
    lowest, highest = (dt.date.min - epoch).days, (dt.date.max - epoch).days
    for days in [*range(lowest, highest + 1, 997), lowest, highest, 0, -1, 59, 60]:
        assert iso_date(days) == (epoch + dt.timedelta(days=days)).isoformat()


def test_dates_past_python_become_text_with_exact_keys() -> None:
    values = py_values(pa.array([0, 3_672_148, INT32_MAX, -INT32_MAX, None], pa.date32()))
    assert values[0] == dt.date(1970, 1, 1)
    assert [str(v) for v in values[1:4]] == ["12024-01-01", "infinity", "-infinity"]
    assert values[4] is None
    infinite_stamp = py_values(pa.array([INT64_MAX], pa.timestamp("us")))[0]
    assert tagged_key(values[2]) == tagged_key(infinite_stamp)  # DATE = TIMESTAMP infinity
    midnight = py_values(pa.array([3_672_148 * 86_400], pa.timestamp("s")))[0]
    assert tagged_key(values[1]) == tagged_key(midnight)
    assert tagged_key(values[1]) != tagged_key("12024-01-01")


def test_chunked_and_nested_values() -> None:
    chunked = pa.chunked_array([pa.array([1], pa.date32()), pa.array([INT32_MAX], pa.date32())])
    assert [display(v) for v in py_values(chunked)] == ["1970-01-02", "infinity"]
    nested = pa.array(
        [[{"d": 3_672_148, "n": 1}], None], pa.list_(pa.struct({"d": pa.date32(), "n": pa.int8()}))
    )
    values = py_values(nested)
    assert display(values[0]) == "[{d: 12024-01-01, n: 1}]"
    assert values[1] is None
    mapped = pa.array([[(1, INT64_MAX)]], pa.map_(pa.int8(), pa.timestamp("us")))
    assert display(py_values(mapped)[0]) == "[(1, infinity)]"
    encoded = pa.array([INT32_MAX, 0], pa.date32()).dictionary_encode()
    assert [display(v) for v in py_values(encoded)] == ["infinity", "1970-01-01"]


@pytest.mark.parametrize(
    ("array", "text"),
    [
        (pa.array([36_000_123_456_789], pa.time64("ns")), "10:00:00.123456789"),
        (pa.array([2**62], pa.duration("s")), "4611686018427387904 seconds"),
        (pa.array([253_402_300_800], pa.timestamp("s", "UTC")), "10000-01-01T00:00:00+00:00"),
        (pa.array([-62_135_596_801_000_000], pa.timestamp("us")), "0000-12-31T23:59:59"),
    ],
)
def test_values_python_cannot_hold_exactly(array: pa.Array, text: str) -> None:
    value = py_values(array)[0]
    assert isinstance(value, ExactValue)
    assert display(value) == text


def test_ordinary_values_are_python_objects() -> None:
    assert py_values(pa.array([36_000_123_456_000], pa.time64("ns"))) == [dt.time(10, 0, 0, 123456)]
    assert py_values(pa.array([1, None], pa.int64())) == [1, None]
