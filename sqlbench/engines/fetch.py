"""Typed results from any engine: Arrow tables with Decimal, dates, time zones, NULLs and
duplicate column names kept, fetched in chunks up to ``max_rows``.

DuckDB hands over Arrow batches directly (decoded by ``sqlbench.engines.arrow_values``); DB-API
drivers hand over Python rows, which become Arrow columns in
``sqlbench.engines.dbapi_arrow``. pandas conversions that lose types (DuckDB's ``.df()`` turns
DECIMAL into float64 and renames duplicate columns) are never used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa

from sqlbench.engines.arrow_values import normalize_table
from sqlbench.engines.dbapi_arrow import rows_to_table
from sqlbench.errors import QueryError, QueryErrorKind
from sqlbench.text import one_line

__all__ = [
    "FETCH_CHUNK_ROWS",
    "concat_batches",
    "driver_message",
    "fetch_rows",
    "normalize_table",
    "result_bytes",
    "rows_to_table",
    "time_spent",
    "timed_out",
    "too_large",
    "too_many_rows",
]

FETCH_CHUNK_ROWS = 10_000
"""Rows fetched per round trip (DB-API ``fetchmany``, DuckDB Arrow batches)."""

_MAX_MESSAGE = 400
_FIRST_CHUNK_ROWS = 64
"""Rows asked for first, before the width of a row is known (a row may be megabytes)."""
_CHUNK_BYTES = 8 * 2**20
"""Bytes aimed at per later chunk: rows per chunk follow the rows' measured width."""


def too_large(
    max_bytes: int | None, reached: int | None = None, *, out_of_memory: str = ""
) -> QueryError:
    """The error for a result past ``max_bytes`` (``reached``: the bytes held when it was
    stopped), or for an engine out of memory running it (``out_of_memory``: its message).

    Example:
        >>> too_large(256 * 2**20, 300 * 2**20).message[:62]
        'the result reached 300 MB, over run.max_result_mb=256; it was '
    """
    if out_of_memory:
        return QueryError(
            QueryErrorKind.TOO_LARGE,
            f"the database stopped it at its memory or size limit ({out_of_memory})",
        )
    got = f"reached {_mib(reached)} MB" if reached is not None else "is larger than that"
    return QueryError(
        QueryErrorKind.TOO_LARGE,
        f"the result {got}, over run.max_result_mb={_mib(max_bytes)}; it was stopped there "
        "and not compared (raise run.max_result_mb in sqlbench.yml if results that large "
        "are expected)",
    )


def _mib(size: int | None) -> str:
    value = (size or 0) / 2**20
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


def result_bytes(rows: Sequence[Sequence[Any]]) -> int:
    """About how many bytes ``rows`` of DB-API values hold: text and binary values their
    length, anything else 16 bytes.

    Example:
        >>> result_bytes([("abc", 1), (b"xy", None)])
        37
    """
    total = 0
    for row in rows:
        for value in row:
            total += len(value) if isinstance(value, _MEASURED) else 16
    return total


_MEASURED = (str, bytes, bytearray)
"""Values ``result_bytes`` counts by length (a tuple: ``isinstance`` with one is 2.5 times
faster than with ``str | bytes | bytearray``, and this runs for every value fetched)."""


def too_many_rows(max_rows: int) -> QueryError:
    """The error for a result cut at ``max_rows``."""
    return QueryError(
        QueryErrorKind.TOO_MANY_ROWS,
        f"the result has more than max_rows={max_rows} rows; it was cut there "
        "and not compared (raise run.max_rows in sqlbench.yml if that many rows "
        "are expected)",
    )


def timed_out(timeout_s: float, *, checking: bool = False) -> QueryError:
    """The error for a query stopped at its timeout (``checking``: before it ran, while
    sqlbench parsed and checked it)."""
    if checking:
        return QueryError(
            QueryErrorKind.TIMEOUT,
            f"parsing and checking the SQL took its whole {timeout_s:g} s timeout; it was not run",
        )
    return QueryError(
        QueryErrorKind.TIMEOUT, f"the query ran past its {timeout_s:g} s timeout and was stopped"
    )


def time_spent(start: float, timeout_s: float) -> float:
    """Seconds of ``timeout_s`` spent since ``start`` (a ``time.monotonic()`` value) parsing and
    checking agent SQL; the query gets the rest.

    Raises:
        QueryError: TIMEOUT when nothing is left.
    """
    spent = time.monotonic() - start
    if spent >= timeout_s:
        raise timed_out(timeout_s, checking=True)
    return spent


def driver_message(message: str) -> str:
    """A driver's error message as one line: the text before any ``LINE n:`` excerpt, through
    ``sqlbench.text.one_line`` (whitespace collapsed, long messages shortened).

    A line that ends without punctuation ends a sentence: a full stop joins it to the next
    (``Connection refused. Is the server running...``).

    Example:
        >>> driver_message('Catalog Error: No x!\\nDid you mean "y"?\\n\\nLINE 1: ...')
        'Catalog Error: No x! Did you mean "y"?'
        >>> driver_message("failed: Connection refused\\n\\tIs the server running?")
        'failed: Connection refused. Is the server running?'
    """
    kept: list[str] = []
    for line in message.splitlines():
        if line.lstrip().startswith("LINE ") or line.strip() == "^":
            break
        if not line.strip():
            continue
        if kept and not kept[-1].rstrip().endswith(_ENDS_SENTENCE):
            kept[-1] = kept[-1].rstrip() + "."
        kept.append(line)
    return one_line(" ".join(kept).strip() or message, _MAX_MESSAGE)


_ENDS_SENTENCE = (".", "!", "?", ":", ";", ",")
"""What a line of a driver's message may end with and still read on into the next line."""


def fetch_rows(
    fetchmany: Callable[[int], Sequence[Sequence[Any]]],
    *,
    max_rows: int,
    deadline: float,
    timeout_s: float,
    max_bytes: int | None = None,
) -> list[Sequence[Any]]:
    """Rows from a DB-API cursor in chunks, refusing more than ``max_rows`` (at most
    ``max_rows + 1`` rows are ever held) or ``max_bytes`` (counted as ``result_bytes``; a chunk
    is sized from the rows' measured width, so at most about 8 MB past the limit is held),
    and stopping at ``deadline`` (a ``time.monotonic()`` value) between chunks.

    Raises:
        QueryError: TOO_MANY_ROWS, TOO_LARGE or TIMEOUT.
    """
    rows: list[Sequence[Any]] = []
    held = 0
    size = _FIRST_CHUNK_ROWS
    while True:
        if time.monotonic() > deadline:
            raise timed_out(timeout_s)
        chunk = fetchmany(min(size, max_rows + 1 - len(rows)))
        if not chunk:
            return rows
        rows.extend(chunk)
        if len(rows) > max_rows:
            raise too_many_rows(max_rows)
        measured = result_bytes(chunk)
        held += measured
        if max_bytes is not None and held > max_bytes:
            raise too_large(max_bytes, held)
        width = max(1, measured // len(chunk))
        size = max(1, min(FETCH_CHUNK_ROWS, _CHUNK_BYTES // width))


def concat_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> pa.Table:
    """One table from record batches (column names may repeat)."""
    return normalize_table(pa.Table.from_batches(list(batches), schema=schema))
