"""PostgreSQL values psycopg cannot hand over as Python objects, handed over anyway.

psycopg raises ``DataError`` for a DATE or TIMESTAMP past year 9999 or before year 1 (PostgreSQL
has them, and ``'infinity'``) and for the time of day ``24:00:00``, because Python's ``datetime``
cannot hold them: a query that ran fine would become an error. The loaders registered here
return such values as :class:`sqlbench.engines.dbapi_arrow.OutOfRange` (raw Arrow values, with
DuckDB's conventions for infinity) and leave every other value to psycopg's own loader.

Only PostgreSQL's ISO ``DateStyle`` (its default) is read; in another style an out-of-range
value stays psycopg's error.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from sqlbench.engines.dbapi_arrow import OutOfRange

DATE_INFINITY = 2**31 - 1
"""``'infinity'::date`` as days since 1970 (DuckDB's value; ``-infinity`` is its negation)."""
TIMESTAMP_INFINITY = 2**63 - 1
"""``'infinity'::timestamp`` as microseconds since 1970 (DuckDB's value)."""

_MICROS_PER_DAY = 86_400_000_000
_DAYS_PER_400_YEARS = 146_097
_EPOCH = dt.date(1970, 1, 1)
_DATE = r"(\d{4,})-(\d\d)-(\d\d)"
_CLOCK = r"(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?"
_OFFSET = r"([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?"
_DATE_RE = re.compile(rf"{_DATE}( BC)?")
_TIMESTAMP_RE = re.compile(rf"{_DATE} {_CLOCK}( BC)?")
_TIMESTAMPTZ_RE = re.compile(rf"{_DATE} {_CLOCK}{_OFFSET}( BC)?")
_MIDNIGHT_RE = re.compile(rf"24:00:00(?:\.0+)?(?:{_OFFSET})?")


def register_loaders(dbapi: Any) -> None:
    """Make one psycopg (3) connection load out-of-range dates, timestamps and times as
    ``OutOfRange`` values instead of raising; other drivers are left as they are."""
    adapters = getattr(dbapi, "adapters", None)
    if adapters is None or type(dbapi).__module__.split(".")[0] != "psycopg":
        return
    from psycopg import DataError
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    for name, parse in _PARSERS.items():
        info = adapters.types.get(name)
        if info is None:
            continue
        base = adapters.get_loader(info.oid, Format.TEXT)
        if base is None or getattr(base, "sqlbench_parse", None) is not None:
            continue

        class _Tolerant(Loader):
            inner = base
            sqlbench_parse = staticmethod(parse)

            def __init__(self, oid: int, context: Any = None) -> None:
                super().__init__(oid, context)
                self._inner = self.inner(oid, context)

            def load(self, data: Any) -> Any:
                try:
                    return self._inner.load(data)
                except DataError:
                    value = self.sqlbench_parse(bytes(data).decode("ascii", "replace"))
                    if value is None:
                        raise
                    return value

        adapters.register_loader(info.oid, _Tolerant)


def parse_date(text: str) -> OutOfRange | None:
    """A DATE psycopg refused (``infinity``, ``12024-01-01``, ``0044-03-15 BC``) as days since
    1970-01-01, or None when ``text`` is not one.

    Example:
        >>> parse_date("12024-01-01").value, parse_date("-infinity").value
        (3672148, -2147483647)
    """
    if text in ("infinity", "-infinity"):
        days = DATE_INFINITY if text == "infinity" else -DATE_INFINITY
        return OutOfRange(pa.date32(), days, text)
    found = _DATE_RE.fullmatch(text)
    if found is None:
        return None
    year, month, day, bc = found.groups()
    return OutOfRange(pa.date32(), _days(_year(year, bc), int(month), int(day)), text)


def parse_timestamp(text: str) -> OutOfRange | None:
    """A TIMESTAMP psycopg refused, as microseconds since 1970-01-01, or None.

    Example:
        >>> parse_timestamp("0001-01-01 00:00:01 BC").value
        -62167219199000000
    """
    return _timestamp(text, _TIMESTAMP_RE, pa.timestamp("us"))


def parse_timestamptz(text: str) -> OutOfRange | None:
    """A TIMESTAMPTZ psycopg refused, as UTC microseconds since 1970-01-01, or None.

    Example:
        >>> parse_timestamptz("12024-01-01 05:30:00+05:30").value
        317273587200000000
    """
    return _timestamp(text, _TIMESTAMPTZ_RE, pa.timestamp("us", "UTC"))


def parse_time(text: str) -> OutOfRange | dt.time | None:
    """``24:00:00`` (TIME) or ``24:00:00+02`` (TIMETZ), which psycopg refuses: the end of the
    day as microseconds since midnight, or (with an offset) its UTC time of day; None for
    anything else.

    Example:
        >>> parse_time("24:00:00").value, parse_time("24:00:00+02")
        (86400000000, datetime.time(22, 0))
    """
    found = _MIDNIGHT_RE.fullmatch(text)
    if found is None:
        return None
    sign, hours, minutes, seconds = found.groups()
    micros = _MICROS_PER_DAY - _offset_micros(sign, hours, minutes, seconds)
    if micros == _MICROS_PER_DAY:
        return OutOfRange(pa.time64("us"), micros, text)
    seconds_total, micro = divmod(micros % _MICROS_PER_DAY, 1_000_000)
    return dt.time(seconds_total // 3600, seconds_total // 60 % 60, seconds_total % 60, micro)


def _timestamp(text: str, pattern: re.Pattern[str], kind: pa.DataType) -> OutOfRange | None:
    if text in ("infinity", "-infinity"):
        micros = TIMESTAMP_INFINITY if text == "infinity" else -TIMESTAMP_INFINITY
        return OutOfRange(kind, micros, text)
    found = pattern.fullmatch(text)
    if found is None:
        return None
    parts = found.groups()
    year, month, day, hour, minute, second, fraction = parts[:7]
    bc = parts[-1]
    micros = _days(_year(year, bc), int(month), int(day)) * _MICROS_PER_DAY
    micros += ((int(hour) * 60 + int(minute)) * 60 + int(second)) * 1_000_000
    micros += int((fraction or "").ljust(6, "0"))
    if len(parts) > 8:
        micros -= _offset_micros(*parts[7:11])
    if abs(micros) >= TIMESTAMP_INFINITY:
        return None  # past what int64 microseconds since 1970 hold: stays psycopg's error
    return OutOfRange(kind, micros, text)


def _year(digits: str, bc: str | None) -> int:
    """The astronomical year: 1 BC is year 0, 2 BC is year -1."""
    return 1 - int(digits) if bc else int(digits)


def _days(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date in any year (400-year cycles)."""
    cycles = (year - 2000) // 400
    return (dt.date(year - 400 * cycles, month, day) - _EPOCH).days + cycles * _DAYS_PER_400_YEARS


def _offset_micros(
    sign: str | None, hours: str | None, minutes: str | None, seconds: str | None
) -> int:
    if sign is None:
        return 0
    total = (int(hours or 0) * 60 + int(minutes or 0)) * 60 + int(seconds or 0)
    return (-1 if sign == "-" else 1) * total * 1_000_000


_PARSERS: dict[str, Callable[[str], object]] = {
    "date": parse_date,
    "timestamp": parse_timestamp,
    "timestamptz": parse_timestamptz,
    "time": parse_time,
    "timetz": parse_time,
}
