"""Row matching under one column mapping: are the two results the same multiset (or set)?

Exact stage: each row is hashed from its codes, both sides are sorted by hash and compared;
every hash-based conclusion is verified on the codes themselves (a hash collision sends the
comparison to an exact lexicographic sort, so a collision can never produce a wrong verdict).
When a numeric column pair compares within tolerance and the exact stage left rows over, the
tolerance stage (``sqlbench.compare.tolerance``) pairs only those. Strict order is the same
multiset comparison with one more exact column: each row's tie group (its position, or its run
of equal ORDER BY keys). ``rows: set`` compares distinct rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sqlbench.compare.pairs import (
    EMPTY,
    Pair,
    ResultRows,
    RowIndices,
    RowMatch,
    RowScope,
    lexicographic_ids,
    row_hashes,
    runs,
)
from sqlbench.compare.tolerance import RowGroups, tolerant_stage, uncovered
from sqlbench.compare.views import Tolerance, View

__all__ = [
    "Pair",
    "RowMatch",
    "distinct_count",
    "distinct_rows",
    "exact_unmatched",
    "match_rows",
    "row_hashes",
]


def match_rows(
    pairs: list[Pair],
    expected_count: int,
    actual_count: int,
    *,
    distinct: bool,
    tol: Tolerance,
    ties: Callable[[np.ndarray | None], np.ndarray] | None = None,
    report: bool = False,
    distinct_rows: Callable[[list[View], int], np.ndarray] | None = None,
) -> RowMatch:
    """Match the rows of two results under one column mapping.

    Args:
        pairs: the mapped column pairs, in expected-column order.
        expected_count: expected row count.
        actual_count: actual row count.
        distinct: compare distinct rows (``rows: set``).
        tol: numeric tolerance for tolerant pairs.
        ties: for strict order, gives the tie-group id of each position of a sequence of
            expected rows (None: all rows in order). Rows at the same position on both sides
            get the same id; rows with equal ids may permute among themselves.
        report: on a failure, find the fewest unmatched rows (for reasons and previews)
            rather than stopping at the first proof that the rows differ.
        distinct_rows: finds one side's distinct rows from its views and row count, as
            ``rows._distinct_rows`` does (a caller's remembered ones); None: that function.
    """
    scope = RowScope(ResultRows(expected_count), ResultRows(actual_count))
    if distinct:
        find = distinct_rows or _distinct_rows
        scope = RowScope(
            ResultRows(expected_count, find([p.expected for p in pairs], expected_count)),
            ResultRows(actual_count, find([p.actual for p in pairs], actual_count)),
        )
    if ties is not None:
        if scope.expected.size != scope.actual.size:
            return _positional_difference(scope)
        pairs = [*pairs, _tie_pair(ties(scope.expected.kept), scope)]
    elif distinct:
        return _set_match(pairs, scope, tol)
    return _bag_match(pairs, scope, tol, report)


def _positional_difference(scope: RowScope) -> RowMatch:
    """Strict order with different row counts: the rows past the shorter side differ."""
    short = min(scope.expected.size, scope.actual.size)
    return RowMatch(False, scope.expected.indices()[short:], scope.actual.indices()[short:])


def _tie_pair(ties: np.ndarray, scope: RowScope) -> Pair:
    """Each row's tie group as one more exactly-compared column (-1 on rows not compared)."""
    return Pair(_tie_view(ties, scope.expected), _tie_view(ties, scope.actual), False)


def _tie_view(ties: np.ndarray, result: ResultRows) -> View:
    ids = ties if result.kept is None else _scatter(ties, result.kept, result.count)
    return View(ids.astype(np.int64), np.zeros(result.count, dtype=bool))


def _scatter(values: np.ndarray, rows: np.ndarray, count: int) -> np.ndarray:
    full = np.full(count, -1, dtype=np.int64)
    full[rows] = values
    return full


def _bag_match(pairs: list[Pair], scope: RowScope, tol: Tolerance, report: bool) -> RowMatch:
    left = exact_unmatched(pairs, scope)
    if len(left.expected) and len(left.actual) and any(p.tolerant for p in pairs):
        return tolerant_stage(pairs, left, scope, tol, report)
    return left.as_unmatched()


@dataclass(frozen=True)
class _SortedRows:
    """One result's compared rows sorted by a row key (a hash or an exact id)."""

    keys: np.ndarray
    """The keys, sorted."""
    order: np.ndarray
    """Positions into ``rows`` in key order."""
    rows: np.ndarray
    """The compared rows' indices in the result."""


def exact_unmatched(pairs: list[Pair], scope: RowScope) -> RowIndices:
    """Rows of each side without an exactly equal partner (multiset difference)."""
    hashes_e, order_e = _sorted_hashes([p.expected for p in pairs], scope.expected)
    hashes_a, order_a = _sorted_hashes([p.actual for p in pairs], scope.actual)
    if len(hashes_e) == len(hashes_a) and np.array_equal(hashes_e, hashes_a):
        del hashes_e, hashes_a
        if _rows_equal(pairs, scope, order_e, order_a):
            return RowIndices(EMPTY, EMPTY)
        rows = RowIndices(scope.expected.indices(), scope.actual.indices())
    else:
        rows = RowIndices(scope.expected.indices(), scope.actual.indices())
        result = _run_difference(
            _SortedRows(hashes_e, order_e, rows.expected),
            _SortedRows(hashes_a, order_a, rows.actual),
            pairs,
        )
        if result is not None:
            return result
    ids_e, ids_a = _exact_ids(pairs, rows)  # a hash collision: decide on the codes themselves
    result = _run_difference(
        _sorted_by_id(ids_e, rows.expected), _sorted_by_id(ids_a, rows.actual), None
    )
    assert result is not None
    return result


def _sorted_by_id(ids: np.ndarray, rows: np.ndarray) -> _SortedRows:
    order = np.argsort(ids, kind="stable")
    return _SortedRows(ids[order], order, rows)


def _sorted_hashes(views: list[View], result: ResultRows) -> tuple[np.ndarray, np.ndarray]:
    """Row hashes sorted in place, and the order that sorts them (no extra copy)."""
    hashes = row_hashes(views, result.kept, result.count)
    order = np.argsort(hashes)
    hashes.sort()
    return hashes, order


def _rows_equal(
    pairs: list[Pair], scope: RowScope, order_e: np.ndarray, order_a: np.ndarray
) -> bool:
    """Rows paired by sorted position (expected ``order_e[k]`` with actual ``order_a[k]``,
    positions among the compared rows) are equal."""
    kept_e, kept_a = scope.expected.kept, scope.actual.kept
    partner = np.empty(len(order_e), dtype=np.int64)
    partner[order_e] = order_a  # the actual row paired with each expected row, in expected order
    if kept_a is not None:
        partner = kept_a[partner]
    whole = kept_e is None
    for p in pairs:
        codes_e = p.expected.codes if whole else p.expected.codes[kept_e]
        if not np.array_equal(codes_e, p.actual.codes[partner]):
            return False
        if p.expected.null_count or p.actual.null_count:
            null_e = p.expected.null if whole else p.expected.null[kept_e]
            if not np.array_equal(null_e, p.actual.null[partner]):
                return False
    return True


def _run_difference(
    expected: _SortedRows, actual: _SortedRows, verify: list[Pair] | None
) -> RowIndices | None:
    """Unmatched rows from sorted keys; None when verification finds a hash collision."""
    keys_e, starts_e, counts_e = runs(expected.keys)
    keys_a, starts_a, counts_a = runs(actual.keys)
    _, shared_e, shared_a = np.intersect1d(keys_e, keys_a, assume_unique=True, return_indices=True)
    matched = np.minimum(counts_e[shared_e], counts_a[shared_a])
    if verify is not None:
        # Each matched row is paired with the row at the same place in the other side's run
        # of its key; every pair must be equal on the codes themselves. Equal pairs are real
        # matches whatever the hashes did, and equal rows always share a key, so the surplus
        # is exact too; a collision that pairs unequal rows sends the caller to exact ids.
        offsets = np.arange(int(matched.sum())) - np.repeat(np.cumsum(matched) - matched, matched)
        pos_e = np.repeat(starts_e[shared_e], matched) + offsets
        pos_a = np.repeat(starts_a[shared_a], matched) + offsets
        rows_e, rows_a = expected.rows[expected.order[pos_e]], actual.rows[actual.order[pos_a]]
        for p in verify:
            if not np.array_equal(p.expected.codes[rows_e], p.actual.codes[rows_a]):
                return None
            if not np.array_equal(p.expected.null[rows_e], p.actual.null[rows_a]):
                return None
    return RowIndices(
        _surplus(counts_e, starts_e, shared_e, matched, expected),
        _surplus(counts_a, starts_a, shared_a, matched, actual),
    )


def _surplus(
    counts: np.ndarray,
    starts: np.ndarray,
    shared: np.ndarray,
    matched: np.ndarray,
    rows: _SortedRows,
) -> np.ndarray:
    """The rows of each run of equal keys past the ones matched on the other side."""
    keep = np.zeros(len(counts), dtype=np.int64)
    keep[shared] = matched
    run = np.repeat(np.arange(len(counts)), counts)
    rank = np.arange(len(rows.order)) - starts[run]
    surplus: np.ndarray = rows.rows[rows.order[rank >= keep[run]]]
    return surplus


def _exact_ids(pairs: list[Pair], rows: RowIndices) -> tuple[np.ndarray, np.ndarray]:
    """Exact row ids of ``rows``, shared by both sides (equal id iff equal codes and NULLs),
    in the order of ``rows.expected`` and ``rows.actual``."""
    keys: list[np.ndarray] = []
    for p in pairs:
        keys.append(np.concatenate([p.expected.codes[rows.expected], p.actual.codes[rows.actual]]))
        keys.append(
            np.concatenate([p.expected.null[rows.expected], p.actual.null[rows.actual]]).astype(
                np.int64
            )
        )
    ids = lexicographic_ids(keys, len(rows.expected) + len(rows.actual))
    return ids[: len(rows.expected)], ids[len(rows.expected) :]


def distinct_rows(views: list[View], count: int) -> np.ndarray:
    """Indices of the first occurrence of each distinct row of one side (exact codes),
    ascending: the same for the same views in any order."""
    return _distinct_rows(views, count)


def distinct_count(views: list[View], count: int) -> int:
    """Number of distinct rows of one side (exact codes)."""
    return len(_distinct_rows(views, count))


SMALL_DISTINCT = 256
"""Results of at most this many rows find their distinct rows in Python (a dict of each row's
codes and NULL flags) rather than with about ten numpy calls (hash, sort, runs, verify): the
same indices, as the same dtype."""


def _distinct_rows(views: list[View], count: int) -> np.ndarray:
    """Indices of the first occurrence of each distinct row, ascending.

    Example:
        >>> codes = View(np.array([5, 0, 5, 7]), np.array([False, True, False, False]))
        >>> _distinct_rows([codes], 4).tolist()
        [0, 1, 3]
    """
    if count <= SMALL_DISTINCT and all(view.codes.dtype.kind in "iu" for view in views):
        # Integer codes only: Python ints are equal exactly when numpy's are (float codes
        # would have 0.0 == -0.0 where the hashes tell them apart).
        seen: dict[tuple[object, ...], int] = {}
        columns = [part for view in views for part in (view.codes.tolist(), view.null.tolist())]
        for row, key in enumerate(zip(*columns, strict=True) if columns else [()] * count):
            seen.setdefault(key, row)
        return np.array(list(seen.values()), dtype=np.intp)
    h = row_hashes(views, None, count)
    order = np.argsort(h, kind="stable")
    _, starts, counts = runs(h[order])
    firsts = order[starts]
    run = np.repeat(np.arange(len(starts)), counts)
    for view in views:
        if not (
            np.array_equal(view.codes[order], view.codes[firsts[run]])
            and np.array_equal(view.null[order], view.null[firsts[run]])
        ):
            pairs = [Pair(v, v, False) for v in views]
            ids, _ = _exact_ids(pairs, RowIndices(np.arange(count), EMPTY))
            _, first = np.unique(ids, return_index=True)
            return np.sort(first)
    return np.sort(firsts)


def _set_match(pairs: list[Pair], scope: RowScope, tol: Tolerance) -> RowMatch:
    """Set semantics: every distinct row needs an equal (or, for numbers, close) partner."""
    left = _small_set_difference(pairs, scope)
    if left is None:
        left = exact_unmatched(pairs, scope)
    if not left.none and any(p.tolerant for p in pairs):
        groups = RowGroups.of(pairs, scope)
        swapped = [p.swapped() for p in pairs]
        assert scope.expected.kept is not None and scope.actual.kept is not None
        left = RowIndices(
            uncovered(pairs, left.expected, scope.actual.kept, groups, tol),
            uncovered(swapped, left.actual, scope.expected.kept, groups.swapped(), tol),
        )
    return left.as_unmatched()


SMALL_SET = 256
"""``rows: set`` matches of at most this many compared rows (both sides together) find the rows
without an exactly equal partner in Python (a set of each row's codes and NULL flags) rather
than by hashing and sorting them with numpy."""


def _small_set_difference(pairs: list[Pair], scope: RowScope) -> RowIndices | None:
    """``exact_unmatched`` of a small ``rows: set`` match, in Python; None past ``SMALL_SET``
    rows or with codes other than integers.

    Each side's compared rows are its distinct rows (first occurrences), so the multiset
    difference ``exact_unmatched`` finds is the set difference: the same rows, in another
    order (the caller sorts them).

    Example:
        >>> def view(*codes):
        ...     return View(np.array(codes), np.zeros(len(codes), dtype=bool))
        >>> kept = np.arange(3)
        >>> scope = RowScope(ResultRows(3, kept), ResultRows(3, kept))
        >>> left = _small_set_difference([Pair(view(1, 2, 3), view(3, 1, 4), False)], scope)
        >>> left.expected.tolist(), left.actual.tolist()
        ([1], [2])
    """
    kept_e, kept_a = scope.expected.kept, scope.actual.kept
    assert kept_e is not None and kept_a is not None
    if len(kept_e) + len(kept_a) > SMALL_SET or not all(
        p.expected.codes.dtype.kind in "iu" and p.actual.codes.dtype.kind in "iu" for p in pairs
    ):
        return None  # float codes: Python's 0.0 == -0.0 would pair rows the codes tell apart
    keys_e = _row_keys([p.expected for p in pairs], kept_e)
    keys_a = _row_keys([p.actual for p in pairs], kept_a)
    among_a, among_e = set(keys_a), set(keys_e)
    unmatched_e = [
        row for row, key in zip(kept_e.tolist(), keys_e, strict=True) if key not in among_a
    ]
    unmatched_a = [
        row for row, key in zip(kept_a.tolist(), keys_a, strict=True) if key not in among_e
    ]
    if not unmatched_e and not unmatched_a:
        return RowIndices(EMPTY, EMPTY)
    return RowIndices(np.array(unmatched_e, dtype=np.intp), np.array(unmatched_a, dtype=np.intp))


def _row_keys(views: list[View], rows: np.ndarray) -> list[tuple[object, ...]]:
    """Each of ``rows``' codes and NULL flags across ``views``, as a tuple."""
    columns = [
        part for view in views for part in (view.codes[rows].tolist(), view.null[rows].tolist())
    ]
    return list(zip(*columns, strict=True)) if columns else [()] * len(rows)
