"""The variant suite of one ground truth (docs/verdicts.md, ``variants``): generated data variants
kept, greedily, where some near neighbour of the ground truth gives a different result than the
ground truth does (the distillation of Zhong, Yu and Klein, EMNLP 2020), and the agent's SQL
checked on each of them.

Ground truth that errors or returns no rows on a candidate variant rejects that candidate: the
agent is never judged on a variant where the ground truth itself tells nothing. So does a
candidate on which the ground truth is itself ambiguous: where an ORDER BY ... LIMIT of it has
ties at the limit, so that breaking them one way or the other gives another result.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from sqlbench.compare import Comparison
from sqlbench.engines.base import Engine, ResultSet
from sqlbench.errors import EngineError, QueryError
from sqlbench.grading import compare_under
from sqlbench.project.files import CompareOptions, RunSettings
from sqlbench.truth import transpile_truth
from sqlbench.variants.generate import TruthHints, fingerprint, make_variant
from sqlbench.variants.neighbours import (
    asks_distinct,
    limit_probes,
    neighbours,
    tie_breaks,
    truth_constants,
    truth_order_columns,
)
from sqlbench.variants.source import VariantSource
from sqlbench.verdicts import Verdict

__all__ = ["Variant", "VariantCache", "VariantCheck", "VariantSuite", "build_suite", "check"]

CANDIDATES_PER_VARIANT = 2
"""Candidates generated per variant asked for (the distillation keeps the useful ones)."""


@dataclass(frozen=True)
class Variant:
    """One kept data variant with the ground truth's result on it."""

    number: int
    """Which candidate it was (from 0): with the seed, it rebuilds the same data."""
    fingerprint: str
    built: object
    """Its data as its source stores it; a database is opened on it only while it is used (a
    long run would otherwise hold one open database per variant of every question)."""
    truth: ResultSet
    tells_apart: int
    """How many near neighbours differ from the ground truth on it."""


@dataclass(frozen=True)
class VariantSuite:
    """The kept variants of one ground truth."""

    seed: int
    variants: tuple[Variant, ...]
    neighbours: int
    """Near neighbours of the ground truth tried."""
    told_apart: int
    """Of those, how many some kept variant tells from the ground truth."""
    candidates: int
    rejected: int
    """Candidates where the ground truth errored, was empty or was ambiguous, or whose values
    did not fit the columns."""
    source: VariantSource
    dialect: str
    """The SQL dialect of the variants' databases (the warehouse's)."""


def build_suite(
    source: VariantSource,
    truth_sql: str,
    *,
    truth_dialect: str,
    options: CompareOptions,
    settings: RunSettings,
    count: int,
    seed: int,
) -> VariantSuite:
    """Generate candidates from ``seed`` and keep up to ``count`` that tell neighbours apart.

    Raises:
        QueryError: The ground truth cannot be transpiled to the warehouse's dialect.
    """
    dialect = source.dialect
    sql = transpile_truth(truth_sql, truth_dialect, dialect)
    mutants = neighbours(sql, dialect)
    broken_ties = tie_breaks(sql, dialect)
    probes = limit_probes(sql, dialect)
    hints = TruthHints(truth_constants(sql, dialect), truth_order_columns(sql, dialect))
    tag = hashlib.sha256(sql.encode()).hexdigest()[:12]
    found: list[tuple[Variant, set[int]]] = []
    rejected = 0
    total = count * CANDIDATES_PER_VARIANT
    for number in range(total):
        data = make_variant(source.tables, hints, f"{seed}:{tag}:{number}")
        try:
            built = source.build(data)
        except EngineError:
            rejected += 1
            continue
        killed: set[int] | None = None
        with source.database(built) as engine:
            truth = _truth_on(engine, sql, broken_ties, probes, options, settings, dialect)
            if truth is not None:
                killed = _told_apart(engine, sql, truth, mutants, options, settings, dialect)
        if truth is None or not killed:
            rejected += truth is None
            source.discard(built)
            continue
        variant = Variant(number, fingerprint(data), built, truth, len(killed))
        found.append((variant, killed))
    kept, covered = _distil(found, count)
    for variant, _ in found:
        if variant not in kept:
            source.discard(variant.built)
    return VariantSuite(
        seed=seed,
        variants=tuple(sorted(kept, key=lambda v: v.number)),
        neighbours=len(mutants),
        told_apart=len(covered),
        candidates=total,
        rejected=rejected,
        source=source,
        dialect=dialect,
    )


def _truth_on(
    engine: Engine,
    sql: str,
    broken_ties: tuple[str, str] | None,
    probes: list[tuple[str, int, int]],
    options: CompareOptions,
    settings: RunSettings,
    dialect: str,
) -> ResultSet | None:
    """The ground truth's result on a candidate; None when it errors, is empty, or is
    ambiguous there: a LIMIT of it cuts through tied rows, or its ties broken both ways give
    different results."""
    try:
        truth = engine.run_truth(sql, timeout_s=settings.gold_timeout_s, max_rows=settings.max_rows)
    except QueryError:
        return None
    if truth.num_rows == 0 or all(
        column.null_count == len(column) for column in truth.table.columns
    ):
        return None  # nothing to tell apart (MIN over no rows is one NULL)
    for probe, rows, keys in probes:
        try:
            found = engine.run_truth(probe, timeout_s=settings.gold_timeout_s, max_rows=rows + 1)
        except QueryError:
            continue  # a correlated subquery does not run alone
        table = found.table
        if table.num_rows == rows + 1 and rows > 0:
            # The added key columns, by position (their names may repeat others').
            added = range(table.num_columns - keys, table.num_columns)
            cut = [table.column(i)[rows - 1].as_py() for i in added]
            if cut == [table.column(i)[rows].as_py() for i in added]:
                return None
    if broken_ties is not None:
        try:
            first, second = (
                engine.run_truth(t, timeout_s=settings.gold_timeout_s, max_rows=settings.max_rows)
                for t in broken_ties
            )
        except QueryError:
            return truth
        if not compare_under(first, second, options, sql, dialect).passed:
            return None
    return truth


