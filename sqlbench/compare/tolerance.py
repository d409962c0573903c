"""Tolerance inside the multiset: pairing rows whose numbers match within tolerance.

Rows left over by the exact stage are grouped by their exactly-compared columns (and the
NULL-ness of their numbers) and, inside a group, sorted by their numbers and paired in order.
Hash buckets are never used for the numbers themselves, so two values within tolerance are
never split by a bucket edge. If pairing the left-overs fails, the whole group is paired again
(exact-first pairing can block a valid tolerant pairing). With one tolerant column that sorted
pairing decides (numbers on a line); with two or more, maximum bipartite matching decides, or
the result is undecided when too large.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sqlbench.compare.bipartite import max_matching
from sqlbench.compare.pairs import (
    EMPTY,
    Pair,
    RowIndices,
    RowMatch,
    RowScope,
    lexicographic_ids,
    row_hashes,
    runs,
)
from sqlbench.compare.views import ResultRole, Tolerance, View


def _f(view: View) -> np.ndarray:
    """The float values of a view in the tolerant domain."""
    assert view.floats is not None
    return view.floats


def _view(pair: Pair, role: ResultRole) -> View:
    return pair.expected if role is ResultRole.EXPECTED else pair.actual


def _number_keys(tolerant: list[Pair], role: ResultRole, rows: np.ndarray) -> list[np.ndarray]:
    """``np.lexsort`` keys (least significant first) sorting ``rows`` by the exact values of
    the tolerant columns, the first column leading: floats, then residuals where kept."""
    keys = []
    for p in reversed(tolerant):
        view = _view(p, role)
        if view.residual is not None:
            keys.append(view.residual[rows])
        keys.append(_f(view)[rows])
    return keys


def group_views(pairs: list[Pair], role: ResultRole) -> list[View]:
    """Views that must match exactly: exact pairs, and the NULL-ness of tolerant pairs."""
    out = []
    for p in pairs:
        view = _view(p, role)
        out.append(view.null_only if p.tolerant else view)
    return out


@dataclass(frozen=True)
class RowGroups:
    """The group of every row of each result: a key of its exactly-compared columns and the
    NULL-ness of its tolerant ones (a hash, or an exact id where hashes collided). Two rows
    can pair within tolerance only inside one group."""

    expected: np.ndarray
    """One group key per expected row."""
    actual: np.ndarray
    """One group key per actual row."""

    @classmethod
    def of(cls, pairs: list[Pair], scope: RowScope) -> RowGroups:
        """The rows' groups as hashes."""
        return cls(
            row_hashes(group_views(pairs, ResultRole.EXPECTED), None, scope.expected.count),
            row_hashes(group_views(pairs, ResultRole.ACTUAL), None, scope.actual.count),
        )

    def swapped(self) -> RowGroups:
        """The same groups with the roles exchanged (actual first)."""
        return RowGroups(self.actual, self.expected)

    def rows_in(self, keys: np.ndarray, scope: RowScope) -> RowIndices:
        """The compared rows of each side whose group is one of ``keys``."""
        all_e, all_a = scope.expected.indices(), scope.actual.indices()
        return RowIndices(
            all_e[np.isin(self.expected[all_e], keys)], all_a[np.isin(self.actual[all_a], keys)]
        )


def tolerant_stage(
    pairs: list[Pair], left: RowIndices, scope: RowScope, tol: Tolerance, report: bool
) -> RowMatch:
    """Pair the rows the exact stage left over (``left``) within tolerance."""
    groups = RowGroups.of(pairs, scope)
    left = _sorted_pairing(pairs, left, groups, tol)
    if left.none:
        return RowMatch(True, EMPTY, EMPTY)
    # Pair the touched groups again with all their rows: exact-first can block a tolerant match.
    hard = np.union1d(groups.expected[left.expected], groups.actual[left.actual])
    full = groups.rows_in(hard, scope)
    left = _sorted_pairing(pairs, full, groups, tol)
    if left.none:
        return RowMatch(True, EMPTY, EMPTY)
    if not _groups_exact(pairs, full, groups):  # a hash collision merged two groups
        groups = _exact_groups(pairs, full, groups)
        left = _sorted_pairing(pairs, full, groups, tol)
        if left.none:
            return RowMatch(True, EMPTY, EMPTY)
    if sum(p.tolerant for p in pairs) == 1:
        # One tolerant column: sorted pairing decides (numbers on a line, interval matching);
        # a greedy walk then finds the fewest unmatched rows for the report.
        if report and len(full.expected) + len(full.actual) <= _MAX_GREEDY:
            left = _greedy_line(pairs, full, groups, tol)
        return RowMatch(False, np.sort(left.expected), np.sort(left.actual))
    return _bipartite_groups(pairs, full, groups, tol)


