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

import numpy as np

from sqlbench.compare.pairs import EMPTY, Pair, RowMatch, row_hashes, runs
from sqlbench.compare.tolerance import group_views, tolerant_stage, uncovered
from sqlbench.compare.views import Tolerance, View

__all__ = ["Pair", "RowMatch", "distinct_count", "exact_unmatched", "match_rows", "row_hashes"]


def match_rows(
    pairs: list[Pair],
    n_e: int,
    n_a: int,
    *,
    distinct: bool,
    tol: Tolerance,
    ties: Callable[[np.ndarray | None], np.ndarray] | None = None,
    report: bool = False,
) -> RowMatch:
    """Match the rows of two results under one column mapping.

    Args:
        pairs: the mapped column pairs, in expected-column order.
        n_e: expected row count.
        n_a: actual row count.
        distinct: compare distinct rows (``rows: set``).
        tol: numeric tolerance for tolerant pairs.
        ties: for strict order, gives the tie-group id of each position of a sequence of
            expected rows (None: all rows in order). Rows at the same position on both sides
            get the same id; rows with equal ids may permute among themselves.
        report: on a failure, find the fewest unmatched rows (for reasons and previews)
            rather than stopping at the first proof that the rows differ.
    """
    rows_e = rows_a = None
    if distinct:
        rows_e = _distinct_rows([p.e for p in pairs], n_e)
        rows_a = _distinct_rows([p.a for p in pairs], n_a)
    if ties is not None:
        ne = n_e if rows_e is None else len(rows_e)
        na = n_a if rows_a is None else len(rows_a)
        if ne != na:
            return _positional_difference(rows_e, rows_a, ne, na)
        pairs = [*pairs, _tie_pair(ties(rows_e), rows_e, rows_a, n_e, n_a)]
    elif distinct:
        assert rows_e is not None and rows_a is not None
        return _set_match(pairs, rows_e, rows_a, n_e, n_a, tol)
    return _bag_match(pairs, rows_e, rows_a, n_e, n_a, tol, report)


def _positional_difference(
    rows_e: np.ndarray | None, rows_a: np.ndarray | None, ne: int, na: int
) -> RowMatch:
    re = np.arange(ne) if rows_e is None else rows_e
    ra = np.arange(na) if rows_a is None else rows_a
    short = min(ne, na)
    return RowMatch(False, re[short:], ra[short:])


def _tie_pair(
    ties: np.ndarray, rows_e: np.ndarray | None, rows_a: np.ndarray | None, n_e: int, n_a: int
) -> Pair:
    te = ties if rows_e is None else _scatter(ties, rows_e, n_e)
    ta = ties if rows_a is None else _scatter(ties, rows_a, n_a)
    zeros_e, zeros_a = np.zeros(n_e, dtype=bool), np.zeros(n_a, dtype=bool)
    return Pair(View(te.astype(np.int64), zeros_e), View(ta.astype(np.int64), zeros_a), False)


def _scatter(values: np.ndarray, rows: np.ndarray, count: int) -> np.ndarray:
    full = np.full(count, -1, dtype=np.int64)
    full[rows] = values
    return full


def _bag_match(
    pairs: list[Pair],
    rows_e: np.ndarray | None,
    rows_a: np.ndarray | None,
    n_e: int,
    n_a: int,
    tol: Tolerance,
    report: bool,
) -> RowMatch:
    ue, ua = exact_unmatched(pairs, rows_e, rows_a, n_e, n_a)
    if len(ue) and len(ua) and any(p.tolerant for p in pairs):
        return tolerant_stage(pairs, ue, ua, rows_e, rows_a, n_e, n_a, tol, report)
    return RowMatch(not len(ue) and not len(ua), np.sort(ue), np.sort(ua))


