"""Arrow arrays to typed columns, vectorized (Arrow compute and numpy, no per-row Python).

Decimals are read from their buffers as scaled integers when they fit in int64; text is
checked for plain numbers and ISO-8601 instants on a sample first, then on every value.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlbench.compare.columns import Column, Instants, Kind
from sqlbench.compare.exactnum import from_decimals, from_text, from_unscaled
from sqlbench.compare.pyvalues import INT32_MAX, INT64_MAX, US_PER, US_PER_DAY
from sqlbench.compare.values import NUMBER_PATTERN

_ISO_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?$"
)
_ZONED_PATTERN = r"[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)$"


def single(chunked: pa.ChunkedArray) -> pa.Array:
    """One contiguous array from a chunked one (no copy when there is one chunk)."""
    if chunked.num_chunks == 1:
        return chunked.chunk(0)
    if chunked.num_chunks == 0:
        return pa.array([], type=chunked.type)
    return chunked.combine_chunks()


def as_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """One array, except that chunked text stays chunked (combining would copy every string;
    the text path and its dictionary encoding work chunk by chunk)."""
    if isinstance(arr, pa.ChunkedArray) and not _is_text(arr.type):
        return single(arr)
    return arr


def _is_text(typ: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ)
    )


def from_arrow(pos: int, name: str, arr: pa.Array | pa.ChunkedArray) -> Column:
    """The typed column for one Arrow array at result position ``pos``."""
    typ = arr.type
    if pa.types.is_dictionary(typ):
        return from_arrow(pos, name, arr.dictionary_decode())
    if isinstance(typ, pa.ExtensionType):
        return from_arrow(pos, name, arr.storage)
    null = _null_mask(arr)

    def make(kind: Kind, **views: object) -> Column:
        return Column(pos, name, kind, null, arr, **views)  # type: ignore[arg-type]

    if len(arr) == 0 or arr.null_count == len(arr) or pa.types.is_null(typ):
        return make(Kind.NULL)
    if pa.types.is_boolean(typ) or pa.types.is_integer(typ):
        return make(Kind.INT, ints=_ints(arr))
    if pa.types.is_floating(typ):
        floats, nan = _floats(arr)
        return Column(pos, name, Kind.FLOAT, null | nan, arr, floats_=floats)
    if pa.types.is_decimal(typ):
        return _from_decimal(pos, name, arr, null)
    if _is_text(typ):
        return _from_text(pos, name, arr.cast(pa.large_string()), null)
    if pa.types.is_date(typ) or pa.types.is_timestamp(typ):
        instants = _instants(arr)
        if instants is None:  # beyond int64 microseconds: exact per value, as Python ints
            return make(Kind.MIXED)
        return make(Kind.INSTANT, instants=instants)
    if pa.types.is_time(typ) or pa.types.is_duration(typ):
        raw = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        nanos = _scaled(raw, _NS_PER[typ.unit])
        if nanos is None:  # a duration past int64 nanoseconds (292 years): exact per value
            return make(Kind.MIXED)
        return make(Kind.TIME if pa.types.is_time(typ) else Kind.DURATION, other=nanos)
    if (
        pa.types.is_binary(typ)
        or pa.types.is_large_binary(typ)
        or pa.types.is_fixed_size_binary(typ)
    ):
        return make(Kind.BYTES, binary=arr.cast(pa.large_binary()))
    return make(Kind.MIXED)


_NS_PER = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _null_mask(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    if arr.null_count == 0:
        return np.zeros(len(arr), dtype=bool)
    return np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _ints(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    if pa.types.is_boolean(arr.type):
        arr = arr.cast(pa.int8())
    if arr.type == pa.uint64():
        big = pc.greater(arr, pa.scalar(2**63 - 1, pa.uint64()))
        if pc.any(big).as_py():
            return np.array([0 if v is None else v for v in arr.to_pylist()], dtype=object)
    filled = arr.fill_null(0) if arr.null_count else arr
    return np.asarray(filled.to_numpy(zero_copy_only=False)).astype(np.int64, copy=False)


def _floats(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """float64 values (NULL as 0, -0.0 as 0.0) and the NaN mask (NaN counts as NULL)."""
    if arr.type != pa.float64():
        # float32/float16: compare the value as the database printed it ('0.1', not
        # 0.10000000149011612), so a REAL column matches the same numbers computed in double.
        narrow = arr.fill_null(0).to_numpy(zero_copy_only=False)
        values = narrow.astype(str).astype(np.float64)
    else:
        filled = arr.fill_null(0) if arr.null_count else arr
        values = np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.float64)
    nan = np.isnan(values)
    negative_zero = (values == 0) & np.signbit(values)
    if nan.any() or negative_zero.any():
        values = values.copy()  # (the input's own buffer is never written)
        values[nan] = 0.0
        values[negative_zero] = 0.0  # so equal numbers hash alike
    return values, nan


def _from_decimal(pos: int, name: str, arr: pa.Array, null: np.ndarray) -> Column:
    """DECIMAL: integers when no value has a fraction (exact), otherwise float64 values."""
    scale = arr.type.scale
    unscaled = _unscaled(arr, null)
    if unscaled is not None and 0 <= scale <= 18:
        factor = np.int64(10**scale)
        if not (unscaled % factor).any():
            return Column(pos, name, Kind.INT, null, arr, ints=unscaled // factor)
        floats = unscaled / float(factor)  # exact integer over a power of ten: one rounding
        floats[floats == 0] = 0.0
        exact = from_unscaled(unscaled, scale, null)
        return Column(pos, name, Kind.FLOAT, null, arr, floats_=floats, exact_=exact)
    whole = pa.decimal256(76, 0) if pa.types.is_decimal256(arr.type) else pa.decimal128(38, 0)
    try:
        pc.cast(arr, whole)  # safe cast: fails exactly when some value has a fraction
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        floats, _ = _floats(pc.cast(arr, pa.float64(), safe=False))
        exact = from_decimals(arr.to_pylist())  # wide DECIMALs only: per value
        return Column(pos, name, Kind.FLOAT, null, arr, floats_=floats, exact_=exact)
    big = np.array([0 if v is None else int(v) for v in arr.to_pylist()], dtype=object)
    return Column(pos, name, Kind.INT, null, arr, ints=big)  # integers past int64: rare


def _unscaled(arr: pa.Array, null: np.ndarray) -> np.ndarray | None:
    """The unscaled integers of a DECIMAL array (NULL as 0), read from its buffer, when every
    value fits in int64; None otherwise."""
    words = arr.type.byte_width // 8
    data = arr.buffers()[1]
    if data is None:
        return None
    raw = np.frombuffer(data, dtype=np.int64, count=words * (arr.offset + len(arr)))
    raw = raw.reshape(-1, words)[arr.offset :]
    low = raw[:, 0]
    fits = (raw[:, 1:] == (low >> 63)[:, None]).all(axis=1) | null  # little-endian words
    if not fits.all():
        return None
    return np.where(null, 0, low)


def _all_match(values: pa.Array | pa.ChunkedArray, pattern: str) -> bool:
    """Every value matches; a sample is tried first so ordinary text is rejected quickly."""
    if (
        len(values) > 2 * _SAMPLE
        and not pc.all(pc.match_substring_regex(values.slice(0, _SAMPLE), pattern)).as_py()
    ):
        return False
    return bool(pc.all(pc.match_substring_regex(values, pattern)).as_py())


_SAMPLE = 1024

SMALL_TEXT = 128
"""Text columns of up to this many non-NULL values are classified (plain numbers? ISO-8601
instants?) with Python's ``re`` on their values, converted once, instead of Arrow compute:
each Arrow regex call compiles its pattern (~35 us), more than matching a hundred short
strings in Python. Both decide alike (``tests/compare/test_small_paths.py``)."""


SMALL_TEXT_BYTES = 64 * 2**10
"""... and of at most this many bytes (its buffers)."""


def _python_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` (anchored ``^...$``, ASCII classes only) for Python's ``re``, meaning what
    RE2 (Arrow) means by it: RE2's ``$`` is the end of the text, Python's also matches before
    a final newline, so it becomes ``\\Z``."""
    assert pattern.startswith("^") and pattern.endswith("$")
    return re.compile(pattern[:-1] + r"\Z")


