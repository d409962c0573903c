"""Which output column an ORDER BY key sorts by, when that can be proven from the SQL alone.

Under strict order, rows whose ORDER BY keys tie may permute; the ties are read from the output
column a key sorts by. Mapping a key to the wrong column is a false pass (``ORDER BY e.salary``
read from an output ``m.salary`` sees ties that are not there), so a key maps only when it
provably *is* that output column, and is otherwise unknown (the comparison then never passes a
permutation). A key is an output column when it is:

- a position (``ORDER BY 2``);
- a bare name that is the output name of exactly one projection (``SELECT y AS x ... ORDER BY
  x``: SQL resolves a bare ORDER BY name against the output names first, in PostgreSQL, DuckDB,
  SQLite and MySQL alike); two projections of that name make it unknown;
- the same expression as exactly one projection (``ORDER BY COUNT(*)``, ``ORDER BY m.salary``
  for the projection ``m.salary``), unless it names an output alias that stands for something
  else (``SELECT -x AS x ... ORDER BY -x``: engines differ on which ``x`` that is);
- with one source and no joins, the same input column written with and without its table
  (``SELECT x AS k FROM t ORDER BY t.x``); a qualified key never maps to an alias
  (``SELECT y AS x FROM t ORDER BY t.x`` sorts by the input ``x``, not by the output);
- with ``SELECT *`` (or ``t.*``) alone over one source, the output column of that name.

Identifiers are normalized as ``dialect`` does (unquoted names case-folded where it folds them).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers


def key_positions(node: exp.Expression, names: list[str], dialect: str | None) -> list[int | None]:
    """The output column each ORDER BY key of ``node`` (the outermost query) sorts by.

    Args:
        node: the outermost query, which has an ORDER BY.
        names: the expected result's column names, in order.
        dialect: the sqlglot dialect the SQL was parsed in.

    Returns:
        One entry per ORDER BY key: the 0-based output column, or None when the key is not
        provably an output column.

    Example:
        >>> import sqlglot
        >>> sql = "SELECT e.name, m.salary FROM e JOIN e AS m ON e.boss = m.id ORDER BY e.salary"
        >>> key_positions(sqlglot.parse_one(sql), ["name", "salary"], None)
        [None]
        >>> key_positions(sqlglot.parse_one("SELECT n, y AS x FROM t ORDER BY x"), ["n", "x"], None)
        [1]
    """
    node = normalize_identifiers(node.copy(), dialect=dialect)
    clause = node.args.get("order")
    if clause is None:
        return []
    select, set_operation = _leftmost_select(node)
    return [_key_position(o.this, select, set_operation, names) for o in clause.expressions]


def _leftmost_select(node: exp.Expression) -> tuple[exp.Select | None, bool]:
    """The SELECT whose projections name the output columns, and whether it is one branch of a
    set operation (whose ORDER BY sees only the output, never one branch's inputs)."""
    set_operation = False
    while isinstance(node, exp.SetOperation | exp.Subquery | exp.Paren):
        set_operation |= isinstance(node, exp.SetOperation)
        node = node.this
    return (node if isinstance(node, exp.Select) else None), set_operation


def _key_position(
    key: exp.Expression, select: exp.Select | None, set_operation: bool, names: list[str]
) -> int | None:
    if isinstance(key, exp.Literal) and not key.is_string:
        position = int(key.this) - 1 if key.this.isdigit() else -1
        return position if 0 <= position < len(names) else None
    if select is None:
        return None
    projections = list(select.expressions)
    if any(_is_star(p) for p in projections):
        return None if set_operation else _starred(key, select, projections, names)
    if len(projections) != len(names):
        return None
    if isinstance(key, exp.Column) and not key.table:
        named = [i for i, p in enumerate(projections) if _output_name(p) == key.name]
        if named:
            return _unique(named)  # the output name wins over an input column of that name
    if _names_other_alias(key, projections):
        return None
    same = _unique([i for i, p in enumerate(projections) if p.unalias() == key])
    if same is not None or set_operation or not isinstance(key, exp.Column):
        return same
    source = _single_source(select)
    if source is None or not _in_source(key, source):
        return None
    return _unique(
        [
            i
            for i, p in enumerate(projections)
            if isinstance(p.unalias(), exp.Column)
            and p.unalias().name == key.name
            and _in_source(p.unalias(), source)
        ]
    )


def _starred(
    key: exp.Expression, select: exp.Select, projections: list[exp.Expression], names: list[str]
) -> int | None:
    """``SELECT *`` (or ``t.*``) alone over one source: the output column named like the key."""
    source = _single_source(select)
    if len(projections) != 1 or source is None or not isinstance(key, exp.Column):
        return None
    star = projections[0]
    plain = star.this if isinstance(star, exp.Column) else star
    if any(value for arg, value in plain.args.items() if arg not in _SAME_VALUES):
        return None  # REPLACE / RENAME: an output column of that name holds something else
    if isinstance(star, exp.Column) and star.table != source:
        return None
    if not _in_source(key, source):
        return None
    wanted = key.name.casefold()
    return _unique([i for i, n in enumerate(names) if n.casefold() == wanted])


_SAME_VALUES = frozenset({"this", "except", "except_"})
"""Star modifiers that keep every output column equal to the input column of its name."""


def _is_star(projection: exp.Expression) -> bool:
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and projection.is_star
    )


def _output_name(projection: exp.Expression) -> str | None:
    """The name the SQL gives a projection's output column (an alias, or a column's name);
    None for an unaliased expression (its name is the engine's choice)."""
    if isinstance(projection, exp.Alias):
        return projection.alias
    if isinstance(projection, exp.Column):
        return projection.name
    return None


def _names_other_alias(key: exp.Expression, projections: list[exp.Expression]) -> bool:
    """The key mentions a bare name that is also the alias of a projection other than the
    input column of that name (``-x AS x``): which of the two it means differs by engine."""
    if isinstance(key, exp.Column):
        mentioned = {key.name} if not key.table else set()
    else:
        mentioned = {c.name for c in key.find_all(exp.Column) if not c.table}
    for p in projections:
        if isinstance(p, exp.Alias) and p.alias in mentioned:
            inner = p.unalias()
            if not (isinstance(inner, exp.Column) and not inner.table and inner.name == p.alias):
                return True
    return False


def _single_source(select: exp.Select) -> str | None:
    """The name of the query's only source (``FROM t`` / ``FROM (...) AS s``), or None when
    it reads from several (joins, comma joins, lateral views) or none."""
    source = select.args.get("from_") or select.args.get("from")
    if source is None or select.args.get("joins") or select.args.get("laterals"):
        return None
    if source.expressions:
        return None
    name: str = source.this.alias_or_name
    return name or None


def _in_source(column: exp.Expression, source: str) -> bool:
    """A column reference that can only mean a column of the single source ``source``."""
    if not isinstance(column, exp.Column) or column.args.get("db") or column.args.get("catalog"):
        return False
    return not column.table or column.table == source


def _unique(found: list[int]) -> int | None:
    return found[0] if len(found) == 1 else None
