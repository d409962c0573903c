"""Data variants (SPEC section 4, ``variants``): small changed copies of the tables setup built,
each made deterministically from a seed.

A variant starts from the original rows (at most ``MAX_ROWS`` per table, sampled) and applies,
each with some chance: a row subset, duplicated rows (key columns get fresh values), values moved
to the boundaries of the ground truth's constants (the constant, and one either side), NULLs in
nullable columns that may hold them, and ties in the ground truth's ORDER BY columns (an extreme
value copied onto another row, which makes ties at a LIMIT boundary).

Key columns (declared PRIMARY KEY / UNIQUE; in a table that declares none, a first column named
``id`` or ``..._id``/``...id`` whose integer values are all distinct) are never set to a
boundary, NULL or a tie. A column is nulled only where it is nullable and either already holds a
NULL or its table declares constraints (so the schema says NULL is allowed on purpose).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import pyarrow as pa

from sqlbench.engines.duckdb import BaseTable

__all__ = ["MAX_ROWS", "TruthHints", "fingerprint", "make_variant"]

MAX_ROWS = 300
"""Rows per table in a variant (more are sampled down): each variant costs little."""


@dataclass(frozen=True)
class TruthHints:
    """What of the ground truth the generator aims at."""

    constants: dict[str, list[object]]
    """Column name (lower case) -> constants the ground truth compares it with."""
    order_columns: set[str]
    """Column names (lower case) in its ORDER BY keys."""


def make_variant(tables: list[BaseTable], hints: TruthHints, seed: str) -> list[BaseTable]:
    """One variant of ``tables``, the same for the same ``seed``."""
    rng = random.Random(seed)
    return [_vary(table, hints, rng) for table in tables]


def fingerprint(tables: list[BaseTable]) -> str:
    """A short hash of a variant's contents (what a run records to make it reproducible)."""
    digest = hashlib.sha256()
    for table in tables:
        digest.update(f"{table.schema}.{table.name}\n".encode())
        digest.update(json.dumps(table.data.to_pylist(), default=str).encode())
    return digest.hexdigest()[:16]


def _key_columns(table: BaseTable, rows: list[dict[str, Any]]) -> set[str]:
    declared = {column for key in table.keys for column in key}
    if declared:
        return declared
    if not table.columns:
        return set()
    first = table.columns[0][0]
    lower = first.lower()
    if lower == "id" or lower.endswith("id"):
        values = [row[first] for row in rows]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values) and len(
            set(values)
        ) == len(values):
            return {first}
    return set()


def _vary(table: BaseTable, hints: TruthHints, rng: random.Random) -> BaseTable:
    original: list[dict[str, Any]] = table.data.to_pylist()
    keys = _key_columns(table, original)
    rows = [dict(row) for row in original]
    if len(rows) > MAX_ROWS:
        rows = [rows[i] for i in sorted(rng.sample(range(len(rows)), MAX_ROWS))]
    # Row subset.
    if len(rows) > 1 and rng.random() < 0.5:
        keep = rng.choice((0.5, 0.8))
        kept = [row for row in rows if rng.random() < keep]
        rows = kept or [rng.choice(rows)]
    # Duplicated rows, key columns with fresh values.
    if rows and rng.random() < 0.5:
        for _ in range(rng.randint(1, 3)):
            copy = dict(rng.choice(rows))
            for column in keys:
                fresh = _fresh(column, rows)
                if fresh is None:
                    break
                copy[column] = fresh
            else:
                rows.append(copy)
    changeable = [
        (column, kind) for column, kind, _ in table.columns if column not in keys and rows
    ]
    # Values at the ground truth's boundaries.
    for column, _kind in changeable:
        constants = hints.constants.get(column.lower())
        if not constants or rng.random() < 0.3:
            continue
        for constant in constants:
            for value in _near(constant, rows, column):
                rng.choice(rows)[column] = value
    # Ties in ORDER BY columns (also at a LIMIT boundary: the extremes get a twin).
    for column, _kind in changeable:
        if column.lower() not in hints.order_columns or len(rows) < 2 or rng.random() < 0.3:
            continue
        present = [row[column] for row in rows if row[column] is not None]
        if not present:
            continue
        try:
            extremes = [max(present), min(present)]
        except TypeError:
            continue
        for value in extremes:
            rng.choice(rows)[column] = value
    # NULLs where the schema allows them.
    constrained = bool(table.keys) or any(not nullable for _, _, nullable in table.columns)
    for column, _kind, nullable in table.columns:
        if column in keys or not nullable or not rows or rng.random() < 0.6:
            continue
        has_null = any(row[column] is None for row in original)
        if has_null or constrained:
            rng.choice(rows)[column] = None
    try:
        data = pa.Table.from_pylist(rows, schema=table.data.schema)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        # A moved value the column's type cannot hold (a DECIMAL(3,1) past 99.9): this table
        # keeps its original rows in this variant.
        data = pa.Table.from_pylist(original[:MAX_ROWS], schema=table.data.schema)
    return replace(table, data=data)


def _fresh(column: str, rows: list[dict[str, Any]]) -> object | None:
    values = [row[column] for row in rows if row[column] is not None]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return max(values, default=0) + 1
    if all(isinstance(v, str) for v in values):
        taken = set(values)
        n = len(values)
        while f"v{n}" in taken:
            n += 1
        return f"v{n}"
    return None


def _near(constant: object, rows: list[dict[str, Any]], column: str) -> list[object]:
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
