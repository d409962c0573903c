"""Data variants (docs/verdicts.md, ``variants``): small changed copies of a warehouse's tables,
each made deterministically from a seed.

A variant starts from a sample of the original rows (at most ``MAX_ROWS`` per table: first the
rows holding the ground truth's constants, then random ones; parent rows the kept rows refer to
are added, so references stay whole) and applies, each with some chance: a row subset (rows
that referred to a removed row go with it), duplicated rows (key columns, and text columns
whose values never repeat in a real table of at least ``INFERRED_MIN_ROWS`` rows, get fresh
values: a copy is another entity), values moved to the boundaries of the ground truth's
constants (the constant, and one either side; text only where the real column holds it),
NULLs in nullable columns that hold NULLs in the real data, or in any nullable column of a
table smaller than ``INFERRED_MIN_ROWS`` (not in the ground truth's ORDER BY or MAX/MIN
columns), and ties in the ground truth's ORDER BY columns (an extreme value copied onto
another row, which makes ties at a LIMIT boundary). A small table's rows say little: there
the declared schema decides (a column without a UNIQUE key may repeat, a nullable column may
hold NULL), so a missing DISTINCT and an inner join for a LEFT JOIN are caught on six rows.

Keys and references: key columns (declared PRIMARY KEY / UNIQUE, columns another table's
declared FOREIGN KEY refers to; in a table that declares none, a first column named ``id`` or
``..._id``/``...id`` whose integer values are all distinct) are never set to a boundary, NULL
or a tie, and stay unique. A declared foreign-key column only takes values its referenced
column holds (or NULL where it allows NULLs), so a reference the original data keeps, the
variant keeps too. References the original data itself breaks are left as they are.

Symmetric relations: a table with two columns referring to the same parent column whose real
rows hold every pair both ways (a bond listed from each of its atoms, a route and its return)
stays so in every variant: a row is sampled, kept, dropped and copied together with its mirror
(the two columns swapped), those two columns are never moved, and the other columns the two
directions agree on in the real data stay equal in both. A copy of such a row is made only where
it needs no value that names one pair alone in the real data (a bond id shared by the two
directions of one bond): a copy reusing it would give one bond three atoms.

Mandatory children: where every row of a parent table of at least ``MANDATORY_MIN_ROWS`` rows
has a row of a child table referring to it in the real data (a molecule and its atoms, a bond
and its two connected atoms), every parent row in a variant keeps at least one: sampling takes
one of its children along, and a parent whose children all left (a subset, a moved reference,
a copy with a fresh key) leaves too.

Derived values: what the real data computes from other values, detected from the values once
per warehouse (never from names; on at least 5 rows with 2 distinct values), stays so in every
variant: a child column copying its parent's takes the parent's value again after the moves;
two rows one row refers to and that agree in every real row (a bond and its atoms, one
molecule) keep agreeing (a move breaking it is undone, a link still breaking it leaves); a
parent column totalling (SUM or COUNT) its children's is recomputed from the children the
variant holds; a column the sum of two others of its row stays so (another of the three
follows a moved one, a recomputed total updates the other part); and a date keeps the month
its row's text names where every real row naming a month is dated in it (a 'September
Meeting').

Patterns of two columns: where chance would hardly give them (below ``CHANCE``, were the two
columns' values put together at random), whatever the table's size: two columns whose values
each repeat but never together (one event of each type a month, one budget row per category and
event) are never made to (a move that would is undone, a copy that would is not made), and
where real rows sharing one column's value share another's (an event's name and its type), a
move that breaks it is undone (with what its row keeps in step). Key columns and computed ones
(a total, a part of a row's sum, a copy) are not tested. One-column patterns (a text that never
repeats, a column never NULL, a parent that always has a child) give no such test: n distinct
values or n rows without NULL say nothing of how many values, or how few NULLs, the column
could hold. They are read from tables of ``INFERRED_MIN_ROWS`` rows.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import random
import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

__all__ = [
    "MAX_ROWS",
    "Reference",
    "Table",
    "TruthHints",
    "fingerprint",
    "make_variant",
]

MAX_ROWS = 300
"""Rows sampled per table in a variant (parents referred to may add some): each variant costs
little."""

INFERRED_MIN_ROWS = 50
"""Rows a table needs before its real data, rather than its declared schema, says what its
variants keep of one column: that a text column never repeats (a name: copies get fresh ones),
that a nullable column is never NULL, that every parent row has a child. In a smaller table it
can be chance (six cities in six countries, three pets each with an owner): there a column
without a UNIQUE key may repeat and a nullable one may hold NULL, as the schema allows. Such a
pattern has no chance test (how many values a column could hold, how rarely NULL, its own
rows do not tell); 50 rows rule out that it breaks in one row in ten but for a chance of
0.9 ** 50 = 0.5%, below ``CHANCE``."""

MANDATORY_MIN_ROWS = INFERRED_MIN_ROWS
"""A parent table this large whose every row has a child in the real data keeps that in its
variants."""

CHANCE = 0.01
"""How unlikely a pattern of two columns must be by chance before every variant keeps it:
the probability of seeing it in the real rows were the two columns' values put together at
random (each column keeping its own values)."""

Row = dict[str, Any]


@dataclass(frozen=True)
class Reference:
    """A declared FOREIGN KEY: ``columns`` of the table refer to ``target`` of
    ``schema.table``."""

    columns: tuple[str, ...]
    schema: str
    table: str
    target: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """One table of a warehouse with its rows (the same shape for every kind of warehouse)."""

    schema: str
    name: str
    columns: tuple[tuple[str, str, bool], ...]
    """(name, declared type, nullable) in order."""
    keys: tuple[tuple[str, ...], ...]
    """Declared PRIMARY KEY and UNIQUE column sets."""
    rows: list[Row]
    references: tuple[Reference, ...] = ()
    """Declared FOREIGN KEYs."""
    extra: Any = field(default=None, compare=False)
    """What the warehouse kind needs to rebuild it (DuckDB: the Arrow schema; SQLite: its
    CREATE TABLE statement)."""

    @property
    def qualified(self) -> tuple[str, str]:
        return (self.schema.lower(), self.name.lower())


@dataclass(frozen=True)
class TruthHints:
    """What of the ground truth the generator aims at."""

    constants: dict[str, list[object]]
    """Column name (lower case) -> constants the ground truth compares it with."""
    order_columns: set[str]
    """Column names (lower case) in its ORDER BY keys."""


def fingerprint(tables: list[Table]) -> str:
    """A short hash of a variant's contents (what a run records to make it reproducible)."""
    digest = hashlib.sha256()
    for table in tables:
        digest.update(f"{table.schema}.{table.name}\n".encode())
        digest.update(json.dumps([list(r.values()) for r in table.rows], default=str).encode())
    return digest.hexdigest()[:16]