def exact_unmatched(
    pairs: list[Pair], rows_e: np.ndarray | None, rows_a: np.ndarray | None, n_e: int, n_a: int
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of each side without an exactly equal partner (multiset difference)."""
    se, oe = _sorted_hashes([p.e for p in pairs], rows_e, n_e)
    sa, oa = _sorted_hashes([p.a for p in pairs], rows_a, n_a)
    if len(se) == len(sa) and np.array_equal(se, sa):
        del se, sa
        if _rows_equal(pairs, rows_e, rows_a, oe, oa):
            return EMPTY, EMPTY
        ie = np.arange(n_e) if rows_e is None else rows_e
        ia = np.arange(n_a) if rows_a is None else rows_a
    else:
        ie = np.arange(n_e) if rows_e is None else rows_e
        ia = np.arange(n_a) if rows_a is None else rows_a
        result = _run_difference(se, sa, oe, oa, ie, ia, pairs)
        if result is not None:
            return result
    ke, ka = _exact_ids(pairs, ie, ia)  # a hash collision: decide on the codes themselves
    oe, oa = np.argsort(ke, kind="stable"), np.argsort(ka, kind="stable")
    result = _run_difference(ke[oe], ka[oa], oe, oa, ie, ia, None)
    assert result is not None
    return result


def _sorted_hashes(
    views: list[View], rows: np.ndarray | None, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """Row hashes sorted in place, and the order that sorts them (no extra copy)."""
    hashes = row_hashes(views, rows, count)
    order = np.argsort(hashes)
    hashes.sort()
    return hashes, order


def _rows_equal(
    pairs: list[Pair],
    ie: np.ndarray | None,
    ia: np.ndarray | None,
    oe: np.ndarray,
    oa: np.ndarray,
) -> bool:
    """Rows paired by sorted position (``ie[oe[k]]`` with ``ia[oa[k]]``) are equal."""
    partner = np.empty(len(oe), dtype=np.int64)
    partner[oe] = oa  # the actual row paired with each expected row, in expected order
    if ia is not None:
        partner = ia[partner]
    whole = ie is None
    for p in pairs:
        codes_e = p.e.codes if whole else p.e.codes[ie]
        if not np.array_equal(codes_e, p.a.codes[partner]):
            return False
        if p.e.null_count or p.a.null_count:
            null_e = p.e.null if whole else p.e.null[ie]
            if not np.array_equal(null_e, p.a.null[partner]):
                return False
    return True


def _run_difference(
    se: np.ndarray,
    sa: np.ndarray,
    oe: np.ndarray,
    oa: np.ndarray,
    ie: np.ndarray,
    ia: np.ndarray,
    verify: list[Pair] | None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Unmatched rows from sorted keys; None when verification finds a hash collision."""
    ke, st_e, ce = runs(se)
    ka, st_a, ca = runs(sa)
    _, xe, xa = np.intersect1d(ke, ka, assume_unique=True, return_indices=True)
    matched = np.minimum(ce[xe], ca[xa])
    if verify is not None:
        # Each matched row is paired with the row at the same place in the other side's run
        # of its key; every pair must be equal on the codes themselves. Equal pairs are real
        # matches whatever the hashes did, and equal rows always share a key, so the surplus
        # is exact too; a collision that pairs unequal rows sends the caller to exact ids.
        offsets = np.arange(int(matched.sum())) - np.repeat(np.cumsum(matched) - matched, matched)
        pos_e = np.repeat(st_e[xe], matched) + offsets
        pos_a = np.repeat(st_a[xa], matched) + offsets
        rows_e, rows_a = ie[oe[pos_e]], ia[oa[pos_a]]
        for p in verify:
            if not np.array_equal(p.e.codes[rows_e], p.a.codes[rows_a]):
                return None
            if not np.array_equal(p.e.null[rows_e], p.a.null[rows_a]):
                return None
    return (_surplus(ce, st_e, xe, matched, oe, ie), _surplus(ca, st_a, xa, matched, oa, ia))


def _surplus(
    counts: np.ndarray,
    starts: np.ndarray,
    shared: np.ndarray,
    matched: np.ndarray,
    order: np.ndarray,
    rows: np.ndarray,
) -> np.ndarray:
    keep = np.zeros(len(counts), dtype=np.int64)
    keep[shared] = matched
    run = np.repeat(np.arange(len(counts)), counts)
    rank = np.arange(len(order)) - starts[run]
    surplus: np.ndarray = rows[order[rank >= keep[run]]]
    return surplus


def _exact_ids(pairs: list[Pair], ie: np.ndarray, ia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact row ids shared by both sides (equal id iff equal codes and NULLs)."""
    n_e = len(ie)
    keys: list[np.ndarray] = []
    for p in pairs:
        keys.append(np.concatenate([p.e.codes[ie], p.a.codes[ia]]))
        keys.append(np.concatenate([p.e.null[ie], p.a.null[ia]]).astype(np.int64))
    total = n_e + len(ia)
    if not keys:
        ids = np.zeros(total, dtype=np.int64)
        return ids[:n_e], ids[n_e:]
    order = np.lexsort(keys[::-1])
    change = np.zeros(total, dtype=bool)
    for key in keys:
        ordered = key[order]
        change[1:] |= ordered[1:] != ordered[:-1]
    ids = np.empty(total, dtype=np.int64)
    ids[order] = np.cumsum(change)
    return ids[:n_e], ids[n_e:]


def distinct_count(views: list[View], count: int) -> int:
    """Number of distinct rows of one side (exact codes)."""
    return len(_distinct_rows(views, count))


def _distinct_rows(views: list[View], count: int) -> np.ndarray:
    """Indices of the first occurrence of each distinct row, ascending."""
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
            ids, _ = _exact_ids(pairs, np.arange(count), EMPTY)
            _, first = np.unique(ids, return_index=True)
            return np.sort(first)
    return np.sort(firsts)


def _set_match(
    pairs: list[Pair],
    rows_e: np.ndarray,
    rows_a: np.ndarray,
    n_e: int,
    n_a: int,
    tol: Tolerance,
) -> RowMatch:
    """Set semantics: every distinct row needs an equal (or, for numbers, close) partner."""
    ue, ua = exact_unmatched(pairs, rows_e, rows_a, n_e, n_a)
    if (len(ue) or len(ua)) and any(p.tolerant for p in pairs):
        ge = row_hashes(group_views(pairs, 0), None, n_e)
        ga = row_hashes(group_views(pairs, 1), None, n_a)
        swapped = [Pair(p.a, p.e, p.tolerant) for p in pairs]
        ue = uncovered(pairs, ue, rows_a, ge, ga, tol)
        ua = uncovered(swapped, ua, rows_e, ga, ge, tol)
    return RowMatch(not len(ue) and not len(ua), np.sort(ue), np.sort(ua))
