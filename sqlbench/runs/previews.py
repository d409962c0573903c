"""Capped, JSON-safe previews of result sets, with the rows that differ marked.

A run keeps previews, never full results, so memory and the store stay small whatever the
result sizes. The rows shown are the first ones plus (up to half the cap) differing rows from
further down, so a difference is visible even in a long result.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from json.encoder import encode_basestring
from typing import Any, NamedTuple

import pyarrow as pa

from sqlbench.compare import Comparison
from sqlbench.engines.arrow_values import display_values
from sqlbench.engines.base import ResultSet
from sqlbench.records.run import Difference, JsonValue, Preview

PREVIEW_ROWS = 20
"""Rows kept per preview."""


def make_preview(
    result: ResultSet,
    differing: Iterable[int] = (),
    *,
    differing_count: int | None = None,
    limit: int = PREVIEW_ROWS,
) -> Preview:
    """A preview of ``result``: at most ``limit`` rows, those in ``differing`` marked.

    Args:
        result: The full result.
        differing: 0-based positions of rows that found no partner on the other side (the
            comparison may list only the first few).
        differing_count: How many rows found no partner in all; default ``len(differing)``.
        limit: Rows to keep.
    """
    total = result.num_rows
    marked = sorted({i for i in differing if 0 <= i < total})
    later = [i for i in marked if i >= limit][: limit // 2]
    if later:  # rows from further down: never contiguous with the head
        picks = sorted(set(range(min(total, limit - len(later)))) | set(later))
        table = result.table.take(picks)
    else:
        picks = list(range(min(total, limit)))
        table = result.table.slice(0, len(picks))  # the first rows: no copy
    columns = [
        [v if type(v) in _AS_IS else json_safe(v) for v in display_values(column)]
        for column in table.columns
    ]
    rows = [list(row) for row in zip(*columns, strict=True)] if columns else [[] for _ in picks]
    marked_set = set(marked)
    fields = {
        "columns": list(result.table.column_names),
        "types": [str(field.type) for field in result.table.schema],
        "rows": rows,
        "row_numbers": picks,
        "differs": [i in marked_set for i in picks],
        "total_rows": total,
        "differing_rows": max(len(marked), differing_count or 0),
    }
    if type(fields["differing_rows"]) is int and all(type(i) is int for i in marked):
        return _validated_already(fields)
    return Preview(**fields)


def _validated_already(fields: dict[str, Any]) -> Preview:
    """The ``Preview`` that ``Preview(**fields)`` gives, made without validating ``fields``
    again (a third of ``make_preview``'s CPU, and the copies it allocates): ``make_preview``
    calls it only when each value is already what validation would return, the same object:
    a new list of ``str`` (Arrow's names and type names), of lists of values (``Any``: kept as
    they are), of ``int`` and of ``bool``, and ``int`` counts. Every field is given, so the
    fields set are all of them, as when validated; ``extra="forbid"`` and no private
    attributes leave ``__pydantic_extra__`` and ``__pydantic_private__`` None.
    ``tests/runs/test_previews.py`` checks it against validation."""
    preview = Preview.__new__(Preview)
    object.__setattr__(preview, "__dict__", fields)
    object.__setattr__(preview, "__pydantic_fields_set__", set(fields))
    object.__setattr__(preview, "__pydantic_extra__", None)
    object.__setattr__(preview, "__pydantic_private__", None)
    return preview


_AS_IS = frozenset({type(None), bool, int, str})
"""Types ``json_safe`` returns as they are (checked first: most preview values are these)."""


def result_fingerprint(result: ResultSet) -> str:
    """A hash of a result's rows that ignores row order, column names and how a number is
    typed (``6``, ``6.0`` and ``Decimal('6.00')`` hash alike): what a person reads as the same
    answer hashes the same, so a changed fingerprint between two runs is a changed answer.

    Example:
        >>> import pyarrow as pa
        >>> a = ResultSet(pa.table({"n": [1, 2], "s": ["x", "y"]}))
        >>> b = ResultSet(pa.table({"m": [2.0, 1.0], "t": ["y", "x"]}))
        >>> result_fingerprint(a) == result_fingerprint(b)
        True
        >>> result_fingerprint(a) == result_fingerprint(ResultSet(pa.table({"n": [1, 3]})))
        False
    """
    table = result.table
    as_text: set[int] = set()  # columns holding a value Python cannot (see display_values)
    while True:
        try:
            rows = _row_texts(table, as_text)
            break
        except _NotPython as err:
            as_text.add(err.column)
    # Text without lone surrogates (Arrow's is valid UTF-8) sorts by code point as its UTF-8
    # bytes do, so the rows are sorted as text and encoded a batch at a time.
    rows.sort()
    digest = hashlib.sha256(f"{table.num_columns}:{table.num_rows}\n".encode())
    for start in range(0, len(rows), FINGERPRINT_BATCH_ROWS):
        batch = rows[start : start + FINGERPRINT_BATCH_ROWS]
        digest.update(("\n".join(batch) + "\n").encode("utf-8"))
    return digest.hexdigest()[:16]


FINGERPRINT_BATCH_ROWS = 8192
"""Rows turned into Python values at a time by ``result_fingerprint``: only each row's JSON
text is kept, not every value as a Python object (3,000,000 narrow rows held gigabytes that
way)."""


class _NotPython(Exception):
    def __init__(self, column: int) -> None:
        self.column = column


def _row_texts(table: pa.Table, as_text: set[int]) -> list[str]:
    """Each row's canonical JSON (``json.dumps`` of the row's ``_canonical`` values, compact,
    not ASCII-escaped); columns in ``as_text`` as Arrow's text of each value (what
    ``display_values`` gives for the whole column when one value is past Python).

    Built column by column from each value's own JSON text and joined with ``str.join``: one
    ``json.dumps`` per row made a new encoder each time (0.10 s CPU for a 21,056 x 3 text
    result, against 0.056 s for SQLite to fetch it; now about a seventh of that).
    """
    rows: list[str] = []
    for start in range(0, table.num_rows, FINGERPRINT_BATCH_ROWS):
        part = table.slice(start, FINGERPRINT_BATCH_ROWS)
        columns = []
        for index, column in enumerate(part.columns):
            if index in as_text:
                values = column.cast(pa.string()).to_pylist()
            else:
                try:
                    values = column.to_pylist()
                except (OverflowError, ValueError) as err:
                    raise _NotPython(index) from err
            if index in as_text or column.type.id in _TEXT_TYPE_IDS:
                columns.append([_NULL if v is None else _json_text(v) for v in values])
            else:
                columns.append(list(map(_value_json, values)))
        rows += ["[" + ",".join(row) + "]" for row in zip(*columns, strict=True)]
    return rows


_json_text = encode_basestring
"""A string's JSON, as ``json.dumps(..., ensure_ascii=False)`` writes it."""
_json_any = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""Any JSON value's text, as ``json.dumps(..., separators=(",", ":"), ensure_ascii=False)``."""
_NULL = "null"
_TEXT_TYPE_IDS = frozenset({pa.string().id, pa.large_string().id, pa.string_view().id})
"""Arrow types whose values are ``str`` or None."""
_EXACT_FLOATS = 2.0**53


