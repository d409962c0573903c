"""What a PostgreSQL build read that is not its own, and whether it changed since (docs/dbt.md,
"On a PostgreSQL warehouse"): a kept build is reused only while its sources are as it found
them.

A build's sources are the relations of the dbt sources its nodes read, every relation a view of
the build names outside the build's schemas (a model's hard-coded ``raw.orders``, found in
``pg_depend`` once built), and every relation the compiled SQL of its other models and snapshots
(tables, incremental models) names outside them (``table_reads``: parsed with sqlglot, CTE names
left out, an unqualified name resolved as the target's ``search_path`` finds it). A node whose
compiled SQL sqlbench cannot read, parse or resolve is recorded as such, and the build is never
reused. The state of a table is its ``pg_class`` oid and ``relfilenode`` (a
``TRUNCATE``, ``VACUUM FULL`` or rewrite gives a new one) and its cumulative
``pg_stat_all_tables`` counters ``n_tup_ins``, ``n_tup_upd`` and ``n_tup_del`` (any committed
write moves one); a missing relation is recorded as missing. The state of a view, materialized
view, foreign table, partitioned table or anything else cannot be checked that way: a build
reading one is never reused. So is one made while ``track_counts`` is off; the database's
``stats_reset`` time and the server's start are part of the state (counters reset, or lost in a
crash, only make sqlbench build again).

The state is kept beside the build's mark, in its schema's comment (``encode``/``decode``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

_TABLE = "table"
_MISSING = "missing"
_SERVER = "(statistics)"
"""The entry of the statistics themselves: ``track_counts``, the database's ``stats_reset``
and the server's start (a crash loses the counters)."""
_KINDS = {
    "v": "view",
    "m": "materialized view",
    "f": "foreign table",
    "p": "partitioned table",
}
"""``pg_class.relkind`` of relations whose data sqlbench cannot check, as said to the user."""
_PREFIX = "reads "
"""Marks the encoded state (``sources `` before table models' reads were recorded: such a build
is not reused, as one that recorded nothing)."""
_UNREAD = "(unread "
"""Entries of nodes whose reads sqlbench could not find: ``(unread <node>)`` -> why."""
_UNCHECKED = frozenset({"view", "ephemeral"})
"""Materializations whose compiled SQL is not parsed: a view's reads are found in ``pg_depend``,
an ephemeral model's SQL is part of the nodes reading it."""

_STATE = """
SELECT n.name, c.oid, c.relkind, c.relfilenode, s.n_tup_ins, s.n_tup_upd, s.n_tup_del
FROM unnest(CAST(:names AS text[])) WITH ORDINALITY AS n(name, i)
LEFT JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(n.name)
LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = c.oid
ORDER BY n.i
"""
_VIEW_READS = """
SELECT DISTINCT
    format('"%s"."%s"', replace(rn.nspname, '"', '""'), replace(rc.relname, '"', '""'))
FROM pg_catalog.pg_depend d
JOIN pg_catalog.pg_rewrite r ON r.oid = d.objid
JOIN pg_catalog.pg_class v ON v.oid = r.ev_class
JOIN pg_catalog.pg_namespace vn ON vn.oid = v.relnamespace
JOIN pg_catalog.pg_class rc ON rc.oid = d.refobjid
JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
WHERE d.classid = 'pg_catalog.pg_rewrite'::regclass
  AND d.refclassid = 'pg_catalog.pg_class'::regclass
  AND vn.nspname = ANY(CAST(:schemas AS text[]))
  AND NOT rn.nspname = ANY(CAST(:schemas AS text[]))
  AND rn.nspname NOT IN ('pg_catalog', 'information_schema')
  AND NOT rc.oid = ANY(CAST(:known AS oid[]))
ORDER BY 1
"""
_OIDS = """
SELECT CAST(c AS oid) FROM unnest(CAST(:names AS text[])) AS n(name),
pg_catalog.to_regclass(n.name) AS c WHERE c IS NOT NULL
"""
_RESOLVE = """
SELECT n.name, c.oid, rn.nspname, c.relname
FROM unnest(CAST(:names AS text[])) AS n(name)
LEFT JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(n.name)
LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = c.relnamespace
"""