def _norm(value: object) -> object:
    """A value as references compare it (SQLite compares 3 and '3' alike under affinity)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | Decimal):
        return str(value)
    return value


def _ref_key(row: Row, columns: tuple[str, ...]) -> tuple[object, ...] | None:
    """The row's values in ``columns`` (None when any is NULL: such a reference refers to
    nothing)."""
    if len(columns) == 1:  # most references: one column, no generator to build
        value = row.get(columns[0])
        return None if value is None else (_norm(value),)
    values = tuple([_norm(row.get(c)) for c in columns])
    return None if None in values else values


class _Keys:
    """Each row's ``_ref_key`` under some columns, computed once while this lives: for the
    loops that drop rows until the tables settle, which ask again for the same rows' keys on
    every pass. Rows must not change in place meanwhile (those loops only drop rows); each
    entry holds its row, so no id is reused by another row while it lives."""

    def __init__(self) -> None:
        self._keys: dict[tuple[int, tuple[str, ...]], tuple[Row, tuple[object, ...] | None]] = {}

    def of(self, row: Row, columns: tuple[str, ...]) -> tuple[object, ...] | None:
        entry = self._keys.get((id(row), columns))
        if entry is None:
            entry = self._keys[(id(row), columns)] = (row, _ref_key(row, columns))
        return entry[1]

    def present(self, rows: Iterable[Row], columns: tuple[str, ...]) -> set[tuple[object, ...]]:
        """``_keys_of(rows, columns)``."""
        return {k for row in rows if (k := self.of(row, columns)) is not None}


class _Schema:
    """Keys and references of a set of tables."""

    def __init__(self, tables: list[Table]) -> None:
        self.by_name = {t.qualified: t for t in tables}
        self.refs: list[tuple[Table, Reference]] = [
            (t, r)
            for t in tables
            for r in t.references
            if (r.schema.lower(), r.table.lower()) in self.by_name
            and all(c in {col for col, _, _ in t.columns} for c in r.columns)
        ]
        self.keys: dict[tuple[str, str], list[tuple[str, ...]]] = {}
        for table in tables:
            sets = [tuple(k) for k in table.keys]
            for _, ref in self.refs:
                target = (ref.schema.lower(), ref.table.lower())
                if target == table.qualified and ref.target not in sets:
                    sets.append(ref.target)
            if not sets:
                guessed = _guessed_key(table)
                if guessed is not None:
                    sets.append((guessed,))
            self.keys[table.qualified] = sets
        self.mandatory: list[int] = [
            index
            for index, (child, ref) in enumerate(self.refs)
            if _every_parent_has_a_child(child, ref, self.by_name)
        ]
        """Indexes in ``refs`` of the references whose parents all have children."""
        self.mirrors: dict[tuple[str, str], _Mirror] = {}
        for table in tables:
            mirror = _find_mirror(table, self.refs)
            if mirror is not None:
                self.mirrors[table.qualified] = mirror
        self.natural: dict[tuple[str, str], list[str]] = {}
        for table in tables:
            keys = self.key_columns(table)
            self.natural[table.qualified] = (
                [c for c, _, _ in table.columns if c not in keys and _all_distinct(table.rows, c)]
                if len(table.rows) >= INFERRED_MIN_ROWS
                else []
            )

    def key_columns(self, table: Table) -> set[str]:
        return {c for key in self.keys[table.qualified] for c in key}

    def all_ref_columns(self, table: Table) -> set[str]:
        """Every column of ``table`` in a declared reference."""
        return {
            c for child, ref in self.refs if child.qualified == table.qualified for c in ref.columns
        }

    def ref_columns(self, table: Table) -> dict[str, tuple[Table, Reference]]:
        """FK column -> (the referenced table, the reference), for single-column ones."""
        found: dict[str, tuple[Table, Reference]] = {}
        for child, ref in self.refs:
            if child.qualified == table.qualified and len(ref.columns) == 1:
                found[ref.columns[0]] = (self.by_name[(ref.schema.lower(), ref.table.lower())], ref)
        return found


def _every_parent_has_a_child(
    child: Table, ref: Reference, by_name: dict[tuple[str, str], Table]
) -> bool:
    parent = by_name[(ref.schema.lower(), ref.table.lower())]
    if parent.qualified == child.qualified:
        return False
    wanted = _keys_of(parent.rows, ref.target)
    if len(wanted) < MANDATORY_MIN_ROWS:
        return False
    return wanted <= _keys_of(child.rows, ref.columns)


@dataclass(frozen=True)
class _Mirror:
    """A symmetric relation: ``pair`` holds each pair of values both ways in the real data,
    and the two rows of a pair agree on ``same``."""

    pair: tuple[str, str]
    same: tuple[str, ...]
    naming: tuple[str, ...] = ()
    """Of ``same``, the columns whose every value belongs to one pair alone (a bond id)."""


def _pair_key(row: Row, pair: tuple[str, str]) -> tuple[object, object] | None:
    first, second = _norm(row.get(pair[0])), _norm(row.get(pair[1]))
    return None if first is None or second is None else (first, second)


def _find_mirror(table: Table, refs: list[tuple[Table, Reference]]) -> _Mirror | None:
    """The symmetric pair of ``table``: two single-column references to the same parent
    column such that every real row's pair is also there reversed (at least two rows whose two
    values differ)."""
    by_target: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for child, ref in refs:
        if child.qualified == table.qualified and len(ref.columns) == 1:
            target = (ref.schema.lower(), ref.table.lower(), ref.target)
            by_target.setdefault(target, []).append(ref.columns[0])
    for columns in by_target.values():
        for i, first in enumerate(columns):
            for second in columns[i + 1 :]:
                pair = (first, second)
                rows: dict[tuple[object, object], Row] = {}
                for row in table.rows:
                    key = _pair_key(row, pair)
                    if key is not None:
                        rows.setdefault(key, row)
                crossing = [k for k in rows if k[0] != k[1]]
                if len(crossing) < 2 or any((b, a) not in rows for a, b in crossing):
                    continue
                same = tuple(
                    c
                    for c, _, _ in table.columns
                    if c not in pair
                    and all(
                        _norm(row.get(c)) == _norm(rows[(b, a)].get(c))
                        for (a, b), row in rows.items()
                    )
                )
                return _Mirror(pair, same, _naming(table.rows, pair, same))
    return None


def _naming(rows: list[Row], pair: tuple[str, str], same: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of ``same`` whose values (NULLs aside) each belong to one unordered pair."""
    found = []
    for column in same:
        owner: dict[object, object] = {}
        alone = True
        for row in rows:
            value, key = _norm(row.get(column)), _pair_key(row, pair)
            if value is None or key is None:
                continue
            group = frozenset(key)
            if owner.setdefault(value, group) != group:
                alone = False
                break
        if alone and owner:
            found.append(column)
    return tuple(found)


def _mirrored(row: Row, mirror: _Mirror) -> Row:
    """The row with its pair's two values swapped."""
    first, second = mirror.pair
    return {**row, first: row.get(second), second: row.get(first)}


def _settle(
    schema: _Schema,
    rows: dict[tuple[str, str], list[Row]],
    sampled: list[set[tuple[object, ...]]],
) -> None:
    """Drop rows until the invariants hold again: references whole, a symmetric relation's
    pairs in both directions, parents with mandatory children keeping one."""
    keys = _Keys()
    while True:
        _drop_dangling(schema, rows, sampled, keys)
        mirrored = _keep_mirrored(schema, rows)
        childless = _drop_childless(schema, rows, keys)
        if not mirrored and not childless:
            return


def _drop_childless(schema: _Schema, rows: dict[tuple[str, str], list[Row]], keys: _Keys) -> bool:
    """Drop the parent rows left without a child where every real one has one; whether any
    was dropped."""
    dropped = False
    for index in schema.mandatory:
        child, ref = schema.refs[index]
        name = (ref.schema.lower(), ref.table.lower())
        present = keys.present(rows[child.qualified], ref.columns)
        own = rows[name]
        kept = [row for row in own if (k := keys.of(row, ref.target)) is None or k in present]
        if len(kept) != len(own):
            rows[name] = kept
            dropped = True
    return dropped


