"""Partial credit: how many of the expected result's cells the agent's result holds.

BIRD's Soft-F1 (mini-dev, ``evaluation_f1.py``) scores a result by its cells: rows are paired,
each paired row's values that the other row also holds are true positives, the agent's other
values false positives, the expected row's other values false negatives; an unpaired expected
row is all false negatives, an unpaired agent row all false positives; two empty results score
1. sqlbench follows that definition, under the verdict's own rules instead of BIRD's looser
ones (docs/verdicts.md, "Partial credit"):

- cells are matched column to column under the comparison's column mapping (BIRD looks a value
  up anywhere in the row), with the verdict's tolerance, NULL equal to NULL;
- the agent's extra columns count as false positives only under ``columns: exact`` (the verdict
  ignores them otherwise); an expected column without a partner is false negatives throughout;
- rows the verdict's row match paired are paired; the rest pair, under ``order: ignore``, each
  expected row with the unpaired agent row agreeing on the most mapped columns (in value order,
  never by position, so the agent's row order does not matter), or, past a work bound, in value
  order; under strict order, by position (as BIRD always does);
- ``rows: set`` counts distinct rows (BIRD drops duplicates always), ``rows: bag`` every row.

Partial credit never changes a verdict. The work is bounded: one row match (the verdict's own
where it has one) and at most ``PAIRING_CELLS`` cell comparisons for the greedy pairing.
"""

from __future__ import annotations

import numpy as np

from sqlbench.compare.examples import agrees, value_order
from sqlbench.compare.match import Matcher
from sqlbench.compare.model import PartialCredit
from sqlbench.compare.pairs import RowMatch
from sqlbench.compare.views import ResultRole

PAIRING_CELLS = 2_000_000
"""Cell comparisons the greedy pairing of unmatched rows may make; past it, the unmatched rows
of both sides pair in value order."""


def full_credit(matcher: Matcher, mapping: dict[int, int]) -> PartialCredit:
    """The credit of a result whose rows all match under ``mapping``."""
    rows_e, rows_a = _counted_rows(matcher, mapping)
    k_e, m = len(matcher.views.columns[ResultRole.EXPECTED]), len(mapping)
    return PartialCredit(len(rows_a) * m, len(rows_a) * m, len(rows_e) * k_e, len(rows_a))


def partial_credit(
    matcher: Matcher, mapping: dict[int, int], rows: RowMatch | None = None
) -> PartialCredit:
    """The cells of the expected result the agent's result holds under ``mapping`` (possibly
    partial). ``rows``: the row match under that mapping, when the caller has it (order
    ignored); it is made here when needed and not given."""
    rows_e, rows_a = _counted_rows(matcher, mapping)
    k_e, m = len(matcher.views.columns[ResultRole.EXPECTED]), len(mapping)
    expected_cells, agent_cells = len(rows_e) * k_e, len(rows_a) * m
    if not m or not len(rows_e) or not len(rows_a):
        return PartialCredit(0, agent_cells, expected_cells, len(rows_a))
    if matcher.criteria.ties is not None:
        short = min(len(rows_e), len(rows_a))
        matched = _agreeing(matcher, mapping, rows_e[:short], rows_a[:short])
        return PartialCredit(matched, agent_cells, expected_cells, len(rows_a))
    if rows is None:
        rows = matcher.rows(mapping, report=True)
    left_e, left_a = rows.expected_unmatched, rows.actual_unmatched
    whole = len(rows_e) - len(left_e)
    matched = whole * m
    if len(left_e) and len(left_a):
        pair_e, pair_a = _pair(matcher, mapping, left_e, left_a)
        matched += _agreeing(matcher, mapping, pair_e, pair_a)
    return PartialCredit(matched, agent_cells, expected_cells, len(rows_a))