_PYTHON_PATTERNS = {p: _python_pattern(p) for p in (NUMBER_PATTERN, _ISO_PATTERN)}


def _small_texts(arr: pa.Array | pa.ChunkedArray) -> list[str] | None:
    """The non-NULL values of a small text column as Python strings; None for a large column
    (or one Python cannot decode), which Arrow compute classifies."""
    if len(arr) - arr.null_count > SMALL_TEXT or arr.get_total_buffer_size() > SMALL_TEXT_BYTES:
        return None  # (a few huge values stay in Arrow: Python would copy them, up to 4x)
    try:
        values = arr.to_pylist()
    except (UnicodeDecodeError, ValueError):
        return None
    texts = [v for v in values if v is not None]
    return texts if all(isinstance(t, str) for t in texts) else None


def _all_match_small(texts: list[str], pattern: str) -> bool:
    """``_all_match`` on values already in Python."""
    match = _PYTHON_PATTERNS[pattern].match
    return all(match(t) is not None for t in texts)


def _from_text(pos: int, name: str, arr: pa.Array | pa.ChunkedArray, null: np.ndarray) -> Column:
    column = Column(pos, name, Kind.TEXT, null, arr, text=arr)
    texts = _small_texts(arr)
    if texts is not None:
        numbers = _all_match_small(texts, NUMBER_PATTERN)
        whole = numbers and not any("." in t for t in texts)
        instants = not numbers and _all_match_small(texts, _ISO_PATTERN)
    else:
        present = arr.drop_null() if arr.null_count else arr
        numbers = _all_match(present, NUMBER_PATTERN)
        whole = numbers and not pc.any(pc.match_substring(present, ".")).as_py()
        instants = not numbers and _all_match(present, _ISO_PATTERN)
    if numbers:
        if whole:
            try:
                column.ints = _ints(pc.cast(arr, pa.int64()))
            except pa.ArrowInvalid:  # past int64
                try:
                    column.ints = np.array(
                        [0 if v is None else int(v) for v in arr.to_pylist()], dtype=object
                    )
                except ValueError:  # past Python's 4,300 digits: compared as the text it is
                    return column
        else:
            column.floats_, _ = _floats(pc.cast(arr, pa.float64()))
            column.exact_ = from_text(arr)
        return column
    if instants:
        column.instants = _text_instants(arr)
    return column


