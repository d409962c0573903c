"""``result_fingerprint`` turns a result into Python values a batch at a time (issue 17): the
same fingerprints as turning whole columns at once, with a fraction of the memory."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import date
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sqlbench.runs.previews as previews
from sqlbench.engines.arrow_values import display_values
from sqlbench.engines.base import ResultSet
from sqlbench.engines.dbapi_arrow import rows_to_table


def _whole_columns(table: pa.Table) -> str:
    """The fingerprint as it was computed before batching (every column converted at once)."""
    canonical = previews._canonical
    columns = [[canonical(v) for v in display_values(column)] for column in table.columns]
    rows = sorted(
        json.dumps(list(row), separators=(",", ":"), ensure_ascii=False)
        for row in zip(*columns, strict=True)
    )
    digest = hashlib.sha256(f"{table.num_columns}:{table.num_rows}\n".encode())
    for row in rows:
        digest.update(row.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()[:16]


_TABLES = [
    pa.table({"n": [3, 1, 2, None, 1, 7, 8, 9, 10, 11], "s": list("béa\U0001f600zyxwvA")}),
    pa.table({"d": pa.array([Decimal("6.00"), Decimal("1.5"), None], pa.decimal128(5, 2))}),
    pa.table({"f": [6.0, float("nan"), -0.0, 1e300], "t": ["é", "e\u0301", "", None]}),
    pa.table(  # one date past Python's year 9999 in the last batch: the column as text
        {
            "d": pa.array([0, 1, 2, 3, 4, 5, 6, 3_650_000], pa.date32()),
            "k": pa.array([date(2020, 1, i + 1).isoformat() for i in range(8)]),
        }
    ),
    pa.table({"x": pa.array([], pa.int64())}),
]


@pytest.mark.parametrize("table", _TABLES)
def test_batches_give_the_whole_columns_fingerprint(
    table: pa.Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(previews, "FINGERPRINT_BATCH_ROWS", 3)
    assert previews.result_fingerprint(ResultSet(table)) == _whole_columns(table)


_MEASURE = """
import numpy as np, pyarrow as pa
from sqlbench.engines.base import ResultSet
from sqlbench.runs.previews import result_fingerprint

def kb(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))

ids = np.arange(1_000_000)
text = pa.array([f"{i:064d}" for i in range(1_000_000)])
table = pa.table({"i": ids, "f": ids * 0.5, "s": text})  # 80 MB
before = kb("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
result_fingerprint(ResultSet(table))
print((kb("VmHWM") - before) / 1024)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_fingerprinting_a_million_narrow_rows_adds_less_than_twice_the_result() -> None:
    # Whole columns as Python objects added 350 MB for this 80 MB result; batches, 129 MB.
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE], capture_output=True, text=True, timeout=300, check=True
    )
    added_mb = float(done.stdout.strip())
    assert added_mb < 200, f"fingerprinting an 80 MB result added {added_mb:.0f} MB"


# The fingerprint's rows as they were built before issue 15 (one json.dumps per row), kept as
# the reference the column-wise texts must equal byte for byte.
def _reference_row_texts(table: pa.Table, as_text: set[int]) -> list[bytes]:
    rows: list[bytes] = []
    for start in range(0, table.num_rows, previews.FINGERPRINT_BATCH_ROWS):
        part = table.slice(start, previews.FINGERPRINT_BATCH_ROWS)
        columns = []
        for index, column in enumerate(part.columns):
            if index in as_text:
                values = column.cast(pa.string()).to_pylist()
            else:
                try:
                    values = column.to_pylist()
                except (OverflowError, ValueError) as err:
                    raise previews._NotPython(index) from err
            columns.append([previews._canonical(v) for v in values])
        rows += (
            json.dumps(list(row), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            for row in zip(*columns, strict=True)
        )
    return rows


def _reference_fingerprint(table: pa.Table) -> str:
    as_text: set[int] = set()
    while True:
        try:
            rows = _reference_row_texts(table, as_text)
            break
        except previews._NotPython as err:
            as_text.add(err.column)
    rows.sort()
    digest = hashlib.sha256(f"{table.num_columns}:{table.num_rows}\n".encode())
    for row in rows:
        digest.update(row)
        digest.update(b"\n")
    return digest.hexdigest()[:16]


_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ['"', "\\", "\n\t\x00\x1f\x7f", "\u2028", "é", "e\u0301", "\U0001f600", "1", "1.0", "NaN"]
)
_FLOATS = st.floats() | st.sampled_from(
    [0.0, -0.0, 2.0**53, 2.0**53 + 2, -(2.0**53), 1e16, 1e-7, 0.1 + 0.2, 5e-324, 1.7e308]
)
_PYTHON_VALUES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | _FLOATS
    | st.decimals(allow_nan=False, allow_infinity=False, places=3, max_value=10**9)
    | _TEXT
    | st.binary(max_size=4)
    | st.dates()
)
"""Values a DB-API driver hands over; ``rows_to_table`` types a column of mixed ones as a
dense union, big integers as decimals or digit text, floats with Decimals as float64."""


