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

    e: View
    a: View
    tolerant: bool


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
