"""DB-API rows as typed Arrow columns, every value kept as what it is.

A DB-API driver hands over Python values; each column becomes one Arrow array typed from them:

- one kind of value: its Arrow type (Decimal stays decimal, date stays date32, tz-aware datetimes
  stay tz-aware); numbers mixing int, float and Decimal become float64 when a float is present,
  else decimal; UUIDs become text;
- values of several kinds in one column (SQLite's dynamic typing: 1 and 'a') become a dense
  union with one child per kind, so each value keeps its own type: the comparison reads such a
  column value by value, numbers by value (1 equals 1.0) and text as text ('1' is not 1);
- a TIME WITH TIME ZONE value (a ``datetime.time`` with an offset) becomes its UTC time of day;
- DECIMAL NaN becomes NULL (docs/verdicts.md: NaN counts as NULL); a DECIMAL infinity makes its
  column float64 (Arrow decimals have no infinity);
- an :class:`OutOfRange` value (a date, timestamp or time of day Python cannot hold, such as
  PostgreSQL's ``'infinity'::date``) makes its column hold raw Arrow values, with DuckDB's
  conventions: ``±infinity`` dates are ``±(2^31-1)`` days, timestamps ``±(2^63-1)`` µs.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

_ARROW_ERRORS = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    OverflowError,
    TypeError,
)
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_MICRO = dt.timedelta(microseconds=1)
_MICROS_PER_DAY = 86_400_000_000
_NUMBERS = frozenset({"int", "float", "decimal"})


@dataclass(frozen=True)
class OutOfRange:
    """A date, timestamp or time of day Python's ``datetime`` cannot hold (``infinity``, year
    12024, ``24:00:00``), as a driver hands it over: its Arrow type and raw Arrow value."""

    type: pa.DataType
    """``date32()``, ``timestamp("us")``, ``timestamp("us", "UTC")`` or ``time64("us")``."""
    value: int
    """Days since 1970-01-01 (date32); microseconds since 1970-01-01 00:00 (timestamps, in UTC
    when the type has a zone) or since midnight (time64)."""
    text: str
    """The value as the database wrote it."""

    def __str__(self) -> str:
        return self.text


def rows_to_table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> pa.Table:
    """An Arrow table from DB-API rows, one typed column per name (names may repeat); see the
    module docstring for how each column is typed.

    Example:
        >>> from decimal import Decimal
        >>> t = rows_to_table(["x", "x", "v"], [(Decimal("1.50"), 1, 1), (None, 2, "a")])
        >>> t.column_names, [str(f.type) for f in t.schema][:2], t.num_rows
        (['x', 'x', 'v'], ['decimal128(3, 2)', 'int64'], 2)
        >>> t.column(2).to_pylist()
        [1, 'a']
    """
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    arrays = [column_array(list(values)) for values in columns]
    return pa.Table.from_arrays(arrays, names=list(names))


def column_array(values: list[Any]) -> pa.Array:
    """One column of DB-API values as one Arrow array (see the module docstring).

    Example:
        >>> column_array([1, "1", None]).type
        DenseUnionType(dense_union<int: int64=0, text: string=1, null: null=2>)
    """
    types = set(map(type, values))
    types.discard(type(None))
    if not types:
        return pa.array(values)
    if len(types) == 1:
        plain = _PLAIN_KINDS.get(next(iter(types)))
        if plain == "float":
            # float(v) of a float is v itself: no copy of the values.
            return pa.array(values, type=pa.float64())
        if plain is not None:
            # int: _numbers; text, bytes, bool: nothing for _single to convert (no UUID, no
            # bytearray or memoryview among them).
            return _numbers(values, {plain}) if plain == "int" else _built(values)
    kinds = {_kind_of_type(t) for t in types}
    if kinds & _VALUE_DEPENDENT:
        kinds = {_kind(v) for v in values if v is not None}
    if kinds <= _NUMBERS:
        return _numbers(values, kinds)
    if len(kinds) == 1:
        return _single(kinds.pop(), values)
    return _union(values)


def _kind_of_type(python_type: type) -> str:
    found = _KIND_BY_TYPE.get(python_type)
    if found is None:
        found = next((k for t, k in _KINDS if issubclass(python_type, t)), "other")
        _KIND_BY_TYPE[python_type] = found
    return found


def _kind(value: Any) -> str:
    """The kind of one value; values of one kind share one Arrow type."""
    if isinstance(value, OutOfRange):
        if pa.types.is_timestamp(value.type):
            return "timestamp" if value.type.tz is None else "timestamptz"
        return "date" if pa.types.is_date32(value.type) else "time"
    if isinstance(value, dt.datetime):
        return "timestamp" if value.tzinfo is None else "timestamptz"
    return _kind_of_type(type(value))


_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (OutOfRange, "out_of_range"),
    (bool, "bool"),
    (int, "int"),
    (float, "float"),
    (Decimal, "decimal"),
    ((str, uuid.UUID), "text"),
    ((bytes, bytearray, memoryview), "bytes"),
    (dt.datetime, "datetime"),
    (dt.date, "date"),
    (dt.time, "time"),
    (dt.timedelta, "duration"),
)
_KIND_BY_TYPE: dict[type, str] = {}
_PLAIN_KINDS: dict[type, str] = {
    int: "int",
    float: "float",
    str: "text",
    bytes: "bytes",
    bool: "bool",
}
"""Exact types whose column needs no kind analysis when they are its only type (SQLite hands
over nothing else), and their kinds."""
_VALUE_DEPENDENT = frozenset({"out_of_range", "datetime"})
"""Kinds a value's type does not settle: naive or aware datetimes; what an OutOfRange holds."""


