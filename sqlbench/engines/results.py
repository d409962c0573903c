"""Typed results from any engine: Arrow tables with Decimal, dates, time zones, NULLs and
duplicate column names kept, fetched in chunks up to ``max_rows``.

DuckDB hands over Arrow batches directly; DB-API drivers hand over Python rows, which become
Arrow columns here. pandas conversions that lose types (DuckDB's ``.df()`` turns DECIMAL into
float64 and renames duplicate columns) are never used.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sqlbench.errors import QueryError, QueryErrorKind

FETCH_CHUNK_ROWS = 10_000
"""Rows fetched per round trip (DB-API ``fetchmany``, DuckDB Arrow batches)."""

_MAX_MESSAGE = 400


def too_many_rows(max_rows: int) -> QueryError:
    """The error for a result cut at ``max_rows``."""
    return QueryError(
        QueryErrorKind.TOO_MANY_ROWS,
        f"the result has more than max_rows={max_rows} rows; it was cut there "
        "and not compared (raise run.max_rows in sqlbench.yml if that many rows "
        "are expected)",
    )


def timed_out(timeout_s: float) -> QueryError:
    """The error for a query stopped at its timeout."""
    return QueryError(
        QueryErrorKind.TIMEOUT, f"the query ran past its {timeout_s:g} s timeout and was stopped"
    )


def one_line(message: str) -> str:
    """A driver's error message as one line: the text before any ``LINE n:`` excerpt, with
    whitespace collapsed and long messages shortened.

    Example:
        >>> one_line('Catalog Error: Table x does not exist!\\nDid you mean "y"?\\n\\nLINE 1: ...')
        'Catalog Error: Table x does not exist! Did you mean "y"?'
    """
    kept: list[str] = []
    for line in message.splitlines():
        if line.lstrip().startswith("LINE ") or line.strip() == "^":
            break
        kept.append(line)
    flat = " ".join(" ".join(kept).split()) or " ".join(message.split())
    return flat if len(flat) <= _MAX_MESSAGE else flat[: _MAX_MESSAGE - 1] + "…"


def fetch_rows(
    fetchmany: Callable[[int], Sequence[Sequence[Any]]],
    *,
    max_rows: int,
    deadline: float,
    timeout_s: float,
) -> list[Sequence[Any]]:
    """Rows from a DB-API cursor, ``FETCH_CHUNK_ROWS`` at a time, refusing more than
    ``max_rows`` (at most ``max_rows + 1`` rows are ever held) and stopping at ``deadline``
    (a ``time.monotonic()`` value) between chunks.

    Raises:
        QueryError: TOO_MANY_ROWS or TIMEOUT.
    """
    rows: list[Sequence[Any]] = []
    while True:
        if time.monotonic() > deadline:
            raise timed_out(timeout_s)
        chunk = fetchmany(min(FETCH_CHUNK_ROWS, max_rows + 1 - len(rows)))
        if not chunk:
            return rows
        rows.extend(chunk)
        if len(rows) > max_rows:
            raise too_many_rows(max_rows)


def rows_to_table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> pa.Table:
    """An Arrow table from DB-API rows, one typed column per name (names may repeat).

    Each column's Arrow type is inferred from its values: Decimal stays decimal, date stays
    date32, tz-aware datetimes stay tz-aware. UUIDs become text. A column whose values have no
    single Arrow type (SQLite's dynamic typing: 1 and 'a' in one column) becomes text; a
    numeric column mixing int, float and Decimal becomes float64 when a float is present, else
    decimal.

    Example:
        >>> from decimal import Decimal
        >>> t = rows_to_table(["x", "x"], [(Decimal("1.50"), 1), (None, 2)])
        >>> t.column_names, str(t.schema.field(0).type), t.num_rows
        (['x', 'x'], 'decimal128(3, 2)', 2)
    """
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    arrays = [_to_array(list(values)) for values in columns]
    return pa.Table.from_arrays(arrays, names=list(names))


def _to_array(values: list[Any]) -> pa.Array:
    values = [str(v) if isinstance(v, uuid.UUID) else v for v in values]
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        pass
    present = [v for v in values if v is not None]
    if present and all(
        isinstance(v, int | float | Decimal) and not isinstance(v, bool) for v in present
    ):
        return _numeric_array(values)
    return pa.array([None if v is None else _as_text(v) for v in values], type=pa.string())


def _numeric_array(values: list[Any]) -> pa.Array:
    if any(isinstance(v, float) or (isinstance(v, Decimal) and not v.is_finite()) for v in values):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    decimals = [None if v is None else Decimal(v) for v in values]
    try:
        return pa.array(decimals)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return pa.array([None if v is None else str(v) for v in decimals], type=pa.string())


def _as_text(value: Any) -> str:
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, default=str, sort_keys=True)
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return str(value)


def normalize_table(table: pa.Table) -> pa.Table:
    """``table`` with types the comparison reads as values: dictionary-encoded columns (DuckDB
    ENUMs) decoded to their value type and Arrow extension types (UUID) turned into text.

    Example:
        >>> t = pa.table({"e": pa.array(["a", "b", "a"]).dictionary_encode()})
        >>> str(normalize_table(t).schema.field(0).type)
        'string'
    """
    arrays: list[pa.ChunkedArray] = []
    changed = False
    for column in table.columns:
        fixed = _normalize_column(column)
        changed = changed or fixed is not column
        arrays.append(fixed)
    if not changed:
        return table
    return pa.Table.from_arrays(arrays, names=table.column_names)


def _normalize_column(column: pa.ChunkedArray) -> pa.ChunkedArray:
    kind = column.type
    if pa.types.is_dictionary(kind):
        return pc.cast(column, kind.value_type)
    if isinstance(kind, pa.ExtensionType):
        storage = pa.chunked_array(
            [chunk.storage for chunk in column.chunks], type=kind.storage_type
        )
        if kind.extension_name == "arrow.uuid":
            return pa.chunked_array(
                [
                    [None if v is None else str(uuid.UUID(bytes=v)) for v in chunk.to_pylist()]
                    for chunk in storage.chunks
                ],
                type=pa.string(),
            )
        return storage
    return column


def concat_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> pa.Table:
    """One table from record batches (column names may repeat)."""
    return normalize_table(pa.Table.from_batches(list(batches), schema=schema))