def _told_apart(
    engine: Engine,
    sql: str,
    truth: ResultSet,
    mutants: list[str],
    options: CompareOptions,
    settings: RunSettings,
    dialect: str,
) -> set[int]:
    """Which neighbours fail against the ground truth on this variant."""
    killed: set[int] = set()
    for index, mutant in enumerate(mutants):
        try:
            result = engine.run_truth(
                mutant, timeout_s=settings.gold_timeout_s, max_rows=settings.max_rows
            )
        except QueryError:
            continue  # a neighbour that does not run tells nothing
        if compare_under(truth, result, options, sql, dialect).verdict is Verdict.FAIL:
            killed.add(index)
    return killed


def _distil(found: list[tuple[Variant, set[int]]], count: int) -> tuple[list[Variant], set[int]]:
    """Greedy cover: each step keeps the candidate telling apart the most neighbours not yet
    told apart; then, while room is left, candidates that tell any neighbour apart."""
    covered: set[int] = set()
    kept: list[Variant] = []
    pool = [(v, k) for v, k in found if k]
    while pool and len(kept) < count:
        best = max(pool, key=lambda item: (len(item[1] - covered), -item[0].number))
        if not best[1] - covered:
            break
        kept.append(best[0])
        covered |= best[1]
        pool.remove(best)
    for variant, _ in pool:
        if len(kept) >= count:
            break
        kept.append(variant)
    return kept, covered


@dataclass(frozen=True)
class VariantCheck:
    """Where the agent's SQL first disagreed with the ground truth on a variant (None fields:
    it agreed on every one)."""

    checked: int
    variant: Variant | None = None
    comparison: Comparison | None = None
    actual: ResultSet | None = None
    error: QueryError | None = None


def check(
    suite: VariantSuite,
    agent_sql: str,
    truth_sql: str,
    *,
    truth_dialect: str,
    options: CompareOptions,
    settings: RunSettings,
) -> VariantCheck:
    """Run ``agent_sql`` on each kept variant and compare with the ground truth there; stops
    at the first that does not pass."""
    sql = transpile_truth(truth_sql, truth_dialect, suite.dialect)
    for checked, variant in enumerate(suite.variants, start=1):
        try:
            actual = suite.source.run_agent(variant.built, agent_sql, settings)
        except QueryError as err:
            return VariantCheck(checked, variant, error=err)
        comparison = compare_under(variant.truth, actual, options, sql, suite.dialect)
        if not comparison.passed and not _another_reading(
            variant.truth, actual, options, sql, suite
        ):
            return VariantCheck(checked, variant, comparison, actual)
    return VariantCheck(len(suite.variants))


def _another_reading(
    truth: ResultSet, actual: ResultSet, options: CompareOptions, sql: str, suite: VariantSuite
) -> bool:
    """Whether the two results hold the same distinct rows and differ only in how often rows
    repeat, where the ground truth does not ask for distinct rows or the agent's repeats
    less: the variant's duplicates then tell another reading of the question, not an error.
    (A ground truth with DISTINCT, GROUP BY or a set operation still fails an answer that
    repeats rows: a missing DISTINCT.)"""
    as_sets = options.model_copy(update={"rows": "set"})
    if not compare_under(truth, actual, as_sets, sql, suite.dialect).passed:
        return False
    return not (asks_distinct(sql, suite.dialect) and actual.num_rows > truth.num_rows)


class _Slot:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.suite: VariantSuite | None = None
        self.error: QueryError | None = None


class VariantCache:
    """Variant suites of one warehouse, built once per (ground truth, count, seed) and shared by
    every answer that needs them (repeated questions reuse their variants)."""

    def __init__(self, source: VariantSource) -> None:
        self.source = source
        self._lock = threading.Lock()
        self._slots: dict[tuple[str, int, int, str], _Slot] = {}

    def suite(
        self,
        truth_sql: str,
        *,
        truth_dialect: str,
        options: CompareOptions,
        settings: RunSettings,
    ) -> VariantSuite:
        """The suite for ``truth_sql`` under ``options.variants`` and ``options.variants_seed``.

        Raises:
            QueryError: The ground truth cannot be transpiled to the warehouse's dialect.
        """
        key = (truth_sql, options.variants, options.variants_seed, options.model_dump_json())
        source = self.source
        with self._lock:
            slot = self._slots.setdefault(key, _Slot())
        with slot.lock:
            if slot.error is not None:
                raise slot.error
            if slot.suite is None:
                try:
                    slot.suite = build_suite(
                        source,
                        truth_sql,
                        truth_dialect=truth_dialect,
                        options=options,
                        settings=settings,
                        count=options.variants,
                        seed=options.variants_seed,
                    )
                except QueryError as err:
                    slot.error = err
                    raise
            return slot.suite

    def close(self) -> None:
        """Forget every suite and remove what their variants hold on disk."""
        with self._lock:
            self._slots.clear()
            self.source.close()