def read_state(conn: sa.Connection, names: Iterable[str]) -> dict[str, str]:
    """The state of the relations ``names`` (qualified, quoted as PostgreSQL reads them) and of
    the database's statistics, now: relation -> ``table <oid> <relfilenode> <ins> <upd>
    <del>``, ``missing``, or the kind of a relation that cannot be checked."""
    conn.execute(sa.text("SELECT pg_catalog.pg_stat_clear_snapshot()"))
    server = conn.execute(
        sa.text(
            "SELECT pg_catalog.current_setting('track_counts'), "
            "(SELECT CAST(stats_reset AS text) FROM pg_catalog.pg_stat_database "
            "WHERE datname = pg_catalog.current_database()), "
            "CAST(pg_catalog.pg_postmaster_start_time() AS text)"
        )
    ).one()
    state = {_SERVER: f"track_counts {server[0]} reset {server[1] or 'never'} start {server[2]}"}
    ordered = sorted(set(names))
    for row in conn.execute(sa.text(_STATE), {"names": ordered}):
        name, oid, kind, filenode, *counts = row
        if oid is None:
            state[name] = _MISSING
        elif kind == "r" and None not in counts:
            state[name] = " ".join(str(v) for v in (_TABLE, oid, filenode, *counts))
        else:
            state[name] = _KINDS.get(str(kind), f"relation of kind {kind!r}")
    return state


def view_reads(conn: sa.Connection, schemas: Iterable[str], known: Iterable[str]) -> list[str]:
    """The relations the views in ``schemas`` name outside them (and outside PostgreSQL's own
    catalogs), but for those of ``known`` (names as ``read_state`` takes them)."""
    oids = conn.execute(sa.text(_OIDS), {"names": sorted(set(known))}).scalars()
    found = conn.execute(
        sa.text(_VIEW_READS),
        {"schemas": list(schemas), "known": [int(o) for o in oids]},
    ).scalars()
    return [str(name) for name in found]


@dataclass(frozen=True)
class Compiled:
    """A node a build ran, with the SQL it compiled to (dbt's ``compiled_code``)."""

    name: str
    """The node as said to the user (``model 'totals'``)."""
    materialized: str
    language: str
    code: str | None


def compiled_reads(sql: str) -> list[tuple[str, str]]:
    """The relations ``sql`` (PostgreSQL's dialect, one query) names, as (schema, name); the
    schema is empty for an unqualified name, a database named is left out (PostgreSQL reads
    only its own). CTE names are left out, and table functions.

    Raises:
        ValueError: ``sql`` is not one query sqlglot parses.

    Example:
        >>> compiled_reads('''with o as (select * from Raw.Orders) select * from o
        ...     join "db"."S"."x" on true where exists (select 1 from c)''')
        [('', 'c'), ('S', 'x'), ('raw', 'orders')]
    """
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
    from sqlglot.optimizer.scope import traverse_scope

    try:
        statements = [s for s in sqlglot.parse(sql, read="postgres") if s is not None]
    except SqlglotError as err:
        raise ValueError(f"its compiled SQL does not parse ({err})") from err
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise ValueError("its compiled SQL is not one query")
    tree = normalize_identifiers(statements[0], dialect="postgres")
    try:
        ctes = {
            id(table)
            for scope in traverse_scope(tree)
            for table in scope.tables
            if not table.args.get("db") and table.name in scope.cte_sources
        }
    except SqlglotError as err:
        raise ValueError(f"its compiled SQL does not resolve ({err})") from err
    found = {
        (table.db, table.name)
        for table in tree.find_all(exp.Table)
        if isinstance(table.this, exp.Identifier) and id(table) not in ctes
    }
    return sorted(found)


