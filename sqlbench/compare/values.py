"""Per-value helpers: NULL detection, exact type-tagged keys, instants and display.

These run per value, so they are only used where values are not typed (object columns mixing
Python types) and for the handful of example rows a reason shows.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

NUMBER_PATTERN = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?$"
"""docs/verdicts.md: a plain decimal number (no leading zeros, so '007' stays text)."""

_EPOCH = dt.datetime(1970, 1, 1)
_MICRO = dt.timedelta(microseconds=1)
_MAX_DISPLAY = 40


@dataclass(frozen=True)
class ExactValue:
    """A value no Python type holds exactly (a date past year 9999, an infinity, a time with
    nanoseconds): shown as ``text``, compared (mixed-type view) by ``key``, which equals the
    :func:`tagged_key` of an equal value of any other type.

    Example:
        >>> str(ExactValue("infinity", "t:9223372036854775807"))
        'infinity'
    """

    text: str
    key: str

    def __str__(self) -> str:
        return self.text


def iso_date(days: int) -> str:
    """The ISO-8601 date ``days`` after 1970-01-01, for any year (proleptic Gregorian,
    astronomical years: 0000 is 1 BC).

    Example:
        >>> iso_date(0), iso_date(3672148), iso_date(-719163), iso_date(-1_000_000)
        ('1970-01-01', '12024-01-01', '0000-12-31', '-0768-02-04')
    """
    z = days + 719_468  # days since 0000-03-01 (H. Hinnant's civil_from_days)
    era, doe = divmod(z, 146_097)
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    return f"{'-' if year < 0 else ''}{abs(year):04d}-{month:02d}-{day:02d}"


def iso_timestamp(us: int, nanos: int = 0) -> str:
    """The ISO-8601 timestamp ``us`` microseconds (and ``nanos`` nanoseconds) after
    1970-01-01 00:00, for any year.

    Example:
        >>> iso_timestamp(317_273_623_200_000_001), iso_timestamp(0, 7)
        ('12024-01-01T10:00:00.000001', '1970-01-01T00:00:00.000000007')
    """
    days, rest = divmod(us, 86_400_000_000)
    seconds, micros = divmod(rest, 1_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    text = f"{iso_date(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}"
    if nanos:
        return text + f".{micros:06d}{nanos:03d}"
    return text + (f".{micros:06d}" if micros else "")


def is_null_value(value: object) -> bool:
    """True for None, NaN (float, numpy or Decimal), pandas NA and NaT.

    Example:
        >>> is_null_value(float("nan")), is_null_value(0), is_null_value(None)
        (True, False, True)
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating):
        return math.isnan(value)
    if isinstance(value, decimal.Decimal):
        return value.is_nan()
    if isinstance(value, np.datetime64 | np.timedelta64):
        return bool(np.isnat(value))
    return False


def instant_us(value: dt.date | np.datetime64) -> int:
    """Microseconds since 1970-01-01 of a date (its midnight) or a timestamp.

    Time-zone-aware timestamps count in UTC; naive ones as written.

    Example:
        >>> instant_us(dt.date(1970, 1, 2))
        86400000000
    """
    if isinstance(value, np.datetime64):
        return int(value.astype("datetime64[us]").astype(np.int64))
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        else:
            value = value.replace(tzinfo=None)
        return (value - _EPOCH) // _MICRO
    return (dt.datetime(value.year, value.month, value.day) - _EPOCH) // _MICRO


def instants_from_objects(values: Iterable[object]) -> np.ndarray:
    """int64 microseconds for a list of dates/timestamps (None as 0)."""
    return np.array(
        [0 if v is None else instant_us(v) for v in values],  # type: ignore[arg-type]
        dtype=np.int64,
    )


def tagged_key(value: object) -> str:
    """An exact key that equal values share across Python types; text stays text.

    Numbers of any type share the ``n:`` namespace (integral values by their integer, others by
    their shortest float repr, a Decimal of more than 15 significant digits by its exact
    fraction unless it is exactly a float); dates and timestamps the ``t:`` namespace (as instants);
    strings ``s:``; anything else its canonical repr.

    Example:
        >>> tagged_key(3) == tagged_key(3.0) == tagged_key(decimal.Decimal("3.00"))
        True
        >>> tagged_key("3") == tagged_key(3)
        False
    """
    if is_null_value(value):
        return "\x00"
    if isinstance(value, ExactValue):
        return value.key
    if isinstance(value, str):
        return "s:" + value
    if isinstance(value, bool | np.bool_):
        return "n:1" if value else "n:0"
    if isinstance(value, int | np.integer):
        return f"n:{int(value)}"
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isfinite(number) and number.is_integer():
            return f"n:{int(number)}"
        return f"n:{number!r}"
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return f"n:{float(value)!r}"
        if value == value.to_integral_value():
            return f"n:{int(value)}"
        if len(value.normalize().as_tuple().digits) > 15:  # its double is not its value
            exact = Fraction(value)
            if Fraction(float(value)) != exact:
                return f"n:{exact}"
        return f"n:{float(value)!r}"
    if isinstance(value, dt.datetime | dt.date | np.datetime64):
        key = f"t:{instant_us(value)}"
        nanos = value.nanosecond if isinstance(value, pd.Timestamp) else 0
        return key + (f"+{nanos}ns" if nanos else "")
    if isinstance(value, dt.time):
        return "h:" + value.isoformat()
    if isinstance(value, dt.timedelta):
        nanos = value.nanoseconds if isinstance(value, pd.Timedelta) else 0
        return f"d:{value // _MICRO}" + (f"+{nanos}ns" if nanos else "")
    if isinstance(value, bytes | bytearray | memoryview):
        return "b:" + bytes(value).hex()
    if isinstance(value, dict):
        inner = ",".join(
            f"{tagged_key(k)}={tagged_key(v)}"
            for k, v in sorted(value.items(), key=lambda item: tagged_key(item[0]))
        )
        return "o:{" + inner + "}"
    if isinstance(value, list | tuple | np.ndarray):
        return "o:[" + ",".join(tagged_key(v) for v in value) + "]"
    return "o:" + repr(value)


def display(value: object) -> str:
    """A short, unambiguous rendering of one value for reasons ('text' quoted, NULL bare).

    Example:
        >>> display("bob"), display(None), display(0.1 + 0.2)
        ("'bob'", 'NULL', '0.30000000000000004')
    """
    if is_null_value(value):
        return "NULL"
    if isinstance(value, str):
        text = value if len(value) <= _MAX_DISPLAY else value[: _MAX_DISPLAY - 1] + "…"
        return repr(text)
    if isinstance(value, float | np.floating):
        return repr(float(value))
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    text = _nested(value) if isinstance(value, list | tuple | dict) else str(value)
    return text if len(text) <= _MAX_DISPLAY else text[: _MAX_DISPLAY - 1] + "…"


def _nested(value: object) -> str:
    """A LIST / STRUCT / MAP value with its items shown as :func:`display` shows values."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_nested(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_nested(v) for v in value) + ")"
    return display(value)


def display_row(values: Iterable[object]) -> str:
    """A row as ``(v1, v2, ...)``."""
    return "(" + ", ".join(display(v) for v in values) + ")"
