"""Typed results from any engine: Arrow tables with Decimal, dates, time zones, NULLs and
duplicate column names kept, fetched in chunks up to ``max_rows``.

DuckDB hands over Arrow batches directly (decoded by ``sqlbench.engines.arrow_values``); DB-API
drivers hand over Python rows, which become Arrow columns in ``sqlbench.engines.rows``. pandas
conversions that lose types (DuckDB's ``.df()`` turns DECIMAL into float64 and renames duplicate
columns) are never used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa

from sqlbench.engines.arrow_values import normalize_table
from sqlbench.engines.rows import rows_to_table
from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.text import one_line

__all__ = [
    "FETCH_CHUNK_ROWS",
    "concat_batches",
    "driver_message",
    "fetch_rows",
    "normalize_table",
    "rows_to_table",
    "timed_out",
    "too_many_rows",
]

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


def driver_message(message: str) -> str:
    """A driver's error message as one line: the text before any ``LINE n:`` excerpt, through
    ``sqlbench.text.one_line`` (whitespace collapsed, long messages shortened).

    Example:
        >>> driver_message('Catalog Error: No x!\\nDid you mean "y"?\\n\\nLINE 1: ...')
        'Catalog Error: No x! Did you mean "y"?'
    """
    kept: list[str] = []
    for line in message.splitlines():
        if line.lstrip().startswith("LINE ") or line.strip() == "^":
            break
        kept.append(line)
    return one_line(" ".join(kept).strip() or message, _MAX_MESSAGE)


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


def concat_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> pa.Table:
    """One table from record batches (column names may repeat)."""
    return normalize_table(pa.Table.from_batches(list(batches), schema=schema))
