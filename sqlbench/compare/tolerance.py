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

import numpy as np

from sqlbench.compare.bipartite import max_matching
from sqlbench.compare.pairs import EMPTY, Pair, RowMatch, row_hashes, runs
from sqlbench.compare.views import Tolerance, View


def _f(view: View) -> np.ndarray:
    """The float values of a view in the tolerant domain."""
    assert view.floats is not None
    return view.floats


def _number_keys(tolerant: list[Pair], side: int, rows: np.ndarray) -> list[np.ndarray]:
    """``np.lexsort`` keys (least significant first) sorting ``rows`` by the exact values of
    the tolerant columns, the first column leading: floats, then residuals where kept."""
    keys = []
    for p in reversed(tolerant):
        view = p.e if side == 0 else p.a
        if view.residual is not None:
            keys.append(view.residual[rows])
        keys.append(_f(view)[rows])
    return keys


def group_views(pairs: list[Pair], side: int) -> list[View]:
    """Views that must match exactly: exact pairs, and the NULL-ness of tolerant pairs."""
    out = []
    for p in pairs:
        view = p.e if side == 0 else p.a
        out.append(view.null_only if p.tolerant else view)
    return out


def tolerant_stage(
    pairs: list[Pair],
    ue: np.ndarray,
    ua: np.ndarray,
    rows_e: np.ndarray | None,
    rows_a: np.ndarray | None,
    n_e: int,
    n_a: int,
    tol: Tolerance,
    report: bool,
) -> RowMatch:
    """Pair the rows the exact stage left over (``ue``, ``ua``) within tolerance."""
    ge = row_hashes(group_views(pairs, 0), None, n_e)
    ga = row_hashes(group_views(pairs, 1), None, n_a)
    left_e, left_a = _sorted_pairing(pairs, ue, ua, ge, ga, tol)
    if not len(left_e) and not len(left_a):
        return RowMatch(True, EMPTY, EMPTY)
    # Pair the touched groups again with all their rows: exact-first can block a tolerant match.
    hard = np.union1d(ge[left_e], ga[left_a])
    all_e = np.arange(n_e) if rows_e is None else rows_e
    all_a = np.arange(n_a) if rows_a is None else rows_a
    full_e, full_a = all_e[np.isin(ge[all_e], hard)], all_a[np.isin(ga[all_a], hard)]
    left_e, left_a = _sorted_pairing(pairs, full_e, full_a, ge, ga, tol)
    if not len(left_e) and not len(left_a):
        return RowMatch(True, EMPTY, EMPTY)
    if not _groups_exact(pairs, full_e, full_a, ge, ga):  # a hash collision merged two groups
        ge, ga = _exact_groups(pairs, full_e, full_a, ge, ga)
        left_e, left_a = _sorted_pairing(pairs, full_e, full_a, ge, ga, tol)
        if not len(left_e) and not len(left_a):
            return RowMatch(True, EMPTY, EMPTY)
    if sum(p.tolerant for p in pairs) == 1:
        # One tolerant column: sorted pairing decides (numbers on a line, interval matching);
        # a greedy walk then finds the fewest unmatched rows for the report.
        if report and len(full_e) + len(full_a) <= _MAX_GREEDY:
            left_e, left_a = _greedy_line(pairs, full_e, full_a, ge, ga, tol)
        return RowMatch(False, np.sort(left_e), np.sort(left_a))
    return _bipartite_groups(pairs, full_e, full_a, ge, ga, tol)


def _group_codes(pairs: list[Pair], re: np.ndarray, ra: np.ndarray) -> list[np.ndarray]:
    """The exactly-compared codes (and NULL flags) of the rows of both sides, concatenated."""
    keys = []
    for ve, va in zip(group_views(pairs, 0), group_views(pairs, 1), strict=True):
        keys.append(np.concatenate([ve.codes[re], va.codes[ra]]).astype(np.int64))
        keys.append(np.concatenate([ve.null[re], va.null[ra]]).astype(np.int64))
    return keys


