"""The typed result column: what it holds (its kind) and the views it can be compared in.

A column is addressed by position, never by name. Each one has a :class:`Kind` and the views its
values can be compared in: an integer column also has a float view; a text column whose every
value is a plain decimal number also has a numeric view; a text column of ISO-8601 dates or
timestamps also has an instant view. Array views hold a filler (0) where the value is NULL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from sqlbench.compare.exactnum import ExactRows, from_ints
from sqlbench.compare.pyvalues import py_values
from sqlbench.compare.values import tagged_key


class Kind(StrEnum):
    """What a column holds, after looking at its type and (for text) its values."""

    NULL = "null"
    """No non-NULL value (or no rows): matches a NULL or empty column of any kind."""
    INT = "int"
    """Integers (int, bool, Decimal without fraction): exact among themselves."""
    FLOAT = "float"
    """Other numbers (float, Decimal with fraction): compared with the tolerances."""
    TEXT = "text"
    """Strings; may also have a numeric or an instant view."""
    INSTANT = "instant"
    """Dates and timestamps, as microseconds (UTC for time-zone-aware values)."""
    TIME = "time"
    """Times of day (nanoseconds since midnight)."""
    DURATION = "duration"
    """Durations (nanoseconds)."""
    BYTES = "bytes"
    """Binary values, exact."""
    MIXED = "mixed"
    """Values of several Python types in one column, nested values, or dates and durations past
    int64 micro/nanoseconds: compared exactly, value by value."""


@dataclass(frozen=True)
class Instants:
    """Dates/timestamps of one column: microseconds since 1970-01-01, nanoseconds if known."""

    us: np.ndarray
    ns: np.ndarray | None = None


@dataclass(eq=False)
class Column:
    """One result column with its comparable views. Array views hold a filler where NULL."""

    position: int
    name: str
    kind: Kind
    null: np.ndarray
    """True where the value is NULL (NaN counts as NULL)."""
    source: pa.Array | pa.ChunkedArray | list[object] | pd.Series
    """The values as given: an Arrow array, a pandas Series, or Python objects."""
    ints: np.ndarray | None = None
    """Exact integers: int64, or object (Python ints) when a value does not fit in int64."""
    floats_: np.ndarray | None = None
    text: pa.Array | pa.ChunkedArray | None = None
    """large_string values (TEXT), possibly chunked."""
    instants: Instants | None = None
    other: np.ndarray | None = None
    """int64 nanoseconds for TIME and DURATION."""
    binary: pa.Array | None = None
    tagged: list[str] | None = field(default=None)
    exact_: ExactRows | None = None
    """Rows of a non-integer numeric view whose float64 is not their value, with that value."""

    @cached_property
    def floats(self) -> np.ndarray | None:
        """float64 view of a numeric column (also of an integer or numeric-text column)."""
        if self.floats_ is not None:
            return self.floats_
        if self.ints is None:
            return None
        if self.ints.dtype == object:
            return np.array([float(v) for v in self.ints], dtype=np.float64)
        return self.ints.astype(np.float64)

    @cached_property
    def exact(self) -> ExactRows | None:
        """Rows whose float64 view is not their value (an integer past 2**53, a decimal of
        more than 15 significant digits), with their exact values; None when there are none."""
        if self.exact_ is not None or self.ints is None:
            return self.exact_
        return from_ints(self.ints, self.null)

    def pyvalues(self) -> list[object]:
        """All values as Python objects (for the exact mixed-type view); never raises."""
        source = self.source
        if isinstance(source, pd.Series):
            return list(source.tolist())
        return source if isinstance(source, list) else py_values(source)

    def values_at(self, rows: list[int]) -> list[object]:
        """The values of a few rows as Python objects (for examples in reasons); never raises:
        values Python cannot hold (year 12024, infinity) come as text."""
        source = self.source
        if isinstance(source, pd.Series):
            return list(source.iloc[rows].tolist())
        if isinstance(source, list):
            return [source[r] for r in rows]
        return py_values(source.take(pa.array(rows, type=pa.int64())))

    @cached_property
    def null_count(self) -> int:
        """Number of NULLs."""
        return int(np.count_nonzero(self.null))

    @property
    def rows(self) -> int:
        """Number of rows."""
        return len(self.null)

    @property
    def numeric(self) -> bool:
        """True when the column can be compared by numeric value."""
        return self.ints is not None or self.floats_ is not None

    def tagged_keys(self) -> list[str]:
        """Exact, type-tagged keys of every value (for the mixed-type view)."""
        if self.tagged is None:
            self.tagged = [tagged_key(v) for v in self.pyvalues()]
        return self.tagged