def _group_codes(pairs: list[Pair], rows: RowIndices) -> list[np.ndarray]:
    """The exactly-compared codes (and NULL flags) of the rows of both sides, concatenated."""
    keys = []
    for ve, va in zip(
        group_views(pairs, ResultRole.EXPECTED), group_views(pairs, ResultRole.ACTUAL), strict=True
    ):
        keys.append(
            np.concatenate([ve.codes[rows.expected], va.codes[rows.actual]]).astype(np.int64)
        )
        keys.append(np.concatenate([ve.null[rows.expected], va.null[rows.actual]]).astype(np.int64))
    return keys


def _groups_exact(pairs: list[Pair], rows: RowIndices, groups: RowGroups) -> bool:
    """Rows sharing a group hash also share their exactly-compared values."""
    g = np.concatenate([groups.expected[rows.expected], groups.actual[rows.actual]])
    order = np.argsort(g, kind="stable")
    _, starts, counts = runs(g[order])
    first = np.repeat(order[starts], counts)
    return all(np.array_equal(key[order], key[first]) for key in _group_codes(pairs, rows))


def _exact_groups(pairs: list[Pair], rows: RowIndices, groups: RowGroups) -> RowGroups:
    """Group ids of ``rows`` from the values themselves (lexicographic sort), replacing the
    hashes."""
    total = len(rows.expected) + len(rows.actual)
    ids = lexicographic_ids(_group_codes(pairs, rows), total).astype(np.uint64)
    expected, actual = groups.expected.copy(), groups.actual.copy()
    expected[rows.expected] = ids[: len(rows.expected)]
    actual[rows.actual] = ids[len(rows.expected) :]
    return RowGroups(expected, actual)


_MAX_GREEDY = 4_000_000


def _in_group_order(tolerant: list[Pair], rows: RowIndices, groups: RowGroups) -> RowIndices:
    """The rows of each side sorted by (group, numbers of the ``tolerant`` columns)."""
    return RowIndices(
        rows.expected[
            np.lexsort(
                [
                    *_number_keys(tolerant, ResultRole.EXPECTED, rows.expected),
                    groups.expected[rows.expected],
                ]
            )
        ],
        rows.actual[
            np.lexsort(
                [
                    *_number_keys(tolerant, ResultRole.ACTUAL, rows.actual),
                    groups.actual[rows.actual],
                ]
            )
        ],
    )


def _greedy_line(
    pairs: list[Pair], rows: RowIndices, groups: RowGroups, tol: Tolerance
) -> RowIndices:
    """Maximum pairing of rows whose one tolerant number lies on a line: walk both sides in
    (group, number) order, pairing the smallest compatible values."""
    p = next(p for p in pairs if p.tolerant)
    ordered = _in_group_order([p], rows, groups)
    order_e, order_a = ordered.expected, ordered.actual
    group_e, group_a = groups.expected, groups.actual
    exact = [q for q in pairs if not q.tolerant]
    left_e: list[int] = []
    left_a: list[int] = []
    i = j = 0
    while i < len(order_e) and j < len(order_a):
        e, a = order_e[i], order_a[j]
        if group_e[e] != group_a[a]:
            if group_e[e] < group_a[a]:
                left_e.append(e)
                i += 1
            else:
                left_a.append(a)
                j += 1
            continue
        same = all(
            q.expected.codes[e] == q.actual.codes[a] and q.expected.null[e] == q.actual.null[a]
            for q in exact
        )
        close = tol.close_rows(p.expected, np.array([e]), p.actual, np.array([a]))[0]
        if same and p.expected.null[e] == p.actual.null[a] and close:
            i += 1
            j += 1
        elif same and _sort_value(p.actual, a) < _sort_value(p.expected, e):
            left_a.append(a)
            j += 1
        else:
            left_e.append(e)
            i += 1
    left_e.extend(order_e[i:])
    left_a.extend(order_a[j:])
    return RowIndices(np.array(left_e, dtype=np.int64), np.array(left_a, dtype=np.int64))


def _sort_value(view: View, row: int) -> tuple[float, float]:
    residual = 0.0 if view.residual is None else float(view.residual[row])
    return (float(_f(view)[row]), residual)