def _text_instants(arr: pa.Array | pa.ChunkedArray) -> Instants | None:
    """ISO-8601 strings as instants; None when any value is not a real date (2024-13-01)."""
    zoned = pc.fill_null(pc.match_substring_regex(arr, _ZONED_PATTERN), False)
    unit = "ns" if pc.any(pc.match_substring_regex(arr, r"\.[0-9]{7}")).as_py() else "us"
    try:
        naive = pc.cast(
            pc.if_else(zoned, pa.scalar(None, pa.large_string()), arr), pa.timestamp(unit)
        )
        aware = pc.cast(
            pc.if_else(zoned, arr, pa.scalar(None, pa.large_string())), pa.timestamp(unit, "UTC")
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    merged = pc.if_else(zoned, aware.cast(pa.timestamp(unit)), naive)
    return _instants(merged)


def _instants(arr: pa.Array | pa.ChunkedArray) -> Instants | None:
    """Microseconds (and nanoseconds) of dates and timestamps; infinity (DuckDB's int32/int64
    extremes) as +-INT64_MAX microseconds, so an infinite DATE equals an infinite TIMESTAMP.
    None when a finite value does not fit in int64 microseconds (a date past year 294,000)."""
    typ = arr.type
    null = _null_mask(arr)
    if pa.types.is_date(typ):
        days = arr.cast(pa.date32()).cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False)
        return _with_infinity(days.astype(np.int64), US_PER_DAY, INT32_MAX, null)
    raw = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    if typ.unit == "ns":
        us = np.floor_divide(raw, 1000)
        infinite = (np.abs(raw) == INT64_MAX) & ~null
        us[infinite] = raw[infinite]
        return Instants(us=us, ns=raw)
    return _with_infinity(raw, US_PER[typ.unit], INT64_MAX, null)


def _with_infinity(
    raw: np.ndarray, factor: int, infinity: int, null: np.ndarray
) -> Instants | None:
    infinite = (np.abs(raw) == infinity) & ~null
    finite = np.where(infinite, 0, raw)
    us = _scaled(finite, factor)
    if us is None:
        return None
    us[infinite] = np.sign(raw[infinite]) * INT64_MAX
    return Instants(us=us)


def _scaled(raw: np.ndarray, factor: int) -> np.ndarray | None:
    """``raw * factor`` as int64, or None when a value would overflow (numpy would wrap)."""
    if factor == 1:
        return raw.copy()
    limit = INT64_MAX // factor
    if len(raw) and (raw.max() > limit or raw.min() < -limit):
        return None
    scaled: np.ndarray = raw * factor
    return scaled
