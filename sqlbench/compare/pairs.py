"""Column pairs, row hashes and row-match results shared by exact and tolerant matching."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sqlbench.compare.views import View

_P = np.uint64(0x100000001B3)
_SEED = np.uint64(0xCBF29CE484222325)
EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Pair:
    """An expected column and its actual partner, in their common domain."""

    expected: View
    actual: View
    tolerant: bool
    """Numbers compared within the tolerances (the float domain), not exactly."""

    def swapped(self) -> Pair:
        """The same two columns with the roles exchanged (actual first)."""
        return Pair(self.actual, self.expected, self.tolerant)


@dataclass(frozen=True)
class ResultRows:
    """The rows of one result that take part in a row match."""

    count: int
    """Rows in the result."""
    kept: np.ndarray | None = None
    """The rows compared, ascending (``rows: set``: each distinct row's first occurrence);
    None: every row."""

    @property
    def size(self) -> int:
        """How many rows are compared."""
        return self.count if self.kept is None else len(self.kept)

    def indices(self) -> np.ndarray:
        """The compared rows' indices, ascending."""
        return np.arange(self.count) if self.kept is None else self.kept


@dataclass(frozen=True)
class RowScope:
    """Which rows of each result a row match compares."""

    expected: ResultRows
    actual: ResultRows


@dataclass(frozen=True)
class RowIndices:
    """Some rows of each result, by index: ``expected`` into the expected result's rows,
    ``actual`` into the actual result's (rows left without a partner, rows to pair, ...)."""

    expected: np.ndarray
    actual: np.ndarray

    @property
    def none(self) -> bool:
        """Neither side has a row here."""
        return not len(self.expected) and not len(self.actual)

    def as_unmatched(self) -> RowMatch:
        """A row match leaving exactly these rows unmatched (ok when there are none)."""
        return RowMatch(self.none, np.sort(self.expected), np.sort(self.actual))


@dataclass(frozen=True)
class RowMatch:
    """How the rows of two results matched under one mapping."""

    ok: bool
    """Every row found its partner."""
    expected_unmatched: np.ndarray
    """Expected row indices without a partner (sorted)."""
    actual_unmatched: np.ndarray
    """Actual row indices without a partner (sorted)."""
    undecided: bool = False
    """Tolerant pairing was too large to settle; treat as neither pass nor fail."""


def row_hashes(views: list[View], rows: np.ndarray | None, count: int) -> np.ndarray:
    """One 64-bit hash per row from the views' per-row hashes, order-sensitive."""
    if not views:
        return np.full(count if rows is None else len(rows), _SEED, dtype=np.uint64)
    h = views[0].hashes(rows)
    for view in views[1:]:
        h *= _P
        h += view.hashes(rows)
    h ^= h >> np.uint64(33)
    h *= _P
    h ^= h >> np.uint64(29)
    return h


def runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keys, start positions, counts) of the runs of equal values in a sorted array."""
    if not len(sorted_keys):
        return sorted_keys, EMPTY, EMPTY
    change = np.empty(len(sorted_keys), dtype=bool)
    change[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, len(sorted_keys)))
    return sorted_keys[starts], starts, counts


def lexicographic_ids(keys: list[np.ndarray], total: int) -> np.ndarray:
    """One id per position of the equal-length ``keys``: equal ids exactly where every key is
    equal, numbered in lexicographic order of the keys (the first key leads)."""
    if not keys:
        return np.zeros(total, dtype=np.int64)
    order = np.lexsort(keys[::-1])
    change = np.zeros(total, dtype=bool)
    for key in keys:
        ordered = key[order]
        change[1:] |= ordered[1:] != ordered[:-1]
    ids = np.empty(total, dtype=np.int64)
    ids[order] = np.cumsum(change)
    return ids
