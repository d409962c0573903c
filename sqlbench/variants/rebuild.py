"""One kept data variant rebuilt from what a run recorded (``sqlbench show RUN QUESTION
--variant K``): the same seed, ground truth and candidate number make the same data, and its
fingerprint proves it. Only the tables the ground truth and the agent's SQL read are shown."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from sqlbench.engines.base import Engine, ResultSet
from sqlbench.errors import QueryError
from sqlbench.project.files import CompareOptions, RunSettings
from sqlbench.truth import transpile_truth
from sqlbench.variants.generate import Table, TruthHints, fingerprint, make_variant
from sqlbench.variants.neighbours import truth_constants, truth_order_columns
from sqlbench.variants.source import VariantSource

__all__ = [
    "RebuiltVariant",
    "candidate_seed",
    "matching_neighbour",
    "rebuild_variant",
    "truth_hints",
]


def truth_hints(sql: str, dialect: str) -> TruthHints:
    """What of the ground truth (in the warehouse's ``dialect``) the generator aims at."""
    return TruthHints(truth_constants(sql, dialect), truth_order_columns(sql, dialect))


def candidate_seed(seed: int, sql: str, number: int) -> str:
    """The seed of candidate ``number`` of the suite of ``sql`` (in the warehouse's dialect)."""
    tag = hashlib.sha256(sql.encode()).hexdigest()[:12]
    return f"{seed}:{tag}:{number}"


@dataclass(frozen=True)
class RebuiltVariant:
    number: int
    fingerprint: str
    tables: list[Table]
    """The variant's tables the two queries read (every table when neither parses)."""


def rebuild_variant(
    source: VariantSource,
    truth_sqls: list[str],
    *,
    truth_dialect: str,
    seed: int,
    number: int,
    fingerprint_wanted: str,
    agent_sql: str | None,
) -> RebuiltVariant | None:
    """Variant ``number`` of the suite of whichever of ``truth_sqls`` (the main ground truth
    and its ``also_accept``) gives the recorded fingerprint; None when none does (the data,
    the ground truth or this generator changed since the run)."""
    for truth_sql in truth_sqls:
        try:
            sql = transpile_truth(truth_sql, truth_dialect, source.dialect)
        except QueryError:  # a ground truth that no longer transpiles cannot be this one
            continue
        data = make_variant(
            source.tables, truth_hints(sql, source.dialect), candidate_seed(seed, sql, number)
        )
        printed = fingerprint(data)
        if printed != fingerprint_wanted:
            continue
        read = _tables_read([sql, agent_sql or ""], source.dialect)
        shown = [t for t in data if not read or t.name.lower() in read]
        return RebuiltVariant(number, printed, shown or data)
    return None


def _tables_read(sqls: list[str], dialect: str) -> set[str]:
    """The names (lower case) of the tables the queries read; empty when none parses."""
    names: set[str] = set()
    for sql in sqls:
        if not sql.strip():
            continue
        try:
            tree = sqlglot.parse_one(sql, read=dialect)
        except sqlglot.errors.SqlglotError:
            continue
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        names.update(t.name.lower() for t in tree.find_all(exp.Table) if t.name.lower() not in ctes)
    return names


def matching_neighbour(
    source: VariantSource,
    truth_sql: str,
    *,
    truth_dialect: str,
    seed: int,
    numbers: list[int],
    agent_sql: str,
    options: CompareOptions,
    settings: RunSettings,
    original: Engine,
) -> str | None:
    """The first near neighbour of the ground truth that gives the agent's result on every
    variant of ``numbers`` (the one the answer failed on first) and the ground truth's own
    result on the ``original`` warehouse: a reading of the question the real data cannot tell
    from the key's, as it could not tell the answer's (the one the answer took, for a person
    to weigh against the key's). None when none does, or the agent's SQL does not run there.

    Raises:
        EngineError: A variant cannot be built.
    """
    from sqlbench.variants.neighbours import neighbours

    sql = transpile_truth(truth_sql, truth_dialect, source.dialect)
    hints = truth_hints(sql, source.dialect)
    built: list[object] = []
    try:
        for number in numbers:
            data = make_variant(source.tables, hints, candidate_seed(seed, sql, number))
            built.append(source.build(data))
        try:
            actuals = [source.run_agent(b, agent_sql, settings) for b in built]
        except QueryError:
            return None
        joins = _join_conditions(sql, source.dialect)
        for mutant in neighbours(sql, source.dialect):
            if _join_conditions(mutant, source.dialect) != joins:
                continue  # another relation between the tables is not a reading of the question
            if all(
                _gives(source, b, mutant, actual, options, settings)
                for b, actual in zip(built, actuals, strict=True)
            ) and _same_on(original, sql, mutant, options, settings, source.dialect):
                return mutant
        return None
    finally:
        for b in built:
            source.discard(b)


def _join_conditions(sql: str, dialect: str) -> list[str]:
    """The ON conditions of the query's joins, in order (empty when it does not parse)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return []
    return [
        on.sql(dialect=dialect) if (on := join.args.get("on")) is not None else ""
        for join in tree.find_all(exp.Join)
    ]


def _gives(
    source: VariantSource,
    built: object,
    mutant: str,
    actual: ResultSet,
    options: CompareOptions,
    settings: RunSettings,
) -> bool:
    """Whether ``mutant`` gives ``actual`` on a built variant."""
    from sqlbench.grading import compare_under

    with source.database(built) as engine:
        try:
            result = engine.run_truth(
                mutant, timeout_s=settings.gold_timeout_s, max_rows=settings.max_rows
            )
        except QueryError:
            return False
    return compare_under(result, actual, options, mutant, source.dialect).passed


def _same_on(
    engine: Engine,
    sql: str,
    mutant: str,
    options: CompareOptions,
    settings: RunSettings,
    dialect: str,
) -> bool:
    """Whether ``mutant`` gives ``sql``'s result on ``engine`` (the real data), that result
    holding rows."""
    from sqlbench.grading import compare_under

    try:
        truth = engine.run_truth(sql, timeout_s=settings.gold_timeout_s, max_rows=settings.max_rows)
        other = engine.run_truth(
            mutant, timeout_s=settings.gold_timeout_s, max_rows=settings.max_rows
        )
    except QueryError:
        return False
    if truth.num_rows == 0:
        return False  # every empty result agrees: nothing tells a reading apart
    return compare_under(truth, other, options, sql, dialect).passed