def _driver_table(columns: int) -> st.SearchStrategy[pa.Table]:
    row = st.tuples(*[_PYTHON_VALUES] * columns)
    return st.lists(row, max_size=12).map(
        lambda rows: rows_to_table([f"c{i}" for i in range(columns)], rows)
    )


_ARROW_COLUMNS = st.sampled_from(
    [
        pa.array([1, None, -(2**63), 2**63 - 1], pa.int64()),
        pa.array([2**64 - 1, None, 0, 7], pa.uint64()),
        pa.array([True, False, None, True], pa.bool_()),
        pa.array([1.5, None, float("inf"), float("-inf")], pa.float32()),
        pa.array([float("nan"), 6.0, -0.0, 1e300], pa.float64()),
        pa.array([Decimal("6.00"), None, Decimal("-0.10"), Decimal("1e20")], pa.decimal128(24, 2)),
        pa.array([Decimal(10**40), None, Decimal(-1), Decimal(0)], pa.decimal256(45, 0)),
        pa.array(["é", None, '"\\', ""], pa.large_string()),
        pa.array(["a", "b", None, "\U0001f600"], pa.string_view()),
        pa.array([b"\x00", None, b"", b"xy"], pa.binary()),
        pa.array([0, 3_650_000, None, -1], pa.date32()),
        pa.array([0, None, 10**15, -(10**15)], pa.timestamp("us", "UTC")),
        pa.array([[1.5, float("nan")], None, [], [None]], pa.list_(pa.float64())),
        pa.array([{"k": 1}, None, {"k": None}, {"k": 2}], pa.struct([("k", pa.int64())])),
        pa.nulls(4),
    ]
)


@given(st.integers(min_value=1, max_value=4).flatmap(_driver_table), st.integers(1, 5))
def test_driver_results_fingerprint_as_one_json_dumps_per_row_did(
    table: pa.Table, batch_rows: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(previews, "FINGERPRINT_BATCH_ROWS", batch_rows)
        rows = previews._row_texts(table, set())
        assert [row.encode("utf-8") for row in rows] == _reference_row_texts(table, set())
        fingerprint = previews.result_fingerprint(ResultSet(table))
        assert fingerprint == _reference_fingerprint(table)


@given(st.lists(_ARROW_COLUMNS, min_size=1, max_size=4), st.permutations(range(4)))
def test_arrow_results_fingerprint_as_one_json_dumps_per_row_did(
    columns: list[pa.Array], order: list[int]
) -> None:
    table = pa.table(
        {f"c{i}": pa.concat_arrays([c.slice(j, 1) for j in order]) for i, c in enumerate(columns)}
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(previews, "FINGERPRINT_BATCH_ROWS", 3)
        assert previews.result_fingerprint(ResultSet(table)) == _reference_fingerprint(table)


def test_a_large_plain_result_is_fingerprinted_without_canonical_values_or_dumps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = 21_056  # a BIRD dev ground truth's size
    table = pa.table(
        {
            "s": [None if i % 9 == 0 else f"name {i % 500} é" for i in range(rows)],
            "n": list(range(rows)),
            "f": [i / 7 for i in range(rows)],
            "u": rows_to_table(["u"], [(i if i % 2 else str(i),) for i in range(rows)])[0],
        }
    )
    expected = _reference_fingerprint(table)
    calls: list[str] = []

    def counted(name: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return fn(*args, **kwargs)

        return call

    monkeypatch.setattr(previews, "_canonical", counted("_canonical", previews._canonical))
    monkeypatch.setattr(previews, "_json_any", counted("_json_any", previews._json_any))
    monkeypatch.setattr(previews.json, "dumps", counted("dumps", json.dumps))
    assert previews.result_fingerprint(ResultSet(table)) == expected
    assert calls == []
