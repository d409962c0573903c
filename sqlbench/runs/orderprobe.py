"""Deciding the reviews that only the ground truth's ORDER BY keys can decide.

When the agent's rows match the ground truth's only in another order and the ground truth
orders by keys that are not output columns (``SELECT name ... ORDER BY age``), the two results
cannot tell a tie from a wrong order: the comparison says ``review``. The run loop can do
better: run the ground truth again with its ORDER BY keys added as columns
(``engines.nondeterminism.order_probe``), read each row's key, and check the agent's rows
against them. The agent's order is right exactly when the keys, read in the agent's order,
are the ground truth's sequence of keys (rows may move only among rows with equal keys).

Every step that is not certain leaves the review as it is: a probe that does not parse, run
or return the ground truth's own rows in the same order, an agent row whose key cannot be
told (its values occur in the ground truth with different keys, or do not occur exactly).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from sqlbench.compare import Comparison, Finding
from sqlbench.engines.base import Engine, ResultSet
from sqlbench.engines.nondeterminism import order_probe
from sqlbench.errors import QueryError
from sqlbench.grading import Grade
from sqlbench.project.files import RunSettings
from sqlbench.truth import transpile_truth
from sqlbench.verdicts import Verdict


def needs_order_probe(graded: Grade) -> bool:
    """Whether ``graded`` is a review that the ORDER BY probe may decide."""
    comparison = graded.comparison
    return (
        graded.verdict is Verdict.REVIEW
        and comparison is not None
        and comparison.details.problem is Finding.ORDER_UNDECIDABLE
    )


def decide_order(
    engine: Engine,
    truth_sql: str,
    truth_dialect: str,
    expected: ResultSet,
    actual: ResultSet,
    comparison: Comparison,
    settings: RunSettings,
) -> tuple[Verdict, str] | None:
    """Pass or fail with a reason, or None when the probe cannot decide (the review stands).

    Args:
        engine: The warehouse the ground truth ran on.
        truth_sql: The ground truth, as written (in ``truth_dialect``).
        expected: Its result.
        actual: The agent's result.
        comparison: The comparison that said ``order_undecidable`` (its column mapping says
            which agent column holds each ground-truth column).
        settings: The run's limits (``gold_timeout_s``, ``max_rows``).
    """
    probe = order_probe(truth_sql, truth_dialect)
    if probe is None:
        return None
    try:
        sql = transpile_truth(probe.sql, truth_dialect, engine.dialect)
        result = engine.run_truth(
            sql, timeout_s=settings.gold_timeout_s, max_rows=settings.max_rows
        )
    except QueryError:
        return None
    width = expected.table.num_columns
    probed = _rows(result)
    if (
        len(probed) != expected.table.num_rows
        or result.table.num_columns != width + probe.extra_columns
    ):
        return None
    gold = _rows(expected)
    if sorted(repr(row[:width]) for row in probed) != sorted(repr(row) for row in gold):
        return None  # the probe did not reproduce the ground truth's rows
    total = result.table.num_columns
    keys_at = [k if k >= 0 else total + k for k in probe.key_columns]
    gold_keys = [tuple(row[i] for i in keys_at) for row in probed]
    key_of: dict[tuple[Any, ...], set[tuple[Any, ...]]] = {}
    for row, key in zip(probed, gold_keys, strict=True):
        key_of.setdefault(_normal(row[:width]), set()).add(key)
    mapping = comparison.details.column_mapping
    if sorted(mapping) != list(range(width)):
        return None
    agent_keys = []
    for row in _rows(actual):
        values = _normal(tuple(row[mapping[i]] for i in range(width)))
        keys = key_of.get(values)
        if keys is None or len(keys) != 1:
            return None
        agent_keys.append(next(iter(keys)))
    named = (
        "its ORDER BY key as a column"
        if probe.extra_columns == 1
        else "its ORDER BY keys as columns"
    )
    if agent_keys == gold_keys:
        return (
            Verdict.PASS,
            f"results match: {len(gold)} rows in an order the ground truth's ORDER BY allows "
            f"(rows move only among ties; checked by running it again with {named})",
        )
    first = next(i for i, (a, g) in enumerate(zip(agent_keys, gold_keys, strict=True)) if a != g)
    return (
        Verdict.FAIL,
        f"the right rows in a different order: running the ground truth again with {named} "
        f"shows row {first + 1} of the agent's result has key {_shown(agent_keys[first])} "
        f"where the ORDER BY puts {_shown(gold_keys[first])}",
    )


def _rows(result: ResultSet) -> list[tuple[Any, ...]]:
    columns = [column.to_pylist() for column in result.table.columns]
    return list(zip(*columns, strict=True)) if columns else []


def _normal(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Values as lookup keys: numbers of equal value equal (3, 3.0, Decimal('3'), True)."""
    out: list[Any] = []
    for value in row:
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, Decimal | float) and math.isfinite(value) and value == int(value):
            value = int(value)
        elif isinstance(value, float) and math.isnan(value):
            value = None
        out.append(value)
    return tuple(out)


def _shown(key: tuple[Any, ...]) -> str:
    text = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in key)
    return f"({text})" if len(key) > 1 else text
