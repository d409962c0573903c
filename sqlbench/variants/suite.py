"""The variant suite of one ground truth (SPEC section 4, ``variants``): generated data variants
kept, greedily, where some near neighbour of the ground truth gives a different result than the
ground truth does (the distillation of Zhong, Yu and Klein, EMNLP 2020), and the agent's SQL
checked on each of them.

Ground truth that errors or returns no rows on a candidate variant rejects that candidate: the
agent is never judged on a variant where the ground truth itself tells nothing.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from sqlbench.compare import Comparison, compare_results
from sqlbench.engines.base import ResultSet
from sqlbench.engines.duckdb import BaseTable, DuckDBEngine
from sqlbench.errors import QueryError
from sqlbench.project.files import CompareOptions, RunSettings
from sqlbench.truth import transpile_truth
from sqlbench.variants.generate import TruthHints, fingerprint, make_variant
from sqlbench.variants.neighbours import neighbours, truth_constants, truth_order_columns
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
    tables: list[BaseTable]
    """Its data; a database is built from it only while it is used (a long run would
    otherwise hold one open DuckDB per variant of every question)."""
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
    """Candidates where the ground truth errored or was empty."""

    view_sql: tuple[str, ...] = ()
    """The setup's views, re-created in each variant's database."""


def _compare(
    truth: ResultSet, other: ResultSet, options: CompareOptions, sql: str, dialect: str
) -> Comparison:
    return compare_results(
        truth.table,
        other.table,
        order=options.order,
        rows=options.rows,
        abs_tol=options.abs_tol,
        rel_tol=options.rel_tol,
        columns=options.columns,
        expected_sql=sql,
        dialect=dialect,
    )


def build_suite(
    tables: list[BaseTable],
    view_sql: list[str],
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
        QueryError: The ground truth cannot be transpiled to DuckDB.
    """
    sql = transpile_truth(truth_sql, truth_dialect, "duckdb")
    mutants = neighbours(sql, "duckdb")
    hints = TruthHints(truth_constants(sql, "duckdb"), truth_order_columns(sql, "duckdb"))
    tag = hashlib.sha256(sql.encode()).hexdigest()[:12]
    found: list[tuple[Variant, set[int]]] = []
    rejected = 0
    total = count * CANDIDATES_PER_VARIANT
    for number in range(total):
        data = make_variant(tables, hints, f"{seed}:{tag}:{number}")
        engine = DuckDBEngine.from_tables(data, view_sql)
        try:
            truth = engine.run_truth(
                sql, timeout_s=settings.gold_timeout_s, max_rows=settings.max_rows
            )
        except QueryError:
            truth = None
        if truth is None or truth.num_rows == 0:
            rejected += 1
            engine.close()
            continue
        try:
            killed = _told_apart(engine, sql, truth, mutants, options, settings)
        finally:
            engine.close()
        variant = Variant(number, fingerprint(data), data, truth, len(killed))
        found.append((variant, killed))
    kept, covered = _distil(found, count)
    return VariantSuite(
        seed=seed,
        variants=tuple(sorted(kept, key=lambda v: v.number)),
        neighbours=len(mutants),
        told_apart=len(covered),
        candidates=total,
        rejected=rejected,
        view_sql=tuple(view_sql),
    )


def _told_apart(
    engine: DuckDBEngine,
    sql: str,
    truth: ResultSet,
    mutants: list[str],
    options: CompareOptions,
    settings: RunSettings,
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
        if _compare(truth, result, options, sql, "duckdb").verdict is Verdict.FAIL:
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
    sql = transpile_truth(truth_sql, truth_dialect, "duckdb")
    for checked, variant in enumerate(suite.variants, start=1):
        engine = DuckDBEngine.from_tables(variant.tables, list(suite.view_sql))
        try:
            actual = engine.run_agent(
                agent_sql,
                timeout_s=settings.query_timeout_s,
                max_rows=settings.max_rows,
                max_bytes=settings.max_result_bytes,
            )
        except QueryError as err:
            return VariantCheck(checked, variant, error=err)
        finally:
            engine.close()
        comparison = _compare(variant.truth, actual, options, sql, "duckdb")
        if not comparison.passed:
            return VariantCheck(checked, variant, comparison, actual)
    return VariantCheck(len(suite.variants))


class _Slot:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.suite: VariantSuite | None = None
        self.error: QueryError | None = None


class VariantCache:
    """Variant suites of one warehouse, built once per (ground truth, count, seed) and shared by
    every answer that needs them (repeated questions reuse their variants)."""

    def __init__(self, engine: DuckDBEngine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._slots: dict[tuple[str, int, int, str], _Slot] = {}
        self._tables: tuple[list[BaseTable], list[str]] | None = None

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
            QueryError: The ground truth cannot be transpiled to DuckDB.
        """
        key = (truth_sql, options.variants, options.variants_seed, options.model_dump_json())
        with self._lock:
            slot = self._slots.setdefault(key, _Slot())
            if self._tables is None:
                self._tables = self._engine.base_tables()
            tables, views = self._tables
        with slot.lock:
            if slot.error is not None:
                raise slot.error
            if slot.suite is None:
                try:
                    slot.suite = build_suite(
                        tables,
                        views,
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
        """Forget every suite (their databases are closed as soon as they are used)."""
        with self._lock:
            self._slots.clear()
