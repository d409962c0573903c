"""Finding ground truth whose answer is not one fixed result set (for ``validate --execute``).

Two static signs, found by parsing (sqlglot), never by searching the text:

- calls whose value changes between runs: CURRENT_DATE, now(), random(), uuid(), TABLESAMPLE;
- an outermost LIMIT that may cut inside ties of its ORDER BY (or has no ORDER BY at all).

The LIMIT is then probed on the warehouse: the same query with the window widened by one row on
each cut side (``LIMIT n+1``, or ``LIMIT n+2 OFFSET m-1``) and the ORDER BY keys added as extra
columns where they are not selected. When the rows on both sides of a cut have equal keys, two
correct answers exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

_VOLATILE_CLASSES: tuple[tuple[str, str], ...] = (
    ("CurrentDate", "CURRENT_DATE"),
    ("CurrentTimestamp", "CURRENT_TIMESTAMP"),
    ("CurrentTime", "CURRENT_TIME"),
    ("CurrentDatetime", "CURRENT_DATETIME"),
    ("CurrentTimestampLTZ", "CURRENT_TIMESTAMP"),
    ("Localtimestamp", "LOCALTIMESTAMP"),
    ("Localtime", "LOCALTIME"),
    ("Rand", "RANDOM()"),
    ("Randn", "RANDN()"),
    ("Uuid", "UUID()"),
    ("TableSample", "TABLESAMPLE"),
)
_VOLATILE_NAMES = frozenset(
    {
        "now",
        "today",
        "getdate",
        "sysdate",
        "systimestamp",
        "sysdatetime",
        "clock_timestamp",
        "statement_timestamp",
        "transaction_timestamp",
        "timeofday",
        "curdate",
        "curtime",
        "utc_timestamp",
        "utc_date",
        "utc_time",
        "get_current_time",
        "current_localtimestamp",
        "random_uuid",
        "gen_random_uuid",
        "uuidv4",
        "uuidv7",
        "newid",
        "setseed",
    }
)
_KEY_ALIAS = "__sqlbench_key_{}"


def volatile_calls(sql: str, dialect: str) -> list[str]:
    """Names of the calls in ``sql`` whose value changes between runs (empty when none, or
    when sqlglot cannot parse it).

    Example:
        >>> volatile_calls("SELECT * FROM t WHERE d > CURRENT_DATE - 7 AND random() < 0.5",
        ...                "duckdb")
        ['CURRENT_DATE', 'RANDOM()']
    """
    tree = _parse(sql, dialect)
    if tree is None:
        return []
    found: list[str] = []
    classes = [
        (getattr(exp, name), label)
        for name, label in _VOLATILE_CLASSES
        if isinstance(getattr(exp, name, None), type)
    ]
    for node in tree.walk():
        label = next((label for cls, label in classes if isinstance(node, cls)), None)
        if (
            label is None
            and isinstance(node, exp.Anonymous)
            and node.name.lower() in (_VOLATILE_NAMES)
        ):
            label = f"{node.name.upper()}()"
        if label is not None and label not in found:
            found.append(label)
    return sorted(found)


@dataclass(frozen=True)
class LimitProbe:
    """A widened copy of a ground truth's outermost LIMIT, to see the rows around its cuts."""

    sql: str
    """The probe query, in the ground truth's dialect."""
    limit: int
    """The ground truth's LIMIT n."""
    offset: int
    """Its OFFSET m (0 when none)."""
    key_columns: tuple[int, ...] | None
    """Result columns holding the ORDER BY keys; None when there is no ORDER BY."""
    extra_columns: int
    """Key columns the probe added after the ground truth's own columns."""


def limit_probe(sql: str, dialect: str) -> LimitProbe | None:
    """The probe for ``sql``'s outermost LIMIT, or None when it has none (or its keys cannot
    be located, e.g. ``SELECT DISTINCT`` ordered by an unselected expression).

    Example:
        >>> probe = limit_probe("SELECT name FROM t ORDER BY score DESC LIMIT 3", "duckdb")
        >>> probe.sql, probe.key_columns
        ('SELECT name, score AS __sqlbench_key_0 FROM t ORDER BY score DESC LIMIT 4', (-1,))
    """
    tree = _parse(sql, dialect)
    if not isinstance(tree, exp.Select | exp.SetOperation):
        return None
    limit = _int_arg(tree.args.get("limit"))
    if limit is None:
        return None
    offset = _int_arg(tree.args.get("offset")) or 0
    probe = tree.copy()
    order = probe.args.get("order")
    keys: tuple[int, ...] | None = None
    extra = 0
    if order is not None:
        located = _locate_keys(probe, order)
        if located is None:
            return None
        keys, extra = located
    probe.set("limit", exp.Limit(expression=exp.Literal.number(limit + (2 if offset else 1))))
    if offset:
        probe.set("offset", exp.Offset(expression=exp.Literal.number(offset - 1)))
    return LimitProbe(probe.sql(dialect=dialect), limit, offset, keys, extra)