def _single(kind: str, values: list[Any]) -> pa.Array:
    """A column of one kind of value (NULLs aside)."""
    if kind in _NUMBERS:
        return _numbers(values, {kind})
    if kind in ("date", "timestamp", "timestamptz", "time") and any(
        isinstance(v, OutOfRange) for v in values
    ):
        return _raw_temporal(values)
    if kind == "time":
        values = [utc_time_of_day(v) if isinstance(v, dt.time) else v for v in values]
    elif kind == "text":
        values = [str(v) if isinstance(v, uuid.UUID) else v for v in values]
    elif kind == "other":
        values = [_nested_plain(v) for v in values]
    elif kind == "bytes":
        values = [bytes(v) if isinstance(v, bytearray | memoryview) else v for v in values]
    return _built(values)


def _built(values: list[Any]) -> pa.Array:
    """The Arrow array of values of one kind, ready as they are."""
    try:
        return pa.array(values)
    except _ARROW_ERRORS:
        pass
    # Values Arrow cannot type (JSON mixing objects and arrays, driver objects): one text each,
    # the same for equal values on both sides.
    return pa.array([None if v is None else _as_text(v) for v in values], type=pa.string())


def _numbers(values: list[Any], kinds: set[str]) -> pa.Array:
    """int, float and Decimal values: int64 or decimal when every value is exact, float64 when
    a float or a Decimal infinity is present (a float column is compared with tolerance).
    DECIMAL NaN is NULL."""
    if "decimal" in kinds:
        values = [None if isinstance(v, Decimal) and v.is_nan() else v for v in values]
        if any(isinstance(v, Decimal) and v.is_infinite() for v in values):
            kinds = kinds | {"float"}
    if "float" in kinds:
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    try:
        return pa.array(values)
    except _ARROW_ERRORS:
        pass  # past int64, or int and Decimal mixed: decimals hold both
    decimals = [None if v is None else Decimal(v) for v in values]
    try:
        return pa.array(decimals)
    except _ARROW_ERRORS:
        pass  # past 76 digits: plain digit text, which the comparison reads as numbers
    return pa.array([None if v is None else str(v) for v in decimals], type=pa.string())


def _union(values: list[Any]) -> pa.Array:
    """Values of several kinds: a dense union with one child per kind (and one for NULLs)."""
    groups: dict[str, list[Any]] = {}
    numbers: dict[str, int] = {}
    codes: list[int] = []
    offsets: list[int] = []
    for value in values:
        kind = "null" if value is None else _kind(value)
        group = groups.get(kind)
        if group is None:
            group = groups[kind] = []
            numbers[kind] = len(numbers)
        codes.append(numbers[kind])
        offsets.append(len(group))
        group.append(value)
    children = [pa.nulls(len(g)) if k == "null" else _single(k, g) for k, g in groups.items()]
    return pa.UnionArray.from_dense(
        pa.array(codes, type=pa.int8()),
        pa.array(offsets, type=pa.int32()),
        children,
        list(groups),
    )


def _raw_temporal(values: list[Any]) -> pa.Array:
    """Dates, timestamps or times with some :class:`OutOfRange` among them, as raw Arrow
    values of the out-of-range values' type."""
    target = next(v.type for v in values if isinstance(v, OutOfRange))
    raw = [None if v is None else _raw_value(v, target) for v in values]
    storage = pa.int32() if pa.types.is_date32(target) else pa.int64()
    return pa.array(raw, type=storage).view(target)


def _raw_value(value: Any, target: pa.DataType) -> int:
    if isinstance(value, OutOfRange):
        if value.type != target:
            raise TypeError(f"one column holds both {value.type} and {target} values")
        return value.value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return int((value - _EPOCH) // _MICRO)
    if isinstance(value, dt.date):
        return int((value - _EPOCH_DATE).days)
    if isinstance(value, dt.time):
        plain = utc_time_of_day(value)
        return ((plain.hour * 60 + plain.minute) * 60 + plain.second) * 1_000_000 + (
            plain.microsecond
        )
    raise TypeError(f"{type(value).__name__} value in a column of {target} values")


def utc_time_of_day(value: dt.time) -> dt.time:
    """A time of day with a UTC offset as the UTC time of day (wrapping past midnight); a
    naive one as written.

    Example:
        >>> tz = dt.timezone(dt.timedelta(hours=2))
        >>> utc_time_of_day(dt.time(10, tzinfo=tz)), utc_time_of_day(dt.time(1, tzinfo=tz))
        (datetime.time(8, 0), datetime.time(23, 0))
    """
    offset = value.utcoffset()
    if offset is None:
        return value.replace(tzinfo=None)
    micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000
    micros = (micros + value.microsecond - offset // _MICRO) % _MICROS_PER_DAY
    seconds, microsecond = divmod(micros, 1_000_000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, microsecond)


def _nested_plain(value: Any) -> Any:
    """Inside lists and dicts (PostgreSQL arrays, JSON): times with an offset in UTC, UUIDs as
    text, DECIMAL NaN as NULL."""
    if isinstance(value, list | tuple):
        return [_nested_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _nested_plain(v) for k, v in value.items()}
    if isinstance(value, dt.time):
        return utc_time_of_day(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Decimal) and value.is_nan():
        return None
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, default=str, sort_keys=True)
    return str(value)
