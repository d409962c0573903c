"""Arrow values as Python objects, never raising and never losing precision.

Python objects are needed in two places only: the mixed-type view (exact type-tagged keys) and
the example rows of a reason. ``Array.to_pylist`` cannot be used as it is: it raises
OverflowError on dates and timestamps Python's types cannot hold (DuckDB's ``date
'12024-01-01'``, ``'infinity'::date``, timestamp infinity), which would crash a whole run, and it
silently drops the nanoseconds of a TIME_NS value. Such values become
:class:`~sqlbench.compare.values.ExactValue` s: shown as text (``12024-01-01``, ``infinity``,
``10:00:00.123456789``), compared by an exact key. Everything else goes through ``to_pylist``
(vectorized), so ordinary columns pay one check.

Infinity is DuckDB's (and PostgreSQL's over Arrow) encoding: the largest (smallest) int32 day
for a DATE, the largest (smallest) int64 for a TIMESTAMP in any unit. ``infinity`` as a DATE
and as a TIMESTAMP is the same value.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sqlbench.compare.values import ExactValue, iso_date, iso_timestamp

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
US_PER_DAY = 86_400_000_000
US_PER = {"s": 1_000_000, "ms": 1_000, "us": 1}
"""Microseconds per unit (nanoseconds are not a whole number of microseconds)."""

_PY_DAYS = (-719_162, 2_932_896)
"""Days since 1970-01-01 of ``datetime.date.min`` and ``datetime.date.max``."""
_PY_US = (_PY_DAYS[0] * US_PER_DAY + US_PER_DAY, (_PY_DAYS[1] + 1) * US_PER_DAY - US_PER_DAY)
"""Timestamps Python holds, a day inside each end (a time zone shifts the wall time)."""
_PY_DURATION_US = 999_999_999 * US_PER_DAY
"""About ``datetime.timedelta.max`` in microseconds."""
_INFINITY_US = {1: INT64_MAX, -1: -INT64_MAX}


def py_values(arr: pa.Array | pa.ChunkedArray) -> list[object]:
    """Every value of an Arrow array as a Python object (NULL as None), never raising.

    Example:
        >>> import pyarrow as pa
        >>> [str(v) for v in py_values(pa.array([3672148, 2**31 - 1], pa.date32()))]
        ['12024-01-01', 'infinity']
    """
    if isinstance(arr, pa.ChunkedArray):
        return [value for chunk in arr.chunks for value in py_values(chunk)]
    typ = arr.type
    if _is_temporal(typ):
        special = _special(typ, *_raw(arr))
        if not special.any():
            return list(arr.to_pylist())
        values: list[object] = [None] * len(arr)
        ordinary = np.flatnonzero(~special)
        for row, value in zip(
            ordinary, arr.take(pa.array(ordinary, type=pa.int64())).to_pylist(), strict=True
        ):
            values[row] = value
        for row in np.flatnonzero(special):
            values[row] = py_value(arr[int(row)])
        return values
    if _holds_temporal(typ):
        return [py_value(scalar) for scalar in arr]
    return list(arr.to_pylist())


def py_value(scalar: pa.Scalar) -> object:
    """One Arrow value as a Python object (nested values as lists, dicts and tuples, like
    ``to_pylist``), never raising."""
    if not scalar.is_valid:
        return None
    typ = scalar.type
    if _is_temporal(typ):
        raw = _scalar_raw(scalar)
        if _special(typ, np.array([raw], dtype=np.int64), np.ones(1, dtype=bool))[0]:
            return _exact(typ, raw)
        return scalar.as_py()
    if pa.types.is_dictionary(typ):
        return py_value(scalar.value)
    if pa.types.is_map(typ):
        return [(py_value(entry[0]), py_value(entry[1])) for entry in scalar.values]
    if _is_list(typ):
        return [py_value(item) for item in scalar.values]
    if pa.types.is_struct(typ):
        return {typ.field(k).name: py_value(scalar[k]) for k in range(typ.num_fields)}
    return scalar.as_py()


def _is_temporal(typ: pa.DataType) -> bool:
    return bool(
        pa.types.is_date(typ)
        or pa.types.is_timestamp(typ)
        or pa.types.is_time(typ)
        or pa.types.is_duration(typ)
    )


def _is_list(typ: pa.DataType) -> bool:
    return bool(
        pa.types.is_list(typ)
        or pa.types.is_large_list(typ)
        or pa.types.is_fixed_size_list(typ)
        or pa.types.is_list_view(typ)
        or pa.types.is_large_list_view(typ)
    )


def _holds_temporal(typ: pa.DataType) -> bool:
    """A nested type with a date, timestamp, time or duration somewhere inside."""
    if _is_temporal(typ):
        return True
    if pa.types.is_dictionary(typ):
        return _holds_temporal(typ.value_type)
    return any(_holds_temporal(typ.field(k).type) for k in range(typ.num_fields))


def _raw(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The stored integers of a temporal array (days for date32, NULL as 0) and its validity."""
    ints = arr.cast(pa.int32() if pa.types.is_date32(arr.type) else pa.int64())
    raw = ints.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    valid = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return raw, valid