def _keep_mirrored(schema: _Schema, rows: dict[tuple[str, str], list[Row]]) -> bool:
    """Drop the rows of symmetric tables whose mirror is gone; whether any was dropped."""
    dropped = False
    for name, mirror in schema.mirrors.items():
        own = rows[name]
        present = {k for row in own if (k := _pair_key(row, mirror.pair)) is not None}
        kept = [
            row
            for row in own
            if (k := _pair_key(row, mirror.pair)) is None or (k[1], k[0]) in present
        ]
        if len(kept) != len(own):
            rows[name] = kept
            dropped = True
    return dropped


def _all_distinct(rows: list[Row], column: str) -> bool:
    """Whether the column holds text that never repeats in the real data (NULLs aside, at
    least two values): a name that tells entities apart, kept unique in copies. (Numbers that
    happen not to repeat, an age, are measures: copies may repeat them.)"""
    values = [row.get(column) for row in rows if row.get(column) is not None]
    return (
        len(values) >= 2
        and all(isinstance(v, str) for v in values)
        and len(set(values)) == len(values)
    )


def _guessed_key(table: Table) -> str | None:
    if not table.columns:
        return None
    first = table.columns[0][0]
    lower = first.lower()
    if lower == "id" or lower.endswith("id"):
        values = [row[first] for row in table.rows]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values) and len(
            set(values)
        ) == len(values):
            return first
    return None


def make_variant(tables: list[Table], hints: TruthHints, seed: str) -> list[Table]:
    """One variant of ``tables``, the same for the same ``seed``."""
    rng = random.Random(seed)
    prepared = _prepared(tables)
    schema = prepared.schema
    rows = _sample(tables, prepared, hints, rng)
    sampled = _valid_keys(schema, rows)
    for table in tables:
        mirror = schema.mirrors.get(table.qualified)
        rows[table.qualified] = _subset(
            rows[table.qualified], rng, None if mirror is None else mirror.pair
        )
    _settle(schema, rows, sampled)
    for table in tables:
        apart = [a for a in prepared.derived.apart if a.table == table.qualified]
        _duplicate(table, schema, rows, rng, apart)
    before = {id(row): dict(row) for own in rows.values() for row in own}
    for table in tables:
        _move_values(table, prepared, rows, hints, rng)
    _keep_derived(schema, prepared.derived, rows, before)
    for _ in range(4):
        if not _keep_patterns(prepared.derived, rows, before):
            break
        _keep_derived(schema, prepared.derived, rows, before)  # what follows the undone moves
    _settle(schema, rows, sampled)
    _recompute_totals(schema, prepared.derived, rows)
    return [replace(t, rows=rows[t.qualified]) for t in tables]


class _Prepared:
    """What sampling needs of the full tables, computed once per set of tables: each
    reference's key per child row and its parent rows by key."""

    def __init__(self, tables: list[Table]) -> None:
        self.tables = tables
        self.schema = _Schema(tables)
        self.child_keys: list[list[tuple[object, ...] | None]] = []
        self.parents: list[dict[tuple[object, ...], list[int]]] = []
        for child, ref in self.schema.refs:
            parent = self.schema.by_name[(ref.schema.lower(), ref.table.lower())]
            self.child_keys.append([_ref_key(row, ref.columns) for row in child.rows])
            index: dict[tuple[object, ...], list[int]] = {}
            for i, row in enumerate(parent.rows):
                key = _ref_key(row, ref.target)
                if key is not None:
                    index.setdefault(key, []).append(i)
            self.parents.append(index)
        self.children: dict[int, dict[tuple[object, ...], list[int]]] = {}
        for number in self.schema.mandatory:
            by_key: dict[tuple[object, ...], list[int]] = {}
            for i, found in enumerate(self.child_keys[number]):
                if found is not None:
                    by_key.setdefault(found, []).append(i)
            self.children[number] = by_key
        self.mirror_rows: dict[tuple[str, str], dict[tuple[object, object], list[int]]] = {}
        for table in tables:
            mirror = self.schema.mirrors.get(table.qualified)
            if mirror is None:
                continue
            by_pair: dict[tuple[object, object], list[int]] = {}
            for i, row in enumerate(table.rows):
                key = _pair_key(row, mirror.pair)
                if key is not None:
                    by_pair.setdefault(key, []).append(i)
            self.mirror_rows[table.qualified] = by_pair
        self._columns: dict[tuple[tuple[str, str], str], list[object]] = {}
        self.derived = _find_derived(self.schema, tables)

    def column(self, table: Table, column: str) -> list[object]:
        """A column's values as references compare them."""
        key = (table.qualified, column)
        if key not in self._columns:
            self._columns[key] = [_norm(row.get(column)) for row in table.rows]
        return self._columns[key]


_PREPARED: dict[int, _Prepared] = {}
_PREPARED_LOCK = threading.Lock()


def _prepared(tables: list[Table]) -> _Prepared:
    """The prepared form of ``tables`` (kept for the few most recent sets of tables)."""
    with _PREPARED_LOCK:
        found = _PREPARED.get(id(tables))
        if found is None or found.tables is not tables:
            found = _Prepared(tables)
            if len(_PREPARED) >= 32:
                _PREPARED.pop(next(iter(_PREPARED)))
            _PREPARED[id(tables)] = found
        return found