def table_reads(
    conn: sa.Connection,
    nodes: Iterable[Compiled],
    schemas: Iterable[str],
    known: Iterable[str],
    search_path: str | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The relations the compiled SQL of ``nodes`` (but views) names outside ``schemas`` and
    PostgreSQL's own catalogs, but for those of ``known``; and the entries of the state that
    say which nodes sqlbench could not read that way (an unqualified name is resolved by
    ``to_regclass`` with ``search_path``, the target's, when it sets one)."""
    unread: dict[str, str] = {}
    names: dict[str, list[str]] = {}
    qualified: set[str] = set()
    for node in nodes:
        if node.materialized in _UNCHECKED:
            continue
        if node.language != "sql" or not node.code:
            unread[f"{_UNREAD}{node.name})"] = f"sqlbench has no compiled SQL of {node.name}"
            continue
        try:
            found = compiled_reads(node.code)
        except ValueError as err:
            unread[f"{_UNREAD}{node.name})"] = f"sqlbench cannot tell what {node.name} reads: {err}"
            continue
        except Exception as err:  # sqlglot's own failure: the build is never reused, said so
            unread[f"{_UNREAD}{node.name})"] = (
                f"sqlbench cannot tell what {node.name} reads: sqlglot failed on its compiled "
                f"SQL ({type(err).__name__})"
            )
            continue
        for schema, table in found:
            name = f"{_quoted(schema)}.{_quoted(table)}" if schema else _quoted(table)
            names.setdefault(name, []).append(node.name)
            if schema:
                qualified.add(name)
    if not names:
        return [], unread
    own = set(schemas) | {"pg_catalog", "information_schema"}
    if search_path:
        conn.execute(
            sa.text("SELECT pg_catalog.set_config('search_path', :path, false)"),
            {"path": search_path},
        )
    try:
        rows = conn.execute(sa.text(_RESOLVE), {"names": sorted(names)}).all()
    finally:
        if search_path:
            conn.execute(sa.text("RESET search_path"))
    skip = {
        int(oid) for oid in conn.execute(sa.text(_OIDS), {"names": sorted(set(known))}).scalars()
    }
    reads = set()
    for name, oid, schema, relation in rows:
        if oid is None and name not in qualified:
            for reader in names[name]:
                unread.setdefault(
                    f"{_UNREAD}{reader})",
                    f"{reader} reads {name}, which sqlbench cannot find on the search path",
                )
        elif oid is None:
            reads.add(name)  # missing now: its creation is a change
        elif schema not in own and int(oid) not in skip:
            reads.add(f"{_quoted(schema)}.{_quoted(relation)}")
    return sorted(reads), unread


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def unchanged(recorded: Mapping[str, str] | None, now: Mapping[str, str]) -> str | None:
    """Why a build that found its sources as ``recorded`` cannot be reused with them as they
    are ``now`` (read for the same relations), or None when it can.

    Example:
        >>> was = {"(statistics)": "track_counts on reset never", '"raw"."t"': "table 1 1 5 0 0"}
        >>> unchanged(was, was) is None
        True
        >>> unchanged(was, {**was, '"raw"."t"': "table 1 1 6 0 0"})
        'sources changed since the kept build: "raw"."t"'
        >>> unchanged({**was, '"raw"."v"': "view"}, {**was, '"raw"."v"': "view"})
        'the kept build read "raw"."v", a view, whose changes sqlbench cannot see'
        >>> unchanged({**was, "(unread model 'm')": "model 'm' reads x, not found"}, was)
        "the kept build cannot be checked: model 'm' reads x, not found"
    """
    if recorded is None:
        return "the kept build has no record of its sources"
    for name in sorted(recorded):
        if name.startswith(_UNREAD):
            return f"the kept build cannot be checked: {recorded[name]}"
    if not now.get(_SERVER, "").startswith("track_counts on "):
        return "the kept build cannot be checked: PostgreSQL's track_counts is off"
    names = relations({**recorded, **now})
    for name in names:
        state = now.get(name, _MISSING)
        if state != _MISSING and not state.startswith(f"{_TABLE} "):
            return f"the kept build read {name}, a {state}, whose changes sqlbench cannot see"
    if recorded.get(_SERVER) != now.get(_SERVER):
        return (
            "sources changed since the kept build: PostgreSQL's statistics were reset or the "
            "server restarted"
        )
    for name in names:
        if recorded.get(name, _MISSING) != now.get(name, _MISSING):
            return f"sources changed since the kept build: {name}"
    return None


def relations(recorded: Mapping[str, str] | None) -> list[str]:
    """The relations a recorded state is of (its entry for the statistics left out)."""
    return sorted(name for name in (recorded or {}) if not name.startswith("("))


def encode(state: Mapping[str, str]) -> str:
    """``state`` as a line of a schema comment (base64: any relation name, no quoting).

    Example:
        >>> decode(encode({'"raw"."o\\'k"': "missing"}))
        {'"raw"."o\\'k"': 'missing'}
    """
    text = json.dumps(dict(sorted(state.items())), separators=(",", ":"))
    return _PREFIX + base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii")


def decode(line: str) -> dict[str, str] | None:
    """A state ``encode`` wrote, or None when ``line`` is not one."""
    if not line.startswith(_PREFIX):
        return None
    try:
        data: Any = json.loads(base64.urlsafe_b64decode(line[len(_PREFIX) :].encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        return None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        return None
    return dict(data)