def _groups_exact(
    pairs: list[Pair], re: np.ndarray, ra: np.ndarray, ge: np.ndarray, ga: np.ndarray
) -> bool:
    """Rows sharing a group hash also share their exactly-compared values."""
    g = np.concatenate([ge[re], ga[ra]])
    order = np.argsort(g, kind="stable")
    _, starts, counts = runs(g[order])
    first = np.repeat(order[starts], counts)
    return all(np.array_equal(key[order], key[first]) for key in _group_codes(pairs, re, ra))


def _exact_groups(
    pairs: list[Pair], re: np.ndarray, ra: np.ndarray, ge: np.ndarray, ga: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Group ids from the values themselves (lexicographic sort), replacing the hashes."""
    keys = _group_codes(pairs, re, ra)
    order = np.lexsort(keys[::-1]) if keys else np.arange(len(re) + len(ra))
    change = np.zeros(len(order), dtype=bool)
    for key in keys:
        ordered = key[order]
        change[1:] |= ordered[1:] != ordered[:-1]
    ids = np.empty(len(order), dtype=np.uint64)
    ids[order] = np.cumsum(change).astype(np.uint64)
    ge, ga = ge.copy(), ga.copy()
    ge[re], ga[ra] = ids[: len(re)], ids[len(re) :]
    return ge, ga


_MAX_GREEDY = 4_000_000


def _greedy_line(
    pairs: list[Pair],
    re: np.ndarray,
    ra: np.ndarray,
    ge: np.ndarray,
    ga: np.ndarray,
    tol: Tolerance,
) -> tuple[np.ndarray, np.ndarray]:
    """Maximum pairing of rows whose one tolerant number lies on a line: walk both sides in
    (group, number) order, pairing the smallest compatible values."""
    p = next(p for p in pairs if p.tolerant)
    oe = re[np.lexsort([*_number_keys([p], 0, re), ge[re]])]
    oa = ra[np.lexsort([*_number_keys([p], 1, ra), ga[ra]])]
    exact = [q for q in pairs if not q.tolerant]
    left_e: list[int] = []
    left_a: list[int] = []
    i = j = 0
    while i < len(oe) and j < len(oa):
        e, a = oe[i], oa[j]
        if ge[e] != ga[a]:
            if ge[e] < ga[a]:
                left_e.append(e)
                i += 1
            else:
                left_a.append(a)
                j += 1
            continue
        same = all(q.e.codes[e] == q.a.codes[a] and q.e.null[e] == q.a.null[a] for q in exact)
        close = tol.close_rows(p.e, np.array([e]), p.a, np.array([a]))[0]
        if same and p.e.null[e] == p.a.null[a] and close:
            i += 1
            j += 1
        elif same and _sort_value(p.a, a) < _sort_value(p.e, e):
            left_a.append(a)
            j += 1
        else:
            left_e.append(e)
            i += 1
    left_e.extend(oe[i:])
    left_a.extend(oa[j:])
    return np.array(left_e, dtype=np.int64), np.array(left_a, dtype=np.int64)


def _sort_value(view: View, row: int) -> tuple[float, float]:
    residual = 0.0 if view.residual is None else float(view.residual[row])
    return (float(_f(view)[row]), residual)


def _sorted_pairing(
    pairs: list[Pair],
    re: np.ndarray,
    ra: np.ndarray,
    ge: np.ndarray,
    ga: np.ndarray,
    tol: Tolerance,
) -> tuple[np.ndarray, np.ndarray]:
    """Pair rows in (group, numbers) order; return the rows left without a valid partner."""
    tolerant = [p for p in pairs if p.tolerant]
    oe = re[np.lexsort([*_number_keys(tolerant, 0, re), ge[re]])]
    oa = ra[np.lexsort([*_number_keys(tolerant, 1, ra), ga[ra]])]
    ke, st_e, ce = runs(ge[oe])
    ka, st_a, ca = runs(ga[oa])
    _, xe, xa = np.intersect1d(ke, ka, assume_unique=True, return_indices=True)
    same = ce[xe] == ca[xa]
    xe, xa = xe[same], xa[same]
    sizes = ce[xe]
    offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    pos_e = np.repeat(st_e[xe], sizes) + offsets
    pos_a = np.repeat(st_a[xa], sizes) + offsets
    pe, pa_ = oe[pos_e], oa[pos_a]
    good = np.ones(len(pe), dtype=bool)
    for p in pairs:
        if p.tolerant:
            good &= tol.close_rows(p.e, pe, p.a, pa_)
        else:
            good &= p.e.codes[pe] == p.a.codes[pa_]
        good &= p.e.null[pe] == p.a.null[pa_]
    paired_e = np.zeros(len(oe), dtype=bool)
    paired_a = np.zeros(len(oa), dtype=bool)
    paired_e[pos_e[good]] = True
    paired_a[pos_a[good]] = True
    return oe[~paired_e], oa[~paired_a]


_MAX_EDGES = 2_000_000


def _bipartite_groups(
    pairs: list[Pair],
    re: np.ndarray,
    ra: np.ndarray,
    ge: np.ndarray,
    ga: np.ndarray,
    tol: Tolerance,
) -> RowMatch:
    """Maximum matching per group, for two or more tolerant columns."""
    tolerant = [p for p in pairs if p.tolerant]
    first = tolerant[0]
    left_e: list[np.ndarray] = []
    left_a: list[np.ndarray] = []
    edges = 0
    for group in np.union1d(ge[re], ga[ra]):
        ee, aa = re[ge[re] == group], ra[ga[ra] == group]
        # Sorted by every number (the first leads), so the matching, and which rows it leaves
        # over for the reason, does not depend on the agent's row order.
        order = np.lexsort(_number_keys(tolerant, 1, aa))
        aa = aa[order]
        fa = _f(first.a)[aa]
        fe = _f(first.e)[ee]
        reach = tol.reach(fe)
        lo = np.searchsorted(fa, fe - reach, side="left")
        hi = np.searchsorted(fa, fe + reach, side="right")
        edges += int((hi - lo).sum())
        if edges > _MAX_EDGES:
            return RowMatch(False, np.sort(re), np.sort(ra), undecided=True)
        adjacency: list[list[int]] = []
        for k, row in enumerate(ee):
            window = aa[lo[k] : hi[k]]
            good = np.ones(len(window), dtype=bool)
            for p in pairs:
                if p.tolerant:
                    good &= tol.close_rows(p.e, np.full(len(window), row), p.a, window)
                else:
                    good &= p.a.codes[window] == p.e.codes[row]
                good &= p.a.null[window] == p.e.null[row]
            adjacency.append([int(j) for j in np.flatnonzero(good) + lo[k]])
        match_e, match_a = max_matching(adjacency, len(aa))
        left_e.append(ee[np.array([m < 0 for m in match_e], dtype=bool)])
        left_a.append(aa[np.array([m < 0 for m in match_a], dtype=bool)])
    ue = np.sort(np.concatenate(left_e)) if left_e else EMPTY
    ua = np.sort(np.concatenate(left_a)) if left_a else EMPTY
    return RowMatch(not len(ue) and not len(ua), ue, ua)


def uncovered(
    pairs: list[Pair],
    rows: np.ndarray,
    others: np.ndarray,
    g_rows: np.ndarray,
    g_others: np.ndarray,
    tol: Tolerance,
) -> np.ndarray:
    """The ``rows`` (of side e) with no close row among ``others`` (of side a)."""
    first = next(p for p in pairs if p.tolerant)
    order = np.lexsort([_f(first.a)[others], g_others[others]])
    cand = others[order]
    keys = g_others[cand]
    values = _f(first.a)[cand]
    missing = []
    for row in rows:
        lo_g = np.searchsorted(keys, g_rows[row], side="left")
        hi_g = np.searchsorted(keys, g_rows[row], side="right")
        value = _f(first.e)[row]
        reach = float(tol.reach(np.array([value]))[0])
        lo = lo_g + np.searchsorted(values[lo_g:hi_g], value - reach, side="left")
        hi = lo_g + np.searchsorted(values[lo_g:hi_g], value + reach, side="right")
        window = cand[lo:hi]
        good = np.ones(len(window), dtype=bool)
        for p in pairs:
            if p.tolerant:
                good &= tol.close_rows(p.e, np.full(len(window), row), p.a, window)
            else:
                good &= p.a.codes[window] == p.e.codes[row]
            good &= p.a.null[window] == p.e.null[row]
        if not good.any():
            missing.append(row)
    return np.array(missing, dtype=np.int64)