@dataclass(frozen=True)
class OrderProbe:
    """A ground truth with its outermost ORDER BY keys added as output columns."""

    sql: str
    """The probe query, in the ground truth's dialect (LIMIT and OFFSET unchanged)."""
    key_columns: tuple[int, ...]
    """Result columns holding the keys; negative ones count from the end (added keys)."""
    extra_columns: int
    """Key columns the probe added after the ground truth's own columns (at least one)."""


def order_probe(sql: str, dialect: str) -> OrderProbe | None:
    """``sql`` with the ORDER BY keys that are not output columns added at the end, or None
    when there is nothing to add (no ORDER BY, every key selected) or the keys cannot be
    located (``SELECT DISTINCT`` or a set operation ordered by an unselected expression).

    Example:
        >>> probe = order_probe("SELECT name FROM t ORDER BY age DESC, name", "duckdb")
        >>> probe.sql, probe.key_columns
        ('SELECT name, age AS __sqlbench_key_0 FROM t ORDER BY age DESC, name', (-1, 0))
    """
    tree = _parse(sql, dialect)
    if not isinstance(tree, exp.Select | exp.SetOperation):
        return None
    probe = tree.copy()
    order = probe.args.get("order")
    if order is None:
        return None
    located = _locate_keys(probe, order)
    if located is None or located[1] == 0:
        return None
    keys, extra = located
    return OrderProbe(probe.sql(dialect=dialect), keys, extra)


def boundary_ties(probe: LimitProbe, rows: Sequence[Sequence[Any]]) -> str | None:
    """Why the ground truth's LIMIT is ambiguous, given the probe's rows; None when it is not.

    Example:
        >>> probe = LimitProbe("...", limit=2, offset=0, key_columns=(1,), extra_columns=0)
        >>> boundary_ties(probe, [("a", 9), ("b", 7), ("c", 7)])[:60]
        'its LIMIT 2 cuts between rows that tie on the ORDER BY keys '
        >>> boundary_ties(probe, [("a", 9), ("b", 7), ("c", 5)]) is None
        True
    """
    first = 1 if probe.offset else 0
    last = first + probe.limit - 1
    if probe.key_columns is None:
        if len(rows) > last + 1 or (probe.offset and rows):
            return (
                f"its LIMIT {probe.limit} has no ORDER BY, so which rows it keeps is up to "
                "the database"
            )
        return None
    cuts = [(last, last + 1)]
    if probe.offset:
        cuts.insert(0, (0, 1))
    for before, after in cuts:
        if after >= len(rows):
            continue
        left = [rows[before][i] for i in probe.key_columns]
        right = [rows[after][i] for i in probe.key_columns]
        # Equal keys matter only when the rows differ: cutting between duplicates is harmless.
        if left == right and list(rows[before]) != list(rows[after]):
            shown = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in left)
            where = "OFFSET" if (before, after) == (0, 1) and probe.offset else "LIMIT"
            count = probe.offset if where == "OFFSET" else probe.limit
            return (
                f"its {where} {count} cuts between rows that tie on the ORDER BY keys "
                f"({shown}), so more than one answer is correct"
            )
    return None


def _locate_keys(
    probe: exp.Select | exp.SetOperation, order: exp.Order
) -> tuple[tuple[int, ...], int] | None:
    """Result column index of each ORDER BY key, adding unselected keys as extra columns at the
    end (their indexes count from the end, so ``SELECT *`` needs no column count)."""
    is_select = isinstance(probe, exp.Select)
    projections = list(probe.expressions) if is_select else list(probe.selects)
    has_star = any(
        isinstance(p, exp.Star) or (isinstance(p, exp.Column) and p.is_star) for p in projections
    )
    names = [p.alias_or_name for p in projections]
    bodies = [p.unalias().sql() for p in projections]
    keys: list[int] = []
    extras: list[exp.Expr] = []
    for ordered in order.expressions:
        key = ordered.this
        index: int | None = None
        if isinstance(key, exp.Literal) and not key.is_string:
            index = int(key.name) - 1
        elif not has_star and isinstance(key, exp.Column) and not key.table and key.name in names:
            index = names.index(key.name)
        elif not has_star and key.sql() in bodies:
            index = bodies.index(key.sql())
        if index is not None:
            keys.append(index)
            continue
        if not is_select or probe.args.get("distinct") is not None:
            return None
        extras.append(exp.alias_(key.copy(), _KEY_ALIAS.format(len(extras))))
        keys.append(-len(extras))
    if extras:
        assert isinstance(probe, exp.Select)
        probe.select(*extras, copy=False)
    count = len(extras)
    return tuple(k if k >= 0 else -count + (-k - 1) for k in keys), count


def _int_arg(node: exp.Expr | None) -> int | None:
    if node is None:
        return None
    value = node.args.get("count") if isinstance(node, exp.Fetch) else node.expression
    if isinstance(value, exp.Literal) and not value.is_string and value.name.isdigit():
        return int(value.name)
    return None


def _parse(sql: str, dialect: str) -> exp.Expr | None:
    try:
        return sqlglot.parse_one(sql, read=dialect, error_level=ErrorLevel.RAISE)
    except SqlglotError:
        return None