def _sample(
    tables: list[Table], prepared: _Prepared, hints: TruthHints, rng: random.Random
) -> dict[tuple[str, str], list[Row]]:
    """At most ``MAX_ROWS`` rows per table (those holding the ground truth's constants first),
    then the rows the kept ones refer to, then rows whose references were whole in the real
    data but are not in the sample are left out."""
    schema = prepared.schema
    kept: dict[tuple[str, str], list[int]] = {}
    for table in tables:
        count = len(table.rows)
        if count <= MAX_ROWS:
            kept[table.qualified] = list(range(count))
            continue
        wanted = _holding_constants(table, prepared, hints)
        if len(wanted) > MAX_ROWS // 2:
            wanted = rng.sample(wanted, MAX_ROWS // 2)
        chosen = set(wanted)
        rest = [i for i in range(count) if i not in chosen]
        chosen.update(rng.sample(rest, MAX_ROWS - len(chosen)))
        kept[table.qualified] = sorted(chosen)
    # Rows the kept ones need join the sample, until none is missing (a few rounds: chains):
    # the other direction of a symmetric pair, the parents referred to, and one child of a
    # parent that has children in every real row.
    for _ in range(12):
        added = False
        for table in tables:
            mirror = schema.mirrors.get(table.qualified)
            if mirror is None:
                continue
            by_pair = prepared.mirror_rows[table.qualified]
            have = set(kept[table.qualified])
            extra = {
                j
                for i in kept[table.qualified]
                if (key := _pair_key(table.rows[i], mirror.pair)) is not None
                for j in by_pair.get((key[1], key[0]), ())
                if j not in have
            }
            if extra:
                kept[table.qualified] = sorted(have | extra)
                added = True
        for index in schema.mandatory:
            child, ref = schema.refs[index]
            parent = schema.by_name[(ref.schema.lower(), ref.table.lower())]
            keys = prepared.child_keys[index]
            present = {k for c in kept[child.qualified] if (k := keys[c]) is not None}
            extra = set()
            for i in kept[parent.qualified]:
                needed = _ref_key(parent.rows[i], ref.target)
                if needed is not None and needed not in present:
                    extra.add(prepared.children[index][needed][0])
                    present.add(needed)
            if extra:
                kept[child.qualified] = sorted(set(kept[child.qualified]) | extra)
                added = True
        for index, (child, ref) in enumerate(schema.refs):
            parent = schema.by_name[(ref.schema.lower(), ref.table.lower())]
            keys = prepared.child_keys[index]
            have = set(kept[parent.qualified])
            extra = {
                i
                for c in kept[child.qualified]
                if (k := keys[c]) is not None
                for i in prepared.parents[index].get(k, ())
                if i not in have
            }
            if extra:
                kept[parent.qualified] = sorted(have | extra)
                added = True
        if not added:
            break
    rows = {t.qualified: [dict(t.rows[i]) for i in kept[t.qualified]] for t in tables}
    _drop_dangling(schema, rows, [set(index) for index in prepared.parents], _Keys())
    return rows


def _holding_constants(table: Table, prepared: _Prepared, hints: TruthHints) -> list[int]:
    """Indexes of the rows holding one of the ground truth's constants in a column it
    compares with them."""
    found: set[int] = set()
    for column, _, _ in table.columns:
        constants = hints.constants.get(column.lower())
        if not constants:
            continue
        wanted = {_norm(c) for c in constants}
        found.update(i for i, v in enumerate(prepared.column(table, column)) if v in wanted)
    return sorted(found)


def _valid_keys(
    schema: _Schema, rows: dict[tuple[str, str], list[Row]], keys: _Keys | None = None
) -> list[set[tuple[object, ...]]]:
    """Per reference, the keys its parent rows hold now (through ``keys``, when given)."""
    keys_of = _keys_of if keys is None else keys.present
    return [keys_of(rows[(r.schema.lower(), r.table.lower())], r.target) for _, r in schema.refs]


def _drop_dangling(
    schema: _Schema,
    rows: dict[tuple[str, str], list[Row]],
    valid_before: list[set[tuple[object, ...]]],
    keys: _Keys,
) -> None:
    """Remove rows whose reference was whole before (its key in ``valid_before``) and is
    broken now, until none is left (a removed row may be referred to)."""
    while True:
        removed = False
        present = _valid_keys(schema, rows, keys)
        for index, (child, ref) in enumerate(schema.refs):
            kept = []
            for row in rows[child.qualified]:
                key = keys.of(row, ref.columns)
                if key is not None and key in valid_before[index] and key not in present[index]:
                    removed = True
                    continue
                kept.append(row)
            rows[child.qualified] = kept
        if not removed:
            return


def _keys_of(rows: Iterable[Row], columns: tuple[str, ...]) -> set[tuple[object, ...]]:
    return {k for row in rows if (k := _ref_key(row, columns)) is not None}


def _subset(rows: list[Row], rng: random.Random, pair: tuple[str, str] | None = None) -> list[Row]:
    """A random part of the rows (of a symmetric table, both directions of a pair or
    neither)."""
    if len(rows) <= 1 or rng.random() >= 0.5:
        return rows
    keep = rng.choice((0.5, 0.8))
    if pair is None:
        kept = [row for row in rows if rng.random() < keep]
        return kept or [rng.choice(rows)]
    decided: dict[object, bool] = {}

    def group(row: Row) -> object:
        key = _pair_key(row, pair)
        return id(row) if key is None else frozenset(key)

    for row in rows:
        name = group(row)
        if name not in decided:
            decided[name] = rng.random() < keep
    kept = [row for row in rows if decided[group(row)]]
    if kept:
        return kept
    chosen = group(rng.choice(rows))
    return [row for row in rows if group(row) == chosen]


def _duplicate(
    table: Table,
    schema: _Schema,
    rows: dict[tuple[str, str], list[Row]],
    rng: random.Random,
    apart: list[_Apart],
) -> None:
    """Copies of random rows; each key of the copy made unique again (a fresh value in a
    column no reference constrains, else another value the referenced column holds). A copy
    that would share both values of an ``_Apart`` pair with a row is not made."""
    own = rows[table.qualified]
    if not own or rng.random() >= 0.5:
        return
    if not schema.keys[table.qualified]:
        return  # without a key a copy is the same fact twice, not another entity
    refs = schema.ref_columns(table)
    fixed = schema.all_ref_columns(table)
    own_refs = [
        (ref, _keys_of(rows[(ref.schema.lower(), ref.table.lower())], ref.target))
        for child, ref in schema.refs
        if child.qualified == table.qualified
    ]
    whole = [
        row
        for row in own
        if all((k := _ref_key(row, ref.columns)) is None or k in held for ref, held in own_refs)
    ]
    if not whole:
        return
    mirror = schema.mirrors.get(table.qualified)
    for _ in range(rng.randint(1, 3)):
        # Copies of rows whose references are whole (a broken one of the real data is not
        # multiplied).
        copy = dict(rng.choice(whole))
        if all(
            _make_unique(copy, key, own, refs, fixed, rows, rng)
            for key in schema.keys[table.qualified]
        ):
            # A column whose values never repeat in the real data (a name) gets a fresh
            # value too: a copy is another entity, not a twin of one.
            _fresh_names(copy, schema.natural[table.qualified], fixed, own)
            if any(_breaking([*own, copy], rule) for rule in apart):
                continue  # another event of that type in that month
            if mirror is None:
                own.append(copy)
                continue
            if any(c in fixed for c in mirror.naming):
                # The copy would share the pair's own reference (one bond, three atoms).
                return
            for column in mirror.naming:
                fresh = _fresh(column, own, copy.get(column))
                if fresh is None:
                    return
                copy[column] = fresh
            key = _pair_key(copy, mirror.pair)
            if key is None or key[0] == key[1]:
                own.append(copy)
                continue
            # A new pair of a symmetric relation comes with its other direction (its own
            # values where a key or a name needs them).
            back = _mirrored(copy, mirror)
            both = [*own, copy]
            unpaired = {c: r for c, r in refs.items() if c not in mirror.pair}
            if all(
                _make_unique(back, k, both, unpaired, fixed | set(mirror.pair), rows, rng)
                for k in schema.keys[table.qualified]
                if tuple(_norm(back.get(c)) for c in k)
                in {tuple(_norm(r.get(c)) for c in k) for r in both}
            ) and _pair_key(back, mirror.pair) == (key[1], key[0]):
                _fresh_names(back, schema.natural[table.qualified], fixed, both)
                if not any(_breaking([*both, back], rule) for rule in apart):
                    own.extend((copy, back))


def _fresh_names(copy: Row, natural: list[str], fixed: set[str], own: list[Row]) -> None:
    for column in natural:
        if column not in fixed:
            fresh = _fresh(column, own, copy.get(column))
            if fresh is not None:
                copy[column] = fresh


def _make_unique(
    copy: Row,
    key: tuple[str, ...],
    own: list[Row],
    refs: dict[str, tuple[Table, Reference]],
    fixed: set[str],
    rows: dict[tuple[str, str], list[Row]],
    rng: random.Random,
) -> bool:
    taken = {tuple(_norm(r.get(c)) for c in key) for r in own}
    free = [c for c in key if c not in fixed]
    for column in free:
        fresh = _fresh(column, own, copy.get(column))
        if fresh is not None:
            copy[column] = fresh
            return True
    for column in key:
        if column not in refs:
            continue
        parent, ref = refs[column]
        target = ref.target[0]
        values = [r[target] for r in rows[parent.qualified] if r.get(target) is not None]
        rng.shuffle(values)
        for value in values[:20]:
            copy[column] = value
            if tuple(_norm(copy.get(c)) for c in key) not in taken:
                return True
    return False


def _move_values(
    table: Table,
    prepared: _Prepared,
    rows: dict[tuple[str, str], list[Row]],
    hints: TruthHints,
    rng: random.Random,
) -> None:
    schema = prepared.schema
    own = rows[table.qualified]
    if not own:
        return
    keys = schema.key_columns(table)
    refs = schema.ref_columns(table)
    multi = schema.all_ref_columns(table) - set(refs)
    mirror = schema.mirrors.get(table.qualified)
    # A symmetric pair's own columns, and the values that name one pair alone, stay put.
    pair = set(mirror.pair) | set(mirror.naming) if mirror is not None else set()
    changeable = [
        c for c, _, _ in table.columns if c not in keys and c not in multi and c not in pair
    ]

    def allowed(column: str) -> set[object] | None:
        """The values a reference column may take (None: any)."""
        if column not in refs:
            return None
        parent, ref = refs[column]
        return {_norm(r.get(ref.target[0])) for r in rows[parent.qualified]}

    # Values at the ground truth's boundaries.
    for column in changeable:
        constants = hints.constants.get(column.lower())
        if not constants or rng.random() < 0.3:
            continue
        permitted = allowed(column)
        held: set[object] | None = None
        for constant in constants:
            for value in _near(constant, own, column):
                if permitted is not None and _norm(value) not in permitted:
                    continue
                if isinstance(value, str):
                    # Text the real column never holds is the ground truth's spelling, not
                    # the data's: placing it would fail an answer that spells it otherwise.
                    # Nor is a name that never repeats given to a second row.
                    if column in schema.natural[table.qualified]:
                        continue
                    held = held if held is not None else set(prepared.column(table, column))
                    if value not in held:
                        continue
                rng.choice(own)[column] = value
    # Ties in ORDER BY columns (also at a LIMIT boundary: the extremes get a twin).
    for column in changeable:
        if column.lower() not in hints.order_columns or len(own) < 2 or rng.random() < 0.3:
            continue
        present = [row[column] for row in own if row[column] is not None]
        if not present:
            continue
        try:
            extremes = [max(present), min(present)]
        except TypeError:
            continue
        for value in extremes:
            rng.choice(own)[column] = value
    # NULLs in nullable columns: where the real data has them, or anywhere in a table too
    # small to show that a column is never NULL (not in ORDER BY or MAX/MIN columns: where a
    # NULL sorts is the engine's choice, not the question's).
    small = len(table.rows) < INFERRED_MIN_ROWS
    for column, _kind, nullable in table.columns:
        if column not in changeable or not nullable or rng.random() < 0.6:
            continue
        if column.lower() in hints.order_columns:
            continue
        if small or any(row.get(column) is None for row in table.rows):
            rng.choice(own)[column] = None
    if mirror is not None:
        _resync(own, mirror, set(changeable))


def _resync(own: list[Row], mirror: _Mirror, changeable: set[str]) -> None:
    """Give each pair's second direction the values of its first in the columns the two
    directions share in the real data."""
    columns = [c for c in mirror.same if c in changeable]
    if not columns:
        return
    first: dict[tuple[object, object], Row] = {}
    for row in own:
        key = _pair_key(row, mirror.pair)
        if key is None:
            continue
        source = first.get((key[1], key[0]))
        if source is None:
            first.setdefault(key, row)
        elif source is not row:
            for column in columns:
                row[column] = source[column]


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _fresh(column: str, rows: list[Row], like: object = None) -> object | None:
    """A value of ``column`` no row holds. Text shaped like ``like`` (the copied row's own
    value) where that ends in a number: the next number after its prefix ('TR372_5' becomes
    'TR372_39' where the rows go up to 'TR372_38'), as the column's own values are made; a
    value of another shape ('v12') would be one the column never holds, and a query reading
    the value's parts (SUBSTR(atom_id, -2)) would read it as something else."""
    values = [row[column] for row in rows if row[column] is not None]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return max(values, default=0) + 1
    if all(isinstance(v, str) for v in values):
        taken = set(values)
        shaped = _NUMBERED.match(like) if isinstance(like, str) else None
        if shaped is not None:
            prefix = shaped.group(1)
            numbers = [
                int(m.group(2))
                for v in values
                if (m := _NUMBERED.match(v)) is not None and m.group(1) == prefix
            ]
            n = max(numbers, default=0) + 1
            while f"{prefix}{n}" in taken:
                n += 1
            return f"{prefix}{n}"
        n = len(values)
        while f"v{n}" in taken:
            n += 1
        return f"v{n}"
    return None


def _near(constant: object, rows: list[Row], column: str) -> list[object]:
    """The constant and its neighbours, in the column's own kind of value (nothing when the
    kinds do not fit)."""
    sample = next((row[column] for row in rows if row[column] is not None), None)
    if sample is None:
        return []
    if isinstance(sample, bool):
        return []
    if isinstance(sample, int) and isinstance(constant, int | float):
        base = int(constant)
        return [base, base - 1, base + 1] if base == constant else [base, base + 1]
    if isinstance(sample, Decimal) and isinstance(constant, int | float):
        exact = Decimal(str(constant))
        return [exact, exact - 1, exact + 1]
    if isinstance(sample, float) and isinstance(constant, int | float):
        return [float(constant), float(constant) - 1, float(constant) + 1]
    if isinstance(sample, str) and isinstance(constant, str):
        return [constant]
    if isinstance(sample, dt.date) and isinstance(constant, str):
        try:
            day = dt.date.fromisoformat(constant[:10])
        except ValueError:
            return []
        values: list[dt.date] = [day, day - dt.timedelta(days=1), day + dt.timedelta(days=1)]
        if isinstance(sample, dt.datetime):
            return [dt.datetime.combine(v, dt.time()) for v in values]
        return list[object](values)
    if isinstance(sample, str) and isinstance(constant, int | float):
        return [str(constant)]
    return []


# Derived values: columns the real data computes from others, kept so in every variant.

_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_WORD = re.compile(r"[a-z]+")
_ISO_MONTH = re.compile(r"^\d{4}-(\d{2})")

_MIN_EVIDENCE = 5
"""Rows an invariant must hold on in the real data (with two distinct values) before
variants keep it: on fewer it can be chance."""


@dataclass(frozen=True)
class _Copy:
    """A child column equal, in every real row, to a column of the parent its reference
    ``ref`` (an index in ``_Schema.refs``) reaches (an event's status copied into its budget)."""

    ref: int
    column: str
    source: str


@dataclass(frozen=True)
class _Agree:
    """The two rows a row of one table refers to through ``first`` and ``second`` (indexes in
    ``_Schema.refs``) agree in every real row: ``first``'s parent's ``first_column`` equals
    ``second``'s parent's ``second_column`` (a bond and each of its atoms, one molecule)."""

    first: int
    first_column: str
    second: int
    second_column: str


@dataclass(frozen=True)
class _Total:
    """A parent column equal, in every real row, to the SUM of ``summed`` (COUNT of rows where
    None) over its children through reference ``ref`` (a budget's spent, its expenses' cost);
    ``empty`` is its value for a parent without children."""

    ref: int
    column: str
    summed: str | None
    empty: object


@dataclass(frozen=True)
class _RowSum:
    """``total`` = ``first`` + ``second`` in every real row of the table (amount = spent +
    remaining)."""

    table: tuple[str, str]
    total: str
    first: str
    second: str


@dataclass(frozen=True)
class _NamedMonth:
    """Every real row of the table whose ``text`` names a month has ``date`` in that month
    (a 'September Meeting' on a September date)."""

    table: tuple[str, str]
    text: str
    date: str


@dataclass(frozen=True)
class _Apart:
    """No two real rows of the table share both ``first`` and ``second`` (NULLs aside), though
    each repeats, and chance would hardly keep them apart (``CHANCE``): one event of each type
    a month."""

    table: tuple[str, str]
    first: str
    second: str


@dataclass(frozen=True)
class _Follows:
    """Real rows of the table sharing a value of ``by`` share ``column`` (NULL counted as a
    value), and chance would hardly make them (``CHANCE``): an event name and its type."""

    table: tuple[str, str]
    by: str
    column: str


@dataclass
class _Derived:
    copies: list[_Copy] = field(default_factory=list)
    agreements: list[_Agree] = field(default_factory=list)
    totals: list[_Total] = field(default_factory=list)
    sums: list[_RowSum] = field(default_factory=list)
    months: list[_NamedMonth] = field(default_factory=list)
    apart: list[_Apart] = field(default_factory=list)
    follows: list[_Follows] = field(default_factory=list)


def _number(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float | Decimal) else 0.0


def _close(a: object, b: object) -> bool:
    """Whether two numbers are equal (floats up to their rounding)."""
    if not (_number(a) and _number(b)):
        return False
    x, y = _float(a), _float(b)
    return abs(x - y) <= 1e-6 * max(1.0, abs(x), abs(y))


def _index(rows: Iterable[Row], column: str) -> dict[object, Row]:
    """Rows by their value in ``column`` (the first row of each value)."""
    found: dict[object, Row] = {}
    for row in rows:
        value = _norm(row.get(column))
        if value is not None:
            found.setdefault(value, row)
    return found


def _equal_columns(
    pairs: list[tuple[Row, Row]], left: list[str], right: list[str]
) -> list[tuple[str, str]]:
    """(a, b) of ``left`` x ``right`` with first[a] == second[b] on every pair (two distinct
    values at least)."""
    found: list[tuple[str, str]] = []
    if len(pairs) < _MIN_EVIDENCE:
        return found
    for a in left:
        for b in right:
            seen: set[object] = set()
            for first, second in pairs:
                value = _norm(first.get(a))
                if value != _norm(second.get(b)):
                    break
                if len(seen) < 2 and value is not None:
                    seen.add(value)
            else:
                if len(seen) >= 2:
                    found.append((a, b))
    return found


def _find_derived(schema: _Schema, tables: list[Table]) -> _Derived:
    """The derived values of the real data (detected from the values, never from names)."""
    derived = _Derived()
    single = [
        (index, child, ref)
        for index, (child, ref) in enumerate(schema.refs)
        if len(ref.columns) == 1 and len(ref.target) == 1
    ]
    parent_rows: dict[int, dict[object, Row]] = {}
    for index, _child, ref in single:
        parent = schema.by_name[(ref.schema.lower(), ref.table.lower())]
        parent_rows[index] = _index(parent.rows, ref.target[0])

    def resolved(index: int, row: Row) -> Row | None:
        key = _norm(row.get(schema.refs[index][1].columns[0]))
        return None if key is None else parent_rows[index].get(key)

    for index, child, ref in single:
        parent = schema.by_name[(ref.schema.lower(), ref.table.lower())]
        if parent.qualified == child.qualified:
            continue
        own = [
            c
            for c, _, _ in child.columns
            if c not in schema.key_columns(child) and c not in schema.all_ref_columns(child)
        ]
        pairs = [(row, found) for row in child.rows if (found := resolved(index, row)) is not None]
        theirs = [c for c, _, _ in parent.columns if c != ref.target[0]]
        for column, source in _equal_columns(pairs, own, theirs):
            derived.copies.append(_Copy(index, column, source))
        derived.totals.extend(_find_totals(schema, index, child, parent))
    for n, (first, child, _) in enumerate(single):
        for second, other, _ in single[n + 1 :]:
            if other.qualified != child.qualified or (
                schema.refs[first][1].columns == schema.refs[second][1].columns
            ):
                continue  # a reference declared twice agrees with itself
            triples = [
                (a, b)
                for row in child.rows
                if (a := resolved(first, row)) is not None
                and (b := resolved(second, row)) is not None
            ]
            left = [c for c, _, _ in schema.by_name[_target(schema, first)].columns]
            right = [c for c, _, _ in schema.by_name[_target(schema, second)].columns]
            for one, two in _equal_columns(triples, left, right):
                derived.agreements.append(_Agree(first, one, second, two))
    for table in tables:
        derived.sums.extend(_find_row_sums(schema, table))
        derived.months.extend(_find_named_months(table))
    computed: set[tuple[tuple[str, str], str]] = {
        *((_target(schema, t.ref), t.column) for t in derived.totals),
        *((s.table, c) for s in derived.sums for c in (s.total, s.first, s.second)),
        *((schema.refs[c.ref][0].qualified, c.column) for c in derived.copies),
    }
    for table in tables:
        apart, follows = _find_patterns(
            schema, table, {c for t, c in computed if t == table.qualified}
        )
        derived.apart.extend(apart)
        derived.follows.extend(follows)
    return derived


def _target(schema: _Schema, index: int) -> tuple[str, str]:
    ref = schema.refs[index][1]
    return (ref.schema.lower(), ref.table.lower())


def _numeric_columns(table: Table, exclude: set[str]) -> list[str]:
    found = []
    for column, _, _ in table.columns:
        if column in exclude:
            continue
        values = [row.get(column) for row in table.rows if row.get(column) is not None]
        if values and all(_number(v) for v in values):
            found.append(column)
    return found


def _find_totals(schema: _Schema, index: int, child: Table, parent: Table) -> list[_Total]:
    ref = schema.refs[index][1]
    summed: list[str | None] = [None, *_numeric_columns(child, schema.key_columns(child))]
    columns = _numeric_columns(parent, schema.key_columns(parent) | schema.all_ref_columns(parent))
    if not columns:
        return []
    groups: dict[object, list[Row]] = {}
    for row in child.rows:
        key = _norm(row.get(ref.columns[0]))
        if key is not None:
            groups.setdefault(key, []).append(row)
    found = []
    for column in columns:
        for name in summed:
            with_children = 0
            values: set[object] = set()
            empty: set[object] = set()
            holds = True
            for row in parent.rows:
                value = row.get(column)
                children = groups.get(_norm(row.get(ref.target[0])), [])
                if not children:
                    if value is not None and not _close(value, 0):
                        holds = False
                        break
                    empty.add(None if value is None else 0)
                    continue
                if name is None:
                    total: object = len(children)
                else:
                    parts = [c.get(name) for c in children if c.get(name) is not None]
                    total = sum(_float(p) for p in parts)
                if value is None or not _close(value, total):
                    holds = False
                    break
                with_children += 1
                values.add(_norm(value))
            if holds and with_children >= _MIN_EVIDENCE and len(values) >= 2 and len(empty) <= 1:
                found.append(_Total(index, column, name, next(iter(empty), 0)))
                break
    return found


def _find_row_sums(schema: _Schema, table: Table) -> list[_RowSum]:
    if len(table.rows) < _MIN_EVIDENCE:
        return []
    columns = _numeric_columns(table, schema.key_columns(table) | schema.all_ref_columns(table))
    if len(columns) < 3 or len(columns) > 40:
        return []
    rows = [r for r in table.rows if all(r.get(c) is not None for c in columns)]
    if len(rows) < len(table.rows) or len({_norm(r.get(c)) for r in rows for c in columns}) < 2:
        return []
    found = []
    for total in columns:
        for i, first in enumerate(columns):
            for second in columns[i + 1 :]:
                if total in (first, second):
                    continue
                if (
                    all(_close(r[total], _float(r[first]) + _float(r[second])) for r in rows)
                    and any(not _close(r[first], 0) for r in rows)
                    and any(not _close(r[second], 0) for r in rows)
                ):
                    found.append(_RowSum(table.qualified, total, first, second))
    return found


def _month_of(value: object) -> int | None:
    if isinstance(value, dt.date):
        return value.month
    if isinstance(value, str):
        matched = _ISO_MONTH.match(value)
        if matched is not None and 1 <= int(matched.group(1)) <= 12:
            return int(matched.group(1))
    return None


def _named_month(text: object) -> int | None:
    """The month a text names (None: none, or more than one)."""
    if not isinstance(text, str):
        return None
    named = {_MONTHS.index(w) + 1 for w in _MONTH_WORD.findall(text.lower()) if w in _MONTHS}
    return named.pop() if len(named) == 1 else None


def _find_named_months(table: Table) -> list[_NamedMonth]:
    dates = [
        c
        for c, _, _ in table.columns
        if any(_month_of(r.get(c)) is not None for r in table.rows[:50])
    ]
    texts = [
        c
        for c, _, _ in table.columns
        if c not in dates and any(isinstance(r.get(c), str) for r in table.rows[:50])
    ]
    found: list[_NamedMonth] = []
    if not dates:
        return found
    for text in texts:
        # A text column stops being read at the first row naming a month no date column has
        # (prose saying "may" does at once), so a long table costs little.
        left, rows, months = list(dates), 0, set[int]()
        for row in table.rows:
            month = _named_month(row.get(text))
            if month is None:
                continue
            left = [d for d in left if _month_of(row.get(d)) == month]
            if not left:
                break
            rows += 1
            months.add(month)
        if left and rows >= _MIN_EVIDENCE and len(months) >= 2:
            found.extend(_NamedMonth(table.qualified, text, date) for date in left)
    return found


def _repeat_pairs(values: Iterable[object]) -> int:
    """Pairs of rows sharing a value (NULLs aside)."""
    counts = Counter(v for v in values if v is not None)
    return sum(c * (c - 1) // 2 for c in counts.values())


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _chance_apart(first: list[object], second: list[object]) -> float:
    """The chance that no two rows share both values (rows with a NULL in either aside) were
    the two columns unrelated: of the rows' N pairs, a share kA/N shares the first value and
    kB/N the second, so E = kA * kB / N pairs are expected to share both, and none does with
    probability about exp(-E) (the birthday bound)."""
    both = [(a, b) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    pairs = len(both) * (len(both) - 1) // 2
    if not pairs:
        return 1.0
    expected = _repeat_pairs(a for a, _ in both) * _repeat_pairs(b for _, b in both) / pairs
    return math.exp(-expected)


def _chance_follows(groups: list[int], counts: Counter[object], rows: int) -> float:
    """The chance that every group of rows sharing a value (``groups``: their sizes) also
    shares the other column's value (``counts``: how often each is held over the ``rows``
    rows) were the two columns unrelated: for a group of m, the share of m-row sets that agree
    on it, sum over values of C(count, m) / C(rows, m); the groups taken as independent."""
    log = 0.0
    for size in groups:
        agree = sum(
            math.exp(_log_comb(c, size) - _log_comb(rows, size))
            for c in counts.values()
            if c >= size
        )
        if agree <= 0.0:
            return 0.0
        log += math.log(min(agree, 1.0))
    return math.exp(log)


def _find_patterns(
    schema: _Schema, table: Table, computed: set[str]
) -> tuple[list[_Apart], list[_Follows]]:
    """Patterns of two columns the real rows keep beyond chance (``CHANCE``): two columns
    whose values each repeat but never together (``_Apart``), and a column whose rows sharing
    a value share another column's (``_Follows``). Key columns are left out (their values
    never repeat, so nothing is learnt from them), and so are the ``computed`` ones, which
    variants derive from others (a total, a part of a row's sum, a copy of a parent's): what
    they share follows from their sources."""
    apart: list[_Apart] = []
    follows: list[_Follows] = []
    if len(table.rows) < _MIN_EVIDENCE:
        return apart, follows
    keys = schema.key_columns(table)
    columns = [c for c, _, _ in table.columns if c not in keys and c not in computed]
    values = {c: [_norm(row.get(c)) for row in table.rows] for c in columns}
    repeats = {c: _repeat_pairs(values[c]) for c in columns}
    rows = len(table.rows)
    pairs = rows * (rows - 1) // 2
    needed = math.log(1 / CHANCE)
    repeating = [c for c in columns if repeats[c]]
    for i, first in enumerate(repeating):
        for second in repeating[i + 1 :]:
            # Chance keeps the two apart unless about needed pairs were expected to meet: a
            # first look on every row, before the pairs are counted on the rows holding both.
            if repeats[first] * repeats[second] / pairs < needed / 2:
                continue
            seen: set[tuple[object, object]] = set()
            for a, b in zip(values[first], values[second], strict=True):
                if a is None or b is None:
                    continue
                if (a, b) in seen:
                    break
                seen.add((a, b))
            else:
                if _chance_apart(values[first], values[second]) < CHANCE:
                    apart.append(_Apart(table.qualified, first, second))
    for by in repeating:
        groups: dict[object, list[int]] = {}
        for index, value in enumerate(values[by]):
            if value is not None:
                groups.setdefault(value, []).append(index)
        shared = [g for g in groups.values() if len(g) > 1]
        held = sum(len(g) for g in groups.values())
        for column in columns:
            if column == by:
                continue
            own = values[column]
            if any(own[i] != own[g[0]] for g in shared for i in g[1:]):
                continue
            counts = Counter(own[i] for g in groups.values() for i in g)
            if len(counts) < 2:
                continue  # one value throughout: nothing follows
            if _chance_follows([len(g) for g in shared], counts, held) < CHANCE:
                follows.append(_Follows(table.qualified, by, column))
    return apart, follows


def _moved(row: Row, before: dict[int, Row], columns: Iterable[str]) -> bool:
    """Whether this variant's moves changed any of ``columns`` in ``row``."""
    snapshot = before.get(id(row))
    return snapshot is not None and any(
        _norm(row.get(c)) != _norm(snapshot.get(c)) for c in columns
    )


def _breaking(rows: list[Row], rule: _Apart | _Follows) -> list[Row]:
    """The rows of a group that breaks ``rule``: two sharing both values, or sharing ``by``
    with two values of ``column``."""
    found: list[Row] = []
    if isinstance(rule, _Apart):
        together: dict[tuple[object, object], list[Row]] = {}
        for row in rows:
            a, b = _norm(row.get(rule.first)), _norm(row.get(rule.second))
            if a is not None and b is not None:
                together.setdefault((a, b), []).append(row)
        for group in together.values():
            if len(group) > 1:
                found.extend(group)
        return found
    by: dict[object, list[Row]] = {}
    for row in rows:
        value = _norm(row.get(rule.by))
        if value is not None:
            by.setdefault(value, []).append(row)
    for group in by.values():
        if len({_norm(r.get(rule.column)) for r in group}) > 1:
            found.extend(group)
    return found


def _keep_patterns(
    derived: _Derived, rows: dict[tuple[str, str], list[Row]], before: dict[int, Row]
) -> bool:
    """Undo the moves that break a pattern of two columns the real rows keep beyond chance,
    until none does (undoing one move can uncover another); whether any was undone. With a
    pattern's two columns go the columns a row keeps in step with them (the other two of a
    row's sum, a date and the text naming its month), so the row keeps those too."""
    rules: list[_Apart | _Follows] = [*derived.apart, *derived.follows]
    steps: list[tuple[tuple[str, str], set[str]]] = [
        *((s.table, {s.total, s.first, s.second}) for s in derived.sums),
        *((m.table, {m.text, m.date}) for m in derived.months),
    ]
    changed = False
    for _ in range(8):
        undone = False
        for rule in rules:
            pair = {rule.first, rule.second} if isinstance(rule, _Apart) else {rule.by, rule.column}
            columns = set(pair)
            for table, together in steps:
                if table == rule.table and together & pair:
                    columns |= together
            for row in _breaking(rows[rule.table], rule):
                if _moved(row, before, pair):
                    _revert(row, before, sorted(columns))
                    undone = True
        if not undone:
            return changed
        changed = True
    return changed


def _revert(row: Row, before: dict[int, Row], columns: Iterable[str]) -> None:
    """Undo this variant's moves of ``columns`` in ``row``."""
    snapshot = before.get(id(row))
    if snapshot is not None:
        for column in columns:
            row[column] = snapshot.get(column)


def _row_sum_holds(row: Row, rule: _RowSum) -> bool:
    total, first, second = row.get(rule.total), row.get(rule.first), row.get(rule.second)
    if total is None or first is None or second is None:
        return total is None and first is None and second is None
    return _close(total, _float(first) + _float(second))


def _follow_row_sum(
    row: Row, rule: _RowSum, before: dict[int, Row], totals: set[tuple[tuple[str, str], str]]
) -> None:
    """Make ``row`` keep ``rule`` after a move: a column the move left alone follows (a part
    before the total, never a column recomputed from children later), or the move is undone."""
    snapshot = before.get(id(row))
    three = (rule.total, rule.first, rule.second)
    changed = {c for c in three if snapshot is None or _norm(row.get(c)) != _norm(snapshot.get(c))}
    for follower in (rule.second, rule.first, rule.total):
        if follower in changed or (rule.table, follower) in totals:
            continue
        if any(row.get(c) is None for c in three if c != follower):
            break
        if follower == rule.total:
            value = _float(row.get(rule.first)) + _float(row.get(rule.second))
        else:
            other = rule.first if follower == rule.second else rule.second
            value = _float(row.get(rule.total)) - _float(row.get(other))
        old = row.get(follower)
        if isinstance(old, int) and not isinstance(old, bool) and not value.is_integer():
            continue  # an integer column cannot hold it
        row[follower] = _like(old, value)
        return
    _revert(row, before, three)


def _keep_derived(
    schema: _Schema,
    derived: _Derived,
    rows: dict[tuple[str, str], list[Row]],
    before: dict[int, Row],
) -> None:
    """After the variant's moves: a row's sum of two of its columns is kept (another of the
    three follows the moved one), a move that breaks a month its text names or two referred
    rows' agreement is not made (a link whose rows still disagree leaves), and child columns
    copying a parent's take its value again."""
    totals = {(_target(schema, t.ref), t.column) for t in derived.totals}
    for rule in derived.sums:
        for row in rows[rule.table]:
            if not _row_sum_holds(row, rule):
                _follow_row_sum(row, rule, before, totals)
    for named in derived.months:
        for row in rows[named.table]:
            month = _named_month(row.get(named.text))
            if month is not None and _month_of(row.get(named.date)) != month:
                _revert(row, before, (named.text, named.date))
    for agree in derived.agreements:
        child, first = schema.refs[agree.first]
        second = schema.refs[agree.second][1]
        firsts = _index(rows[_target(schema, agree.first)], first.target[0])
        seconds = _index(rows[_target(schema, agree.second)], second.target[0])

        ends = (first.columns[0], second.columns[0], firsts, seconds)
        kept = []
        for row in rows[child.qualified]:
            if _agreeing(row, agree, ends, before) is False:
                _revert(row, before, ends[:2])
                if _agreeing(row, agree, ends, before) is False:
                    continue
            kept.append(row)
        rows[child.qualified] = kept
    _follow_copies(schema, derived, rows)


def _agreeing(
    row: Row,
    agree: _Agree,
    ends: tuple[str, str, dict[object, Row], dict[object, Row]],
    before: dict[int, Row],
) -> bool | None:
    """Whether the two rows ``row`` refers to agree (None: one is missing), after undoing the
    moves of the two values where they do not."""
    a = ends[2].get(_norm(row.get(ends[0])))
    b = ends[3].get(_norm(row.get(ends[1])))
    if a is None or b is None:
        return None
    if _norm(a.get(agree.first_column)) == _norm(b.get(agree.second_column)):
        return True
    _revert(a, before, (agree.first_column,))
    _revert(b, before, (agree.second_column,))
    return _norm(a.get(agree.first_column)) == _norm(b.get(agree.second_column))


def _follow_copies(
    schema: _Schema, derived: _Derived, rows: dict[tuple[str, str], list[Row]]
) -> None:
    for copy in derived.copies:
        child, ref = schema.refs[copy.ref]
        parents = _index(rows[_target(schema, copy.ref)], ref.target[0])
        for row in rows[child.qualified]:
            parent = parents.get(_norm(row.get(ref.columns[0])))
            if parent is not None:
                row[copy.column] = parent.get(copy.source)


def _like(old: object, new: float | int) -> object:
    """``new`` in the kind of value ``old`` is."""
    if isinstance(old, bool):
        return new
    if isinstance(old, int) and float(new).is_integer():
        return int(new)
    if isinstance(old, Decimal):
        return Decimal(str(round(float(new), 9)))
    if isinstance(old, float) or isinstance(new, float):
        return round(float(new), 9)
    return new


def _recompute_totals(
    schema: _Schema, derived: _Derived, rows: dict[tuple[str, str], list[Row]]
) -> None:
    """Give parent columns that total their children's the total of the children the variant
    holds (and the row sums they are part of the value that keeps them)."""
    for rule in derived.totals:
        child, ref = schema.refs[rule.ref]
        groups: dict[object, list[Row]] = {}
        for row in rows[child.qualified]:
            key = _norm(row.get(ref.columns[0]))
            if key is not None:
                groups.setdefault(key, []).append(row)
        sums = [s for s in derived.sums if s.table == _target(schema, rule.ref)]
        for row in rows[_target(schema, rule.ref)]:
            old = row.get(rule.column)
            children = groups.get(_norm(row.get(ref.target[0])), [])
            new: object
            if not children:
                new = None if rule.empty is None else _like(old, 0)
            elif rule.summed is None:
                new = _like(old, len(children))
            else:
                parts = [c.get(rule.summed) for c in children if c.get(rule.summed) is not None]
                new = _like(old, sum(_float(p) for p in parts))
            if (new is None and old is None) or (new is not None and _close(new, old)):
                continue
            row[rule.column] = new
            for rowsum in sums:
                if rowsum.total == rule.column or rowsum.first == rule.column:
                    other, minus = rowsum.second, rowsum.first
                else:
                    other, minus = rowsum.first, rowsum.second
                if rule.column not in (rowsum.total, rowsum.first, rowsum.second):
                    continue
                total, part = row.get(rowsum.total), row.get(minus)
                if total is None or part is None:
                    continue
                row[other] = _like(
                    row.get(other),
                    _float(total) - _float(part),
                )
    _follow_copies(schema, derived, rows)
