"""Near neighbours of a ground-truth query (docs/verdicts.md, ``variants``): small mutations a
wrong answer typically makes. A data variant is worth keeping when one of them gives a
different result there than the ground truth does.

The mutations: each comparison operator changed (BETWEEN's bounds made strict), any one
predicate of an AND or an OR dropped, DISTINCT added or removed, each join's kind changed, each
ORDER BY direction flipped, LIMIT changed, each aggregate function swapped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import sqlglot
from sqlglot import exp

__all__ = [
    "asks_distinct",
    "limit_probes",
    "neighbours",
    "tie_breaks",
    "truth_constants",
    "truth_order_columns",
]

MAX_NEIGHBOURS = 60
"""At most this many neighbours are tried per ground truth (a variant's cost grows with it)."""

_COMPARISONS: dict[type[exp.Expr], list[type[exp.Expr]]] = {
    exp.GT: [exp.GTE, exp.LT, exp.EQ],
    exp.GTE: [exp.GT, exp.LTE, exp.EQ],
    exp.LT: [exp.LTE, exp.GT, exp.EQ],
    exp.LTE: [exp.LT, exp.GTE, exp.EQ],
    exp.EQ: [exp.NEQ, exp.GTE, exp.LTE],
    exp.NEQ: [exp.EQ],
}
_AGGREGATES: dict[type[exp.Expr], list[type[exp.Expr]]] = {
    exp.Max: [exp.Min],
    exp.Min: [exp.Max],
    exp.Sum: [exp.Avg, exp.Max],
    exp.Avg: [exp.Sum, exp.Max],
}
_JOIN_KINDS = ("", "LEFT", "RIGHT", "FULL")


def neighbours(sql: str, dialect: str) -> list[str]:
    """The ground truth's near neighbours as SQL in ``dialect`` (distinct, without ``sql``
    itself, at most ``MAX_NEIGHBOURS``); empty when sqlglot cannot parse it."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return []
    original = tree.sql(dialect=dialect)
    found: list[str] = []
    seen = {original}
    for mutant in _mutants(tree):
        try:
            text = mutant.sql(dialect=dialect)
        except sqlglot.errors.SqlglotError:
            continue
        if text not in seen:
            seen.add(text)
            found.append(text)
        if len(found) >= MAX_NEIGHBOURS:
            break
    return found


def _mutants(tree: exp.Expr) -> Iterator[exp.Expr]:
    """Each mutation applied to its own copy of ``tree``."""
    nodes = list(tree.walk())
    for index, node in enumerate(nodes):
        for change in _changes(node):
            copy = tree.copy()
            target = list(copy.walk())[index]
            changed = change(target)
            if changed is not None:
                yield changed if target is copy else copy


Change = Callable[[exp.Expr], "exp.Expr | None"]


def _changes(node: exp.Expr) -> list[Change]:
    changes: list[Change] = []
    for kind, others in _COMPARISONS.items():
        if type(node) is kind:
            changes += [_replace_binary(other) for other in others]
    if isinstance(node, exp.Between):
        changes += [_strict_between(low=True), _strict_between(low=False)]
    if isinstance(node, exp.And | exp.Or):
        changes += [_keep_side("this"), _keep_side("expression")]
    if isinstance(node, exp.Select):
        changes.append(_toggle_distinct)
        if node.args.get("limit") is not None:
            changes += [_change_limit(+1), _change_limit(-1)]
    if isinstance(node, exp.Join):
        current = str(node.args.get("side") or "").upper()
        changes += [_join_side(side) for side in _JOIN_KINDS if side != current]
    if isinstance(node, exp.Ordered):
        changes.append(_flip_order)
    for kind, swaps in _AGGREGATES.items():
        if type(node) is kind:
            changes += [_swap_aggregate(other) for other in swaps]
    if isinstance(node, exp.Count) and not isinstance(node.this, exp.Star):
        changes.append(_toggle_count_distinct)
    return changes


def _replace_binary(kind: type[exp.Expr]) -> Change:
    def change(node: exp.Expr) -> exp.Expr | None:
        node.replace(kind(this=node.args["this"], expression=node.args["expression"]))
        return node

    return change


def _strict_between(*, low: bool) -> Change:
    def change(node: exp.Expr) -> exp.Expr | None:
        this = node.this
        lower = exp.GT if low else exp.GTE
        upper = exp.LTE if low else exp.LT
        node.replace(
            exp.and_(
                lower(this=this.copy(), expression=node.args["low"].copy()),
                upper(this=this.copy(), expression=node.args["high"].copy()),
            )
        )
        return node

    return change


def _keep_side(side: str) -> Change:
    def change(node: exp.Expr) -> exp.Expr | None:
        kept = node.args.get(side)
        if kept is None:
            return None
        node.replace(kept.copy())
        return node

    return change


def _toggle_distinct(node: exp.Expr) -> exp.Expr | None:
    node.set("distinct", None if node.args.get("distinct") else exp.Distinct())
    return node


def _change_limit(delta: int) -> Change:
    def change(node: exp.Expr) -> exp.Expr | None:
        limit = node.args["limit"]
        value = limit.expression
        if not isinstance(value, exp.Literal) or value.is_string:
            return None
        try:
            number = int(value.this)
        except ValueError:
            return None
        if number + delta < 1:
            return None
        limit.set("expression", exp.Literal.number(number + delta))
        return node

    return change


def _join_side(side: str) -> Change:
    def change(node: exp.Expr) -> exp.Expr | None:
        if node.args.get("on") is None and node.args.get("using") is None:
            return None  # a cross or natural join: no other kind of it means much
        node.set("side", side or None)
        node.set("kind", None)
        return node

    return change


def _flip_order(node: exp.Expr) -> exp.Expr | None:
    node.set("desc", not node.args.get("desc"))
    node.set("nulls_first", None)
    return node


def _swap_aggregate(kind: type[exp.Expr]) -> Change:
    def change(node: exp.Expr) -> exp.Expr | None:
        node.replace(kind(this=node.this.copy()))
        return node

    return change


def _toggle_count_distinct(node: exp.Expr) -> exp.Expr | None:
    inner = node.this
    if isinstance(inner, exp.Distinct):
        expressions = inner.expressions
        if len(expressions) != 1:
            return None
        node.set("this", expressions[0].copy())
    else:
        node.set("this", exp.Distinct(expressions=[inner.copy()]))
    return node


def truth_constants(sql: str, dialect: str) -> dict[str, list[object]]:
    """For each column name (lower case) the ground truth compares with a constant
    (``=``, ``<``, ``BETWEEN``, ``IN`` ...), those constants (numbers as int/float, text as
    str); empty when sqlglot cannot parse it."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return {}
    found: dict[str, list[object]] = {}

    def add(column: exp.Expr, value: exp.Expr) -> None:
        if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
            literal = _literal_value(value.this)
            if isinstance(literal, int | float):
                found.setdefault(column.name.lower(), []).append(-literal)
            return
        if isinstance(column, exp.Column) and isinstance(value, exp.Literal):
            found.setdefault(column.name.lower(), []).append(_literal_value(value))

    for node in tree.walk():
        if isinstance(node, exp.Binary) and any(type(node) is k for k in _COMPARISONS):
            add(node.this, node.expression)
            add(node.expression, node.this)
        elif isinstance(node, exp.Between):
            add(node.this, node.args["low"])
            add(node.this, node.args["high"])
        elif isinstance(node, exp.In):
            for value in node.expressions:
                add(node.this, value)
    return found


def _literal_value(literal: exp.Literal) -> object:
    if literal.is_string:
        return str(literal.this)
    text = str(literal.this)
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def truth_order_columns(sql: str, dialect: str) -> set[str]:
    """Column names (lower case) in the ground truth's ORDER BY keys and under its MAX/MIN,
    anywhere in it: where ties change an answer."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return set()
    names: set[str] = set()
    for node in tree.find_all(exp.Ordered, exp.Max, exp.Min):
        names.update(column.name.lower() for column in node.find_all(exp.Column))
    return names


def tie_breaks(sql: str, dialect: str) -> tuple[str, str] | None:
    """The ground truth with the ties of each ORDER BY ... LIMIT broken by its output columns,
    ascending in the first text and descending in the second (None when it has no such
    ORDER BY, or sqlglot cannot parse it). Where the two give different results, the ground
    truth itself picks among tied rows arbitrarily."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    texts: list[str] = []
    for desc in (False, True):
        copy = tree.copy()
        changed = False
        for select in list(copy.find_all(exp.Select)):
            order = select.args.get("order")
            outputs = select.expressions
            if (
                order is None
                or select.args.get("limit") is None
                or any(isinstance(o, exp.Star) or o.is_star for o in outputs)
            ):
                continue
            keys = [
                exp.Ordered(this=exp.Literal.number(i), desc=desc)
                for i in range(1, len(outputs) + 1)
            ]
            order.set("expressions", [*order.expressions, *keys])
            changed = True
        if not changed:
            return None
        try:
            texts.append(copy.sql(dialect=dialect))
        except sqlglot.errors.SqlglotError:
            return None
    return texts[0], texts[1]


def limit_probes(sql: str, dialect: str) -> list[tuple[str, int, int]]:
    """For each SELECT of the ground truth with ORDER BY and a LIMIT of n rows (not DISTINCT):
    that SELECT alone, with its ORDER BY keys added as last columns and LIMIT n + 1, with n and
    how many key columns were added. Where its rows n and n + 1 hold the same keys, the LIMIT
    cuts through a tie: which rows the ground truth returns is arbitrary, and an answer that
    returns every tied row is as right. (A SELECT that does not run alone, a correlated
    subquery, tells nothing.)"""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return []
    probes: list[tuple[str, int, int]] = []
    for select in tree.find_all(exp.Select):
        order, limit = select.args.get("order"), select.args.get("limit")
        if order is None or limit is None or select.args.get("distinct") is not None:
            continue
        value = limit.expression
        if not isinstance(value, exp.Literal) or value.is_string:
            continue
        try:
            rows = int(value.this)
        except ValueError:
            continue
        aliases = {o.alias.lower(): o.this for o in select.expressions if isinstance(o, exp.Alias)}
        keys: list[exp.Expr] = []
        for ordered in order.expressions:
            key = ordered.this
            if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
                key = aliases[key.name.lower()]
            if isinstance(key, exp.Literal):  # ORDER BY 2: that output column
                try:
                    key = select.expressions[int(key.this) - 1]
                    key = key.this if isinstance(key, exp.Alias) else key
                except (ValueError, IndexError):
                    keys = []
                    break
            keys.append(key.copy())
        if not keys:
            continue
        probe = select.copy()
        probe.set("expressions", [*probe.expressions, *keys])
        probe.set("limit", exp.Limit(expression=exp.Literal.number(rows + 1)))
        try:
            probes.append((probe.sql(dialect=dialect), rows, len(keys)))
        except sqlglot.errors.SqlglotError:
            continue
    return probes


def asks_distinct(sql: str, dialect: str) -> bool:
    """Whether the ground truth's outermost SELECT returns distinct rows on purpose (DISTINCT or
    GROUP BY): then an answer that repeats rows is wrong, not another reading of the
    question."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return False
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    if isinstance(tree, exp.Union | exp.Intersect | exp.Except):
        return not (isinstance(tree, exp.Union) and tree.args.get("distinct") is False)
    if not isinstance(tree, exp.Select):
        return False
    return tree.args.get("distinct") is not None or tree.args.get("group") is not None