def _value_json(value: Any) -> str:
    """The JSON text of ``_canonical(value)``, without building that value for the commonest
    types (exact ``str``, ``int``, ``float``, None).

    Example:
        >>> [_value_json(v) for v in ("é", 6, 6.0, 0.1 + 0.2, float("nan"), None, True)]
        ['"é"', '6', '6', '0.3', '"NaN"', 'null', 'true']
    """
    kind = type(value)
    if kind is str:
        return _json_text(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return '"NaN"'
        if value in (math.inf, -math.inf):
            return '"Infinity"' if value > 0 else '"-Infinity"'
        if value.is_integer() and abs(value) < _EXACT_FLOATS:
            return int.__repr__(int(value))
        return float.__repr__(float(f"{value:.12g}"))
    if value is None:
        return _NULL
    return _json_any(_canonical(value))


def _canonical(value: Any) -> JsonValue:
    """One text per value a person reads as the same (numbers by value, at 12 digits)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float | Decimal):
        number = float(value) if not isinstance(value, int) else value
        if isinstance(number, float):
            if math.isnan(number) or math.isinf(number):
                return json_safe(number)
            if number.is_integer() and abs(number) < 2**53:
                return int(number)
            return float(f"{number:.12g}")
        return number
    return json_safe(value)


def json_safe(value: Any) -> JsonValue:
    """A value ``json.dumps`` accepts, readable in ``sqlbench show``.

    Decimal and temporal values become their exact text; non-finite floats become text
    (``"NaN"``, ``"Infinity"``); bytes become base64 with a ``base64:`` prefix.

    Example:
        >>> from decimal import Decimal
        >>> json_safe(Decimal("1.50")), json_safe(float("nan")), json_safe([1, None])
        ('1.50', 'NaN', [1, None])
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "base64:" + base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    return str(value)


class Unmatched(NamedTuple):
    """Rows of each side that a comparison found no partner for."""

    expected: list[int]
    """Expected row positions (the first few)."""
    actual: list[int]
    expected_count: int
    """How many expected rows in all."""
    actual_count: int


def unmatched_rows(comparison: Comparison | None) -> Unmatched:
    """The rows a comparison found no partner for (none when there was no comparison)."""
    if comparison is None:
        return Unmatched([], [], 0, 0)
    details = comparison.details
    expected = list(details.expected_unmatched_rows)
    actual = list(details.actual_unmatched_rows)
    return Unmatched(
        expected,
        actual,
        max(len(expected), details.expected_unmatched_count),
        max(len(actual), details.actual_unmatched_count),
    )


def difference_of(comparison: Comparison | None) -> Difference | None:
    """The untruncated record of what a comparison that did not pass found."""
    if comparison is None or comparison.passed:
        return None
    d = comparison.details
    return Difference(
        problem=d.problem.value,
        reason=comparison.reason,
        expected_rows=d.expected_rows,
        actual_rows=d.actual_rows,
        expected_missing=d.expected_unmatched_count,
        agent_unexpected=d.actual_unmatched_count,
        expected_example=d.expected_examples[0] if d.expected_examples else None,
        agent_example=d.actual_examples[0] if d.actual_examples else None,
        missing_columns=[g.expected_name for g in d.column_gaps],
        near_misses=[n.message for n in d.near_misses],
    )
