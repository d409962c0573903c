"""Arrow columns as the comparison reads them: every value as the number, instant or text it is.

DuckDB exports with ``arrow_lossless_conversion`` on, so types Arrow has no exact equivalent for
arrive as ``arrow.opaque`` extension arrays carrying DuckDB's own bytes, and are decoded here:

- ``HUGEINT`` / ``UHUGEINT`` (128-bit integers) become ``decimal128(38, 0)``, or
  ``decimal256(39, 0)`` when a value needs 39 digits (without lossless conversion DuckDB hands
  UHUGEINT over as a *signed* decimal128, so 2^128-1 read as -1);
- ``BIGNUM`` (arbitrary-precision integers, opaque bytes otherwise) becomes a decimal of scale 0
  up to 76 digits, and plain digit text beyond (the comparison reads such text as integers);
- ``TIME WITH TIME ZONE`` becomes its UTC time of day (``time64``): ``10:00:00+02`` is
  ``08:00:00`` (DuckDB's default export keeps the local clock time and drops the offset).

Dictionary columns (DuckDB ENUMs) become their values, ``arrow.uuid`` becomes text, and any other
extension type its storage. Nested columns (lists, structs, maps, unions) are decoded inside.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MICROS_PER_DAY = 86_400_000_000
_TIMETZ_MAX_OFFSET_S = 16 * 60 * 60 - 1
"""DuckDB stores a TIMETZ offset as ``this - offset_seconds`` in the low 24 bits."""
_DECIMAL128_LIMIT = 10**38
_DECIMAL256_LIMIT = 10**76


def display_values(column: pa.Array | pa.ChunkedArray) -> list[Any]:
    """A column's values as Python objects for previews, never raising.

    Values Python cannot hold (dates past year 9999, DuckDB's ``infinity`` dates and
    timestamps) make the whole column come back as Arrow's text of each value instead of
    raising ``OverflowError``: a preview shows them, it does not compare them.

    Example:
        >>> display_values(pa.array([1, None]))
        [1, None]
        >>> display_values(pa.array([3_650_000], pa.date32()))
        ['11963-05-13']
    """
    try:
        values: list[Any] = column.to_pylist()
    except (OverflowError, ValueError):
        values = column.cast(pa.string()).to_pylist()
    return values


def normalize_table(table: pa.Table) -> pa.Table:
    """``table`` with every column in types the comparison reads as values (see the module
    docstring); names and positions are kept, duplicates included. Columns that need nothing
    are returned as they are.

    Example:
        >>> t = pa.table({"e": pa.array(["a", "b", "a"]).dictionary_encode()})
        >>> str(normalize_table(t).schema.field(0).type)
        'string'
    """
    arrays: list[pa.ChunkedArray] = []
    changed = False
    for column in table.columns:
        if _needs_decoding(column.type):
            arrays.append(_normalize_column(column))
            changed = True
        else:
            arrays.append(column)
    if not changed:
        return table
    return pa.Table.from_arrays(arrays, names=table.column_names)


def _normalize_column(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if column.num_chunks == 0:
        return pa.chunked_array([], type=normalize_array(pa.nulls(0, column.type)).type)
    chunks = [normalize_array(chunk) for chunk in column.chunks]
    if len({chunk.type for chunk in chunks}) > 1:
        # Chunks decoded to different widths (one holds a 39-digit integer): decode them as one.
        chunks = [normalize_array(pa.concat_arrays(column.chunks))]
    return pa.chunked_array(chunks, type=chunks[0].type)


def normalize_array(arr: pa.Array) -> pa.Array:
    """One array decoded as ``normalize_table`` decodes a column."""
    kind = arr.type
    if not _needs_decoding(kind):
        return arr
    if pa.types.is_dictionary(kind):
        return normalize_array(pc.cast(arr, kind.value_type))
    if isinstance(kind, pa.BaseExtensionType):
        return _decode_extension(arr)
    if arr.offset:
        arr = pa.concat_arrays([arr])  # the rebuilt parent below reads its children unsliced
    children = [normalize_array(child) for child in _children(arr)]
    rebuilt = _with_children(kind, [child.type for child in children])
    return pa.Array.from_buffers(
        rebuilt,
        len(arr),
        arr.buffers()[: kind.num_buffers],
        null_count=arr.null_count,
        children=children,
    )


def _needs_decoding(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind) or isinstance(kind, pa.BaseExtensionType):
        return True
    return any(_needs_decoding(kind.field(i).type) for i in range(kind.num_fields))


def _children(arr: pa.Array) -> list[pa.Array]:
    kind = arr.type
    if (
        pa.types.is_list(kind)
        or pa.types.is_large_list(kind)
        or pa.types.is_fixed_size_list(kind)
        or pa.types.is_map(kind)
    ):
        return [arr.values]
    return [arr.field(i) for i in range(kind.num_fields)]


def _with_children(kind: pa.DataType, types: list[pa.DataType]) -> pa.DataType:
    """``kind`` with its child fields' types replaced by ``types``."""
    fields = [kind.field(i).with_type(t) for i, t in enumerate(types)]
    if pa.types.is_map(kind):
        entries = fields[0].type
        return pa.map_(entries.field(0), entries.field(1), keys_sorted=kind.keys_sorted)
    if pa.types.is_list(kind):
        return pa.list_(fields[0])
    if pa.types.is_large_list(kind):
        return pa.large_list(fields[0])
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(fields[0], kind.list_size)
    if pa.types.is_struct(kind):
        return pa.struct(fields)
    if pa.types.is_union(kind):
        return pa.union(fields, kind.mode, list(kind.type_codes))
    raise TypeError(f"no nested Arrow type {kind} is known to hold extension values")