def _counted_rows(matcher: Matcher, mapping: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The rows of each side that count: all of them, or under ``rows: set`` each distinct
    row's first occurrence (over the mapped columns, as the row match compares them)."""
    n_e, n_a = matcher.views.rows
    if not matcher.criteria.distinct:
        return np.arange(n_e), np.arange(n_a)
    pairs = [matcher.pair(i, j) for i, j in sorted(mapping.items())]
    if not pairs:  # nothing compared: every row is one and the same empty row
        return np.arange(min(n_e, 1)), np.arange(min(n_a, 1))
    kept_e = matcher.distinct_rows([p.expected for p in pairs], n_e)
    kept_a = matcher.distinct_rows([p.actual for p in pairs], n_a)
    return kept_e, kept_a


def _pair(
    matcher: Matcher, mapping: dict[int, int], left_e: np.ndarray, left_a: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Unmatched expected rows and their agent partners, as two aligned index arrays: the
    pairing with the most agreeing cells (``ASSIGNMENT_ROWS``, ``PAIRING_CELLS``), else the
    two sides in value order."""
    ordered_e = left_e[value_order(matcher, mapping, left_e, ResultRole.EXPECTED)]
    ordered_a = left_a[value_order(matcher, mapping, left_a)]
    small = min(len(left_e), len(left_a)) <= ASSIGNMENT_ROWS
    if not small or len(left_e) * len(left_a) * len(mapping) > PAIRING_CELLS:
        short = min(len(ordered_e), len(ordered_a))
        return ordered_e[:short], ordered_a[:short]
    agree = np.zeros((len(ordered_e), len(ordered_a)), dtype=np.int64)
    for i in sorted(mapping):
        pair = matcher.pair(i, mapping[i])
        for k, e in enumerate(ordered_e.tolist()):
            agree[k] += agrees(matcher, pair, e, ordered_a)
    rows, columns = best_assignment(agree)
    return ordered_e[rows], ordered_a[columns]


ASSIGNMENT_ROWS = 64
"""Unmatched rows (on the smaller side) up to which they pair by the best assignment."""


def best_assignment(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairing of rows with columns (each used at most once, as many pairs as the smaller
    side has) with the largest total weight: the Hungarian method with potentials, O(n^2 m)
    (``n`` the smaller side), its inner loop vectorized. Ties go to the lowest indices.

    Example:
        >>> rows, cols = best_assignment(np.array([[1, 1], [0, 1]]))
        >>> rows.tolist(), cols.tolist()
        ([0, 1], [0, 1])
    """
    flipped = weights.shape[0] > weights.shape[1]
    cost = -(weights.T if flipped else weights).astype(np.float64)
    n, m = cost.shape
    u = np.zeros(n + 1)
    v = np.zeros(m + 1)
    owner = np.zeros(m + 1, dtype=np.int64)  # owner[j]: the row (1-based) holding column j
    way = np.zeros(m + 1, dtype=np.int64)
    for i in range(1, n + 1):
        owner[0] = i
        j0 = 0
        slack = np.full(m + 1, np.inf)
        used = np.zeros(m + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = owner[j0]
            free = ~used[1:]
            reduced = cost[i0 - 1] - u[i0] - v[1:]
            better = free & (reduced < slack[1:])
            slack[1:][better] = reduced[better]
            way[1:][better] = j0
            candidates = np.where(free, slack[1:], np.inf)
            j1 = int(np.argmin(candidates)) + 1
            delta = candidates[j1 - 1]
            u[owner[used]] += delta
            v[used] -= delta
            slack[~used] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:
            j1 = int(way[j0])
            owner[j0] = owner[j1]
            j0 = j1
    columns = np.flatnonzero(owner[1:])
    rows = owner[1:][columns] - 1
    order = np.argsort(rows)
    rows, columns = rows[order], columns[order]
    return (columns, rows) if flipped else (rows, columns)


def _agreeing(
    matcher: Matcher, mapping: dict[int, int], rows_e: np.ndarray, rows_a: np.ndarray
) -> int:
    """How many mapped cells agree between the aligned rows ``rows_e`` and ``rows_a``."""
    total = 0
    tol = matcher.criteria.tol
    for i in sorted(mapping):
        pair = matcher.pair(i, mapping[i])
        null_e, null_a = pair.expected.null[rows_e], pair.actual.null[rows_a]
        if pair.tolerant:
            same = tol.close_rows(pair.expected, rows_e, pair.actual, rows_a)
        else:
            same = pair.expected.codes[rows_e] == pair.actual.codes[rows_a]
        total += int(np.count_nonzero((same & ~null_e & ~null_a) | (null_e & null_a)))
    return total
