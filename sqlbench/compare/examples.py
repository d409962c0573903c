"""Example rows for a failing comparison's reason: which unmatched rows are shown, side by side.

A reason reads ``e.g. expected ('APAC', 91), agent ('APAC', 120)``. Under ``order: ignore`` the
agent's row order means nothing, so neither may the example: the agent row shown next to an
unmatched expected row is the unmatched agent row that agrees with it on the most mapped columns
(numbers within tolerance), ties broken by the agent rows' values in sorted order, never by
their positions. The same two result sets in any row order give the same reason. Under strict
order the position is the point ("row 3 is out of place"), so rows pair by position there.

The work is bounded: a handful of vectorized passes over the unmatched agent rows per example
(``_EXAMPLES`` expected rows times the mapped columns), plus one sort of those rows by value.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlbench.compare.columns import Column
from sqlbench.compare.match import Matcher
from sqlbench.compare.pairs import Pair, RowMatch
from sqlbench.compare.values import display_row
from sqlbench.compare.views import Domain, ResultRole

_EXAMPLES = 3
"""Unmatched rows shown per side (the reason uses the first of each)."""


def examples(
    matcher: Matcher, mapping: dict[int, int], rows: RowMatch
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A few unmatched rows of each side, rendered (agent rows in expected-column order).

    The k-th agent example is the k-th expected example's closest unmatched agent row (under
    strict order: the next unmatched agent position); agent rows left over after pairing follow
    in value order.

    Args:
        matcher: the comparison's matcher (views and criteria).
        mapping: expected column position to agent column position (possibly partial).
        rows: how the rows matched under ``mapping``.
    """
    views = matcher.views
    e_rows = [int(r) for r in rows.expected_unmatched[:_EXAMPLES]]
    if matcher.criteria.ties is not None:
        a_rows = [int(r) for r in rows.actual_unmatched[:_EXAMPLES]]
    else:
        a_rows = _partners(matcher, mapping, e_rows, rows.actual_unmatched)
    e_cols = views.columns[ResultRole.EXPECTED]
    a_cols = [views.columns[ResultRole.ACTUAL][mapping[i]] for i in sorted(mapping)]
    return _render(e_cols, e_rows), _render(a_cols, a_rows)


def _partners(
    matcher: Matcher, mapping: dict[int, int], e_rows: list[int], candidates: np.ndarray
) -> list[int]:
    """For each expected row in turn, the not yet chosen agent row agreeing on the most mapped
    columns (the first in value order among equals); then the rest, in value order."""
    if not len(candidates):
        return []
    ordered = candidates[value_order(matcher, mapping, candidates)]
    pairs = [matcher.pair(i, mapping[i]) for i in sorted(mapping)]
    taken = np.zeros(len(ordered), dtype=bool)
    chosen: list[int] = []
    for e in e_rows:
        if taken.all():
            break
        agree = np.zeros(len(ordered), dtype=np.int64)
        for pair in pairs:
            agree += agrees(matcher, pair, e, ordered)
        agree[taken] = -1
        best = int(np.argmax(agree))  # the first of the best, in value order
        taken[best] = True
        chosen.append(int(ordered[best]))
    rest = ordered[~taken][: max(0, _EXAMPLES - len(chosen))]
    return chosen + [int(r) for r in rest]


def agrees(matcher: Matcher, pair: Pair, e: int, a_rows: np.ndarray) -> np.ndarray:
    """Per agent row: does its value in this pair equal expected row ``e``'s (NULL = NULL)?"""
    e_null = bool(pair.expected.null[e])
    a_null: np.ndarray = pair.actual.null[a_rows]
    if e_null:
        return a_null.astype(np.int64)
    if pair.tolerant:
        same = matcher.criteria.tol.close_rows(
            pair.expected, np.full(len(a_rows), e), pair.actual, a_rows
        )
    else:
        same = pair.actual.codes[a_rows] == pair.expected.codes[e]
    agreed: np.ndarray = (same & ~a_null).astype(np.int64)
    return agreed


def value_order(
    matcher: Matcher,
    mapping: dict[int, int],
    rows: np.ndarray,
    side: ResultRole = ResultRole.ACTUAL,
) -> np.ndarray:
    """The order that sorts ``rows`` of one side's result (the agent's by default) by their
    values in the mapped columns (expected-column order; NULLs last), independent of where the
    rows stand."""
    keys: list[np.ndarray] = []
    for i in sorted(mapping):
        j = mapping[i]
        domain = matcher.views.domain(i, j)
        assert domain is not None
        pos = j if side is ResultRole.ACTUAL else i
        column = matcher.views.column(side, pos)
        keys.append(column.null[rows].astype(np.int64))
        keys.append(_sort_key(matcher, column, domain, pos, rows, side))
    if not keys:
        return np.arange(len(rows))
    # lexsort sorts by its last key first; the first mapped column leads.
    order: np.ndarray = np.lexsort(keys[::-1])
    return order


def _sort_key(
    matcher: Matcher,
    column: Column,
    domain: Domain,
    j: int,
    rows: np.ndarray,
    side: ResultRole = ResultRole.ACTUAL,
) -> np.ndarray:
    """Keys that sort a column's values by value. Numbers, instants, times and durations
    have value-derived codes; text, bytes and mixed values get codes in order of first
    appearance, so those are ranked by value here."""
    if domain is Domain.FLOAT:
        view = matcher.views.view(side, j, domain)
        assert view.floats is not None
        return np.where(view.null[rows], 0.0, view.floats[rows])
    if domain in (Domain.TEXT, Domain.BYTES):
        values = column.text if domain is Domain.TEXT else column.binary
        assert values is not None
        taken = values.take(pa.array(rows, type=pa.int64()))
        ranks: np.ndarray = pc.rank(taken, sort_keys="ascending", tiebreaker="dense").to_numpy(
            zero_copy_only=False
        )
        return ranks.astype(np.int64)
    if domain is Domain.BIG_INT:
        assert column.ints is not None
        _, ranked = np.unique(column.ints[rows], return_inverse=True)
        return np.asarray(ranked, dtype=np.int64).reshape(-1)
    if domain is Domain.TAGGED:
        tagged = column.tagged_keys()
        picked = np.array([tagged[int(r)] for r in rows], dtype=object)
        _, inverse = np.unique(picked, return_inverse=True)
        return np.asarray(inverse, dtype=np.int64).reshape(-1)
    codes: np.ndarray = matcher.views.view(side, j, domain).codes[rows]
    return codes


def _render(columns: list[Column], rows: list[int]) -> tuple[str, ...]:
    if not rows:
        return ()
    values = [col.values_at(rows) for col in columns]
    return tuple(display_row([v[k] for v in values]) for k in range(len(rows)))