def _decode_extension(arr: pa.ExtensionArray) -> pa.Array:
    kind = arr.type
    storage: pa.Array = arr.storage
    if kind.extension_name == "arrow.uuid":
        texts = [None if v is None else str(uuid.UUID(bytes=v)) for v in storage.to_pylist()]
        return pa.array(texts, type=pa.string())
    if isinstance(kind, pa.OpaqueType) and kind.vendor_name == "DuckDB":
        decoder = _DUCKDB_DECODERS.get(kind.type_name)
        if decoder is not None:
            return decoder(storage)
    return normalize_array(storage)


def _hugeint(storage: pa.FixedSizeBinaryArray) -> pa.Array:
    return _wide_integers(storage, signed=True)


def _uhugeint(storage: pa.FixedSizeBinaryArray) -> pa.Array:
    return _wide_integers(storage, signed=False)


def _wide_integers(storage: pa.FixedSizeBinaryArray, *, signed: bool) -> pa.Array:
    """128-bit little-endian integers: the same bytes read as ``decimal128(38, 0)`` (no copy)
    when every value has at most 38 digits, else ``decimal256(39, 0)``."""
    words = _words(storage, 2)
    low, high = words[:, 0], words[:, 1]
    sign_fill = (low >> np.uint64(63)) * np.uint64(0xFFFFFFFFFFFFFFFF)
    fits_int64 = (high == sign_fill) if signed else ((high == 0) & (sign_fill == 0))
    valid = _valid(storage)
    big = {
        int(i): _int128(int(low[i]), int(high[i]), signed=signed)
        for i in np.flatnonzero(~fits_int64 & valid)
    }
    if all(abs(v) < _DECIMAL128_LIMIT for v in big.values()):
        return pa.Array.from_buffers(
            pa.decimal128(38, 0),
            len(storage),
            storage.buffers()[:2],
            null_count=storage.null_count,
            offset=storage.offset,
        )
    values = [
        None
        if not ok
        else Decimal(big[i] if i in big else _int128(int(lo), int(hi), signed=signed))
        for i, (ok, lo, hi) in enumerate(zip(valid, low, high, strict=True))
    ]
    return pa.array(values, type=pa.decimal256(39, 0))


def _int128(low: int, high: int, *, signed: bool) -> int:
    value = (high << 64) | low
    return value - (1 << 128) if signed and high >> 63 else value


def _time_tz(storage: pa.FixedSizeBinaryArray) -> pa.Array:
    """DuckDB's TIMETZ (``micros << 24 | (MAX_OFFSET - offset_seconds)``) as the UTC time of
    day; a value that crosses midnight wraps (``01:00:00+02`` is ``23:00:00``)."""
    bits = _words(storage, 1)[:, 0]
    micros = (bits >> np.uint64(24)).astype(np.int64)
    offset_s = _TIMETZ_MAX_OFFSET_S - (bits & np.uint64(0xFFFFFF)).astype(np.int64)
    utc = micros - offset_s * 1_000_000
    # 24:00:00+00 stays 24:00:00, as DuckDB's TIME exports it; anything else wraps into the day.
    utc = np.where((utc < 0) | (utc > _MICROS_PER_DAY), utc % _MICROS_PER_DAY, utc)
    mask = None if storage.null_count == 0 else ~_valid(storage)
    return pa.array(utc, type=pa.int64(), mask=mask).view(pa.time64("us"))


def _bignum(storage: pa.BinaryArray) -> pa.Array:
    return integers_array([None if v is None else bignum_value(v) for v in storage.to_pylist()])


def bignum_value(blob: bytes) -> int:
    """The integer in DuckDB's BIGNUM (VARINT) encoding: a 3-byte header whose top bit is set
    for non-negative numbers, then the magnitude big-endian; negative numbers store header and
    magnitude with every bit inverted.

    Example:
        >>> bignum_value(bytes([0x80, 0, 1, 5])), bignum_value(bytes([0x7F, 0xFF, 0xFE, 0xFA]))
        (5, -5)
    """
    magnitude = int.from_bytes(blob[3:], "big")
    if blob[0] & 0x80:
        return magnitude
    return -(~magnitude & ((1 << (8 * (len(blob) - 3))) - 1))


def integers_array(values: list[int | None]) -> pa.Array:
    """Exact integers as Arrow: ``decimal128(38, 0)`` up to 38 digits, ``decimal256(76, 0)`` up
    to 76, plain digit text beyond (which the comparison reads as integers).

    Example:
        >>> str(integers_array([1, None, -(10**40)]).type)
        'decimal256(76, 0)'
    """
    largest = max((abs(v) for v in values if v is not None), default=0)
    if largest < _DECIMAL128_LIMIT:
        return pa.array([None if v is None else Decimal(v) for v in values], pa.decimal128(38, 0))
    if largest < _DECIMAL256_LIMIT:
        return pa.array([None if v is None else Decimal(v) for v in values], pa.decimal256(76, 0))
    return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def _words(storage: pa.FixedSizeBinaryArray, count: int) -> np.ndarray:
    """The fixed-size values as rows of ``count`` little-endian uint64 words."""
    data = storage.buffers()[1]
    if data is None:  # only possible for an empty array
        return np.zeros((0, count), dtype=np.uint64)
    raw = np.frombuffer(data, dtype="<u8", count=count * (storage.offset + len(storage)))
    return raw.reshape(-1, count)[storage.offset :]


def _valid(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


_DUCKDB_DECODERS: dict[str, Callable[[pa.Array], pa.Array]] = {
    "hugeint": _hugeint,
    "uhugeint": _uhugeint,
    "bignum": _bignum,
    "varint": _bignum,
    "time_tz": _time_tz,
}
"""DuckDB's opaque Arrow types by ``type_name``; others (``bit``) become their storage."""