def _scalar_raw(scalar: pa.Scalar) -> int:
    target = pa.int32() if pa.types.is_date32(scalar.type) else pa.int64()
    raw: int = scalar.cast(target).as_py()
    return raw


def _special(typ: pa.DataType, raw: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Values ``as_py`` cannot give exactly: out of Python's range, infinite, nanoseconds that
    ``datetime.time`` drops, or NaT-like int64 minimums pandas would read as NULL."""
    if pa.types.is_date32(typ):
        out = (raw < _PY_DAYS[0]) | (raw > _PY_DAYS[1])
    elif pa.types.is_date64(typ):
        out = (raw < _PY_DAYS[0] * 86_400_000) | (raw > _PY_DAYS[1] * 86_400_000)
    elif pa.types.is_timestamp(typ) and typ.unit != "ns":
        per = US_PER[typ.unit]
        out = (raw < _PY_US[0] // per) | (raw > _PY_US[1] // per)
    elif pa.types.is_time(typ):
        out = (raw % 1000 != 0) if typ.unit == "ns" else np.zeros(len(raw), dtype=bool)
    elif pa.types.is_duration(typ) and typ.unit in ("s", "ms"):
        limit = _PY_DURATION_US // US_PER[typ.unit]
        out = (raw < -limit) | (raw > limit)
    else:  # nanosecond timestamps and durations: pandas holds every int64 but its extremes
        out = (raw == INT64_MAX) | (raw <= -INT64_MAX)
    special: np.ndarray = out & valid
    return special


def _exact(typ: pa.DataType, raw: int) -> ExactValue:
    """A value ``as_py`` cannot give exactly, as text and an exact key (see ``tagged_key``)."""
    if pa.types.is_date(typ) or pa.types.is_timestamp(typ):
        infinite = abs(raw) == (INT32_MAX if pa.types.is_date32(typ) else INT64_MAX)
        if infinite:
            sign = 1 if raw > 0 else -1
            return ExactValue("infinity" if sign > 0 else "-infinity", f"t:{_INFINITY_US[sign]}")
        if pa.types.is_date32(typ):
            return ExactValue(iso_date(raw), f"t:{raw * US_PER_DAY}")
        if pa.types.is_date64(typ):
            return ExactValue(iso_date(raw // 86_400_000), f"t:{raw * 1000}")
        if typ.unit == "ns":
            us, nanos = divmod(raw, 1000)
            text = iso_timestamp(us, nanos)
            key = f"t:{us}" + (f"+{nanos}ns" if nanos else "")
        else:
            us = raw * US_PER[typ.unit]
            text = iso_timestamp(us)
            key = f"t:{us}"
        return ExactValue(text + ("+00:00" if typ.tz is not None else ""), key)
    if pa.types.is_time(typ):  # nanoseconds
        seconds, nanos = divmod(raw, 1_000_000_000)
        hours, rest = divmod(seconds, 3600)
        text = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{nanos:09d}"
        return ExactValue(text, "h:" + text)
    if typ.unit == "ns":
        us, nanos = divmod(raw, 1000)
        return ExactValue(f"{raw} nanoseconds", f"d:{us}" + (f"+{nanos}ns" if nanos else ""))
    return ExactValue(f"{raw} {_UNIT_NAMES[typ.unit]}", f"d:{raw * US_PER[typ.unit]}")


_UNIT_NAMES = {"s": "seconds", "ms": "milliseconds", "us": "microseconds"}