def _sorted_pairing(
    pairs: list[Pair], rows: RowIndices, groups: RowGroups, tol: Tolerance
) -> RowIndices:
    """Pair rows in (group, numbers) order; return the rows left without a valid partner."""
    ordered = _in_group_order([p for p in pairs if p.tolerant], rows, groups)
    order_e, order_a = ordered.expected, ordered.actual
    keys_e, starts_e, counts_e = runs(groups.expected[order_e])
    keys_a, starts_a, counts_a = runs(groups.actual[order_a])
    _, shared_e, shared_a = np.intersect1d(keys_e, keys_a, assume_unique=True, return_indices=True)
    same = counts_e[shared_e] == counts_a[shared_a]
    shared_e, shared_a = shared_e[same], shared_a[same]
    sizes = counts_e[shared_e]
    offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    pos_e = np.repeat(starts_e[shared_e], sizes) + offsets
    pos_a = np.repeat(starts_a[shared_a], sizes) + offsets
    partner_e, partner_a = order_e[pos_e], order_a[pos_a]
    good = np.ones(len(partner_e), dtype=bool)
    for p in pairs:
        if p.tolerant:
            good &= tol.close_rows(p.expected, partner_e, p.actual, partner_a)
        else:
            good &= p.expected.codes[partner_e] == p.actual.codes[partner_a]
        good &= p.expected.null[partner_e] == p.actual.null[partner_a]
    paired_e = np.zeros(len(order_e), dtype=bool)
    paired_a = np.zeros(len(order_a), dtype=bool)
    paired_e[pos_e[good]] = True
    paired_a[pos_a[good]] = True
    return RowIndices(order_e[~paired_e], order_a[~paired_a])


_MAX_EDGES = 2_000_000


def _bipartite_groups(
    pairs: list[Pair], rows: RowIndices, groups: RowGroups, tol: Tolerance
) -> RowMatch:
    """Maximum matching per group, for two or more tolerant columns."""
    tolerant = [p for p in pairs if p.tolerant]
    first = tolerant[0]
    left_e: list[np.ndarray] = []
    left_a: list[np.ndarray] = []
    edges = 0
    group_e, group_a = groups.expected[rows.expected], groups.actual[rows.actual]
    for group in np.union1d(group_e, group_a):
        group_rows_e, group_rows_a = rows.expected[group_e == group], rows.actual[group_a == group]
        # Sorted by every number (the first leads), so the matching, and which rows it leaves
        # over for the reason, does not depend on the agent's row order.
        order = np.lexsort(_number_keys(tolerant, ResultRole.ACTUAL, group_rows_a))
        group_rows_a = group_rows_a[order]
        floats_a = _f(first.actual)[group_rows_a]
        floats_e = _f(first.expected)[group_rows_e]
        reach = tol.reach(floats_e)
        lo = np.searchsorted(floats_a, floats_e - reach, side="left")
        hi = np.searchsorted(floats_a, floats_e + reach, side="right")
        edges += int((hi - lo).sum())
        if edges > _MAX_EDGES:
            return RowMatch(False, np.sort(rows.expected), np.sort(rows.actual), undecided=True)
        adjacency: list[list[int]] = []
        for k, row in enumerate(group_rows_e):
            window = group_rows_a[lo[k] : hi[k]]
            good = _partners_among(pairs, row, window, tol)
            adjacency.append([int(j) for j in np.flatnonzero(good) + lo[k]])
        match_e, match_a = max_matching(adjacency, len(group_rows_a))
        left_e.append(group_rows_e[np.array([m < 0 for m in match_e], dtype=bool)])
        left_a.append(group_rows_a[np.array([m < 0 for m in match_a], dtype=bool)])
    left = RowIndices(
        np.concatenate(left_e) if left_e else EMPTY, np.concatenate(left_a) if left_a else EMPTY
    )
    return left.as_unmatched()


def _partners_among(pairs: list[Pair], row: int, window: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Which actual rows of ``window`` match expected row ``row`` on every column pair."""
    good = np.ones(len(window), dtype=bool)
    for p in pairs:
        if p.tolerant:
            good &= tol.close_rows(p.expected, np.full(len(window), row), p.actual, window)
        else:
            good &= p.actual.codes[window] == p.expected.codes[row]
        good &= p.actual.null[window] == p.expected.null[row]
    return good


def uncovered(
    pairs: list[Pair],
    rows: np.ndarray,
    others: np.ndarray,
    groups: RowGroups,
    tol: Tolerance,
) -> np.ndarray:
    """The expected ``rows`` with no close row among the actual rows ``others``."""
    first = next(p for p in pairs if p.tolerant)
    order = np.lexsort([_f(first.actual)[others], groups.actual[others]])
    cand = others[order]
    keys = groups.actual[cand]
    values = _f(first.actual)[cand]
    missing = []
    for row in rows:
        lo_g = np.searchsorted(keys, groups.expected[row], side="left")
        hi_g = np.searchsorted(keys, groups.expected[row], side="right")
        value = _f(first.expected)[row]
        reach = float(tol.reach(np.array([value]))[0])
        lo = lo_g + np.searchsorted(values[lo_g:hi_g], value - reach, side="left")
        hi = lo_g + np.searchsorted(values[lo_g:hi_g], value + reach, side="right")
        if not _partners_among(pairs, row, cand[lo:hi], tol).any():
            missing.append(row)
    return np.array(missing, dtype=np.int64)
