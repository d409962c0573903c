"""Row order: whether it matters, and which rows may permute under strict order.

``order: auto`` is strict exactly when the ground truth's *outermost* query has ORDER BY,
decided by parsing with sqlglot (an ORDER BY inside a window or a subquery does not count).
Under strict order, rows whose ORDER BY keys tie may come in any order among themselves; for
that the ORDER BY keys are mapped to output columns where the SQL proves which column a key is
(``sqlbench.compare.orderkeys``); from the first key that is not provably an output column on,
ties are unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

import numpy as np
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlbench.compare.orderkeys import key_positions
from sqlbench.compare.views import View
from sqlbench.dbt.refs import refs_as_names
from sqlbench.sqlstatements import statements


@dataclass(frozen=True)
class OrderPlan:
    """How row order is treated in one comparison."""

    strict: bool
    """Rows are compared in order (possibly permuting within ties)."""
    keys: tuple[int, ...] = ()
    """Expected column positions of the ORDER BY keys that map to output columns (prefix)."""
    complete: bool = True
    """Every ORDER BY key maps to an output column (or there are none): ties are known."""
    order_by: str | None = None
    """The ground truth's outermost ORDER BY clause, as SQL text, for reasons."""
    has_limit: bool = False
    """The outermost query also has LIMIT (for the LIMIT-through-a-tie near miss)."""
    parse_error: str | None = None
    """Why the ground truth's SQL could not be parsed, when it could not."""
    source: str = "order: ignore"
    """Where the decision came from, in words."""


IGNORE = OrderPlan(strict=False)


PLANS_KEPT = 512
"""Order plans remembered (by ground-truth SQL, dialect, order and column names): every
answer to a question is compared with the same ground truth, and parsing it is most of the
plan's cost."""


def plan_order(
    order: str, expected_sql: str | None, dialect: str | None, column_names: list[str]
) -> OrderPlan:
    """Decide how row order is treated.

    Args:
        order: ``ignore``, ``strict`` or ``auto`` (already validated).
        expected_sql: the ground truth's SQL (needed for ``auto``; used for ties by ``strict``).
        dialect: sqlglot dialect of ``expected_sql`` (validated; None: sqlglot's default).
        column_names: the expected result's column names, in order.
    """
    if order == "ignore":
        return IGNORE
    if expected_sql is None:
        return OrderPlan(strict=True, source="order: strict")
    return _planned(order, expected_sql, dialect, tuple(column_names))


@lru_cache(maxsize=PLANS_KEPT)
def _planned(
    order: str, expected_sql: str, dialect: str | None, column_names: tuple[str, ...]
) -> OrderPlan:
    """``plan_order`` for a ground truth's SQL, parsed once per distinct input (the plan is
    immutable and depends on nothing else)."""
    try:
        node = _outermost(expected_sql, dialect)
    except _Unparseable as err:
        return OrderPlan(
            strict=True,
            complete=False,
            parse_error=str(err),
            source=f"order: {order}, but the ground truth's SQL could not be parsed",
        )
    clause = node.args.get("order")
    if clause is None:
        if order == "auto":
            return OrderPlan(strict=False, source="order: auto (no outermost ORDER BY)")
        return OrderPlan(strict=True, source="order: strict")
    keys = key_positions(node, list(column_names), dialect)
    prefix: list[int] = []
    for key in keys:
        if key is None:
            break
        prefix.append(key)
    text = clause.sql(dialect=dialect).strip()
    return OrderPlan(
        strict=True,
        keys=tuple(prefix),
        complete=len(prefix) == len(keys),
        order_by=text,
        has_limit=node.args.get("limit") is not None,
        source=f"order: {order}, ground truth has {text}",
    )


class _Unparseable(Exception):
    pass


def _outermost(sql: str, dialect: str | None) -> exp.Expression:
    try:
        # A dbt model named with {{ ref('m') }} (docs/dbt.md) reads as the table m here.
        found = statements(sqlglot.parse(refs_as_names(sql), read=dialect))
    except SqlglotError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise _Unparseable(first) from err
    if len(found) != 1:
        raise _Unparseable(f"expected one statement, found {len(found)}")
    node = cast(exp.Expression, found[0])
    while isinstance(node, exp.Subquery | exp.Paren) and node.args.get("order") is None:
        node = node.this
    return node


def tie_groups(key_views: list[View], count: int) -> Callable[[np.ndarray | None], np.ndarray]:
    """A function giving, for a sequence of expected rows, the tie-group id of each position.

    Consecutive rows with equal ORDER BY keys share an id; with no keys every position is its
    own group (plain in-order comparison).

    Args:
        key_views: the ORDER BY key columns of the expected result (exact codes).
        count: the expected result's row count.
    """

    def ties(rows: np.ndarray | None) -> np.ndarray:
        size = count if rows is None else len(rows)
        if not key_views:
            return np.arange(size, dtype=np.int64)
        change = np.zeros(size, dtype=bool)
        if size:
            change[0] = True
        for view in key_views:
            codes = view.codes if rows is None else view.codes[rows]
            null = view.null if rows is None else view.null[rows]
            change[1:] |= (codes[1:] != codes[:-1]) | (null[1:] != null[:-1])
        return np.cumsum(change).astype(np.int64)

    return ties
