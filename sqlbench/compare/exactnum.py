"""Numbers whose float64 is not their value, kept exactly for the tolerant comparison.

Numbers meet in the tolerant domain as float64, which is exact for every float, every integer
up to 2**53 and is the faithful reading of a decimal of up to 15 significant digits (DECIMAL
0.1 is the double 0.1). Past that, two different numbers can share a float64: BIGINT
9007199254740993 and DOUBLE 9007199254740992.0, or two DECIMAL(38,1) values ending in 567.5
and 568.5; with ``rel_tol=0, abs_tol=0`` they would compare equal. Such values are listed here
with their exact value (a ``Fraction``), found with a vectorized pre-check so ordinary columns
pay one comparison; the views give them codes of their own and the tolerance is evaluated on
the exact values (``sqlbench.compare.views.Tolerance.close_rows``).
"""

from __future__ import annotations

import decimal
from collections.abc import Iterable
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ExactRows = dict[int, Fraction]
"""Row -> exact value, for the rows whose float64 is not their value."""

_EXACT_INT = 2**53
"""Every integer up to this magnitude is a float64."""
_FAITHFUL_DIGITS = 15
"""A decimal of this many significant digits reads back from its float64 unchanged."""
_FAITHFUL_UNSCALED = 10**_FAITHFUL_DIGITS


def from_ints(ints: np.ndarray, null: np.ndarray) -> ExactRows | None:
    """Integers (int64 or Python ints) that float64 cannot hold.

    Example:
        >>> import numpy as np
        >>> from_ints(np.array([1, 2**53 + 1, 2**60]), np.zeros(3, dtype=bool))
        {1: Fraction(9007199254740993, 1)}
    """
    if ints.dtype != object:
        big = ((ints > _EXACT_INT) | (ints < -_EXACT_INT)) & ~null
        rows: Iterable[int] = np.flatnonzero(big)
    else:
        rows = (k for k in range(len(ints)) if not null[k] and abs(int(ints[k])) > _EXACT_INT)
    return _collect((int(k), Fraction(int(ints[k]))) for k in rows)


def from_unscaled(unscaled: np.ndarray, scale: int, null: np.ndarray) -> ExactRows | None:
    """DECIMAL values given as int64 unscaled integers and a scale (0 to 18)."""
    big = ((unscaled >= _FAITHFUL_UNSCALED) | (unscaled <= -_FAITHFUL_UNSCALED)) & ~null
    return _collect((int(k), Fraction(int(unscaled[k]), 10**scale)) for k in np.flatnonzero(big))


def from_decimals(values: list[object]) -> ExactRows | None:
    """Python values (Decimal, int, float, None) of an object column or a wide DECIMAL."""
    found: list[tuple[int, Fraction]] = []
    for k, v in enumerate(values):
        if isinstance(v, decimal.Decimal) and v.is_finite() and _digits(v) > _FAITHFUL_DIGITS:
            found.append((k, Fraction(v)))
        elif (
            isinstance(v, int | np.integer) and not isinstance(v, bool) and abs(int(v)) > _EXACT_INT
        ):
            found.append((k, Fraction(int(v))))
    return _collect(found)


def from_text(arr: pa.Array | pa.ChunkedArray) -> ExactRows | None:
    """Plain-decimal text (every value already matches ``NUMBER_PATTERN``)."""
    lengths = pc.fill_null(pc.utf8_length(arr), 0).to_numpy(zero_copy_only=False)
    long_rows = np.flatnonzero(lengths > _FAITHFUL_DIGITS)
    if not len(long_rows):
        return None
    texts = arr.take(pa.array(long_rows, type=pa.int64())).to_pylist()
    return from_decimals_at(long_rows, [decimal.Decimal(t) for t in texts])


def from_decimals_at(rows: Iterable[int], values: list[decimal.Decimal]) -> ExactRows | None:
    """Like :func:`from_decimals` for the given rows only."""
    return _collect(
        (int(k), Fraction(v))
        for k, v in zip(rows, values, strict=True)
        if _digits(v) > _FAITHFUL_DIGITS
    )


def _digits(value: decimal.Decimal) -> int:
    """Significant digits, trailing zeros of the fraction not counted (1.50 has two)."""
    return len(value.normalize().as_tuple().digits)


def _collect(pairs: Iterable[tuple[int, Fraction]]) -> ExactRows | None:
    """The pairs whose exact value is not its float64 (those that are need nothing)."""
    found = {k: exact for k, exact in pairs if Fraction(float(exact)) != exact}
    return found or None


def close_exact(a: Fraction, b: float | Fraction, abs_tol: float, rel_tol: float) -> bool:
    """|a-b| <= max(abs_tol, rel_tol * max(|a|, |b|)), evaluated exactly (a is finite).

    Example:
        >>> close_exact(Fraction(2**53 + 1), 2.0**53, 0.0, 0.0)
        False
        >>> close_exact(Fraction(2**53 + 1), 2.0**53, 0.0, 1e-9)
        True
    """
    if isinstance(b, float):
        if b != b or b in (float("inf"), float("-inf")):
            return False
        b = Fraction(b)
    bound = max(Fraction(abs_tol), Fraction(rel_tol) * max(abs(a), abs(b)))
    return abs(a - b) <= bound
