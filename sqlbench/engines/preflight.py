"""Ground-truth pre-flight for ``sqlbench validate --execute``: run every ground truth on the
warehouse before any agent is asked.

Each distinct ground-truth SQL (a question's inline ``sql``, every certified query, every
``also_accept``) is run once with the project's setup applied. An error is flagged once, at the
file and line the SQL is written at; a warning once per question using the SQL, at that
question and naming it (``space/name: ...``; a certified query no question uses says so):

- error: it fails on the warehouse (or cannot be transpiled to its dialect, or is over max_rows);
- warning: it returns no rows (any empty answer would pass), or only NULLs;
- warning: it is non-deterministic: it calls CURRENT_DATE / now() / random() and the like, two
  runs give different results, or its outermost LIMIT cuts inside ties of its ORDER BY.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import pyarrow as pa

from sqlbench.engines.base import Engine, ResultSet
from sqlbench.engines.nondeterminism import boundary_ties, limit_probe, volatile_calls
from sqlbench.engines.open import open_project_engine
from sqlbench.errors import EngineError, Problem, QueryError, QueryErrorKind, Severity
from sqlbench.project.files import Project, Question, RunSettings
from sqlbench.project.rules import sql_drift
from sqlbench.truth import transpile_truth, truth_dialect

_KIND_PHRASES = {
    QueryErrorKind.SYNTAX: "has a syntax error",
    QueryErrorKind.RUNTIME: "fails",
    QueryErrorKind.TIMEOUT: "times out",
    QueryErrorKind.TOO_MANY_ROWS: "returns more rows than max_rows",
    QueryErrorKind.TOO_LARGE: "returns more bytes than max_result_mb",
    QueryErrorKind.SQL_LIMIT: "is over sqlbench's SQL size limits",
    QueryErrorKind.NOT_READ_ONLY: "was refused",
    QueryErrorKind.CONNECTION: "lost the warehouse connection",
}


@dataclass(frozen=True)
class _User:
    """A question whose answer is checked against a ground truth."""

    name: str
    """``space/name``."""
    label: str
    """What the SQL is to this question (see ``_Truth.label``)."""
    path: str
    line: int


@dataclass(frozen=True)
class _Truth:
    sql: str
    label: str
    """What it is, for messages: ``ground truth``, ``certified query 'x'``, ``also_accept #2``."""
    path: str
    line: int
    users: tuple[_User, ...] = ()
    """The questions using it, in file order (none: a certified query no question uses)."""


def preflight(project: Project) -> list[Problem]:
    """Run every distinct ground truth of ``project`` on its warehouse and report problems.

    Args:
        project: A loaded project (its ``root`` holds the setup files of the evaluated ref).

    Returns:
        Problems located at the SQL's file and line; an unopenable warehouse or failing setup is
        one error on sqlbench.yml.
    """
    by_warehouse: dict[str | None, list[_Truth]] = {}
    for name, truth in _distinct_truths(project):
        by_warehouse.setdefault(name, []).append(truth)
    problems: list[Problem] = []
    for name, truths in by_warehouse.items():
        try:
            engine = open_project_engine(project, name)
        except EngineError as err:
            problems.append(
                Problem(Severity.ERROR, f"cannot run the ground truth: {err}", "sqlbench.yml")
            )
            continue
        with engine:
            settings = project.settings.for_warehouse(name)
            dialect = truth_dialect(settings, engine.dialect)
            for truth in truths:
                problems.extend(_check(engine, truth, dialect, settings.run))
    return problems


def _distinct_truths(project: Project) -> Iterator[tuple[str | None, _Truth]]:
    """Each distinct ground truth with the warehouse it runs on (a certified query on the
    warehouse of each question using it, else the default one) and the questions using it."""
    found: dict[tuple[str | None, str], _Truth] = {}
    users: dict[tuple[str | None, str], list[_User]] = {}

    def add(warehouse: str | None, truth: _Truth, user: _User | None) -> None:
        key = (warehouse, truth.sql.strip().rstrip(";").strip())
        if not key[1]:
            return
        found.setdefault(key, truth)
        if user is not None:
            users.setdefault(key, []).append(user)

    # A conversation's turns are checked as questions of their own ("turn 2: ground truth").
    asking = [
        turn
        for q in project.questions
        if q.skip is None
        for turn in (
            [q.turn_question(i) for i in range(len(q.turns))] if q.turns is not None else [q]
        )
    ]
    used: dict[str, set[str | None]] = {}
    for question in asking:
        if question.certified_query is not None:
            used.setdefault(question.certified_query, set()).add(project.warehouse_of(question))
    for name, certified in project.certified_queries.items():
        label = f"certified query {name!r}"
        for warehouse in sorted(used.get(name, {None}), key=lambda w: w or ""):
            add(warehouse, _Truth(certified.sql, label, certified.path, certified.line), None)
    for question in asking:
        warehouse = project.warehouse_of(question)

        def use(sql: str, label: str, q: Question = question, w: str | None = warehouse) -> None:
            user = _User(q.full_name, label, q.path, q.line)
            add(w, _Truth(sql, label, q.path, q.line), user)

        named = project.certified_queries.get(question.certified_query or "")
        if named is not None:
            use(named.sql, f"certified query {question.certified_query!r}")
        if question.sql is not None:
            use(question.sql, "ground truth")
        for number, sql in enumerate(question.also_accept, start=1):
            use(sql, f"also_accept #{number}")
    for key, truth in found.items():
        yield key[0], replace(truth, users=tuple(users.get(key, ())))


def _check(engine: Engine, truth: _Truth, dialect: str, run: RunSettings) -> list[Problem]:
    problems: list[Problem] = []

    def warn(message: str) -> None:
        if not truth.users:
            text = f"{truth.label} (used by no question) {message}"
            problems.append(Problem(Severity.WARNING, text, truth.path, truth.line))
        for user in truth.users:
            text = f"{user.name}: {user.label} {message}"
            problems.append(Problem(Severity.WARNING, text, user.path, user.line))

    try:
        _, smells = truth_smells(engine, truth.sql, dialect, run)
    except QueryError as err:
        phrase = _KIND_PHRASES.get(err.kind, "fails")
        return [
            Problem(
                Severity.ERROR,
                f"{truth.label} {phrase} on the warehouse: {err.message}",
                truth.path,
                truth.line,
            )
        ]
    for smell in smells:
        warn(smell.message)
    return problems


@dataclass(frozen=True)
class Smell:
    """Something wrong with a ground truth's result itself (``validate --execute`` warns of
    it; ``sqlbench audit`` counts it as evidence against the key)."""

    kind: str
    """``empty``, ``all_null``, ``unstable`` or ``tie_at_limit``."""
    message: str
    """What follows the ground truth's name: ``returns no rows, so ...``."""


def truth_smells(
    engine: Engine, truth_sql: str, dialect: str, run: RunSettings
) -> tuple[ResultSet, list[Smell]]:
    """Run ``truth_sql`` (written in ``dialect``) twice on ``engine``: its first result and
    what is wrong with it (no rows, only NULLs, calls that change between runs, two runs that
    differ, a LIMIT cutting through ties of its ORDER BY).

    Raises:
        QueryError: It fails on the warehouse (or cannot be transpiled to its dialect).
    """
    smells: list[Smell] = []
    sql = transpile_truth(truth_sql, dialect, engine.dialect)
    first = engine.run_truth(
        sql,
        timeout_s=run.gold_timeout_s,
        max_rows=run.max_rows,
        max_bytes=run.max_result_bytes,
    )
    calls = volatile_calls(truth_sql, dialect)
    shown = calls
    if sql_drift(truth_sql, dialect):
        # Loading already warned "uses CURRENT_DATE ...; use absolute dates": one cause, one
        # warning. Calls that are not the date or time (random(), uuid()) are still named here.
        shown = [call for call in calls if not sql_drift(f"SELECT {call}", dialect)]
    if shown:
        smells.append(
            Smell(
                "unstable",
                f"is non-deterministic: it calls {', '.join(shown)}, so its answer changes "
                "between runs",
            )
        )
    if first.num_rows == 0:
        smells.append(Smell("empty", "returns no rows, so any empty answer would pass"))
    elif all(column.null_count == len(column) for column in first.table.columns):
        smells.append(Smell("all_null", "returns only NULLs, so an answer of NULLs would pass"))
    try:
        second = engine.run_truth(
            sql,
            timeout_s=run.gold_timeout_s,
            max_rows=run.max_rows,
            max_bytes=run.max_result_bytes,
        )
    except QueryError as err:
        message = f"is non-deterministic: it ran once, then failed: {err.message}"
        return first, [*smells, Smell("unstable", message)]
    if not calls and _rows(first) != _rows(second):
        smells.append(
            Smell("unstable", "is non-deterministic: two runs returned different results")
        )
    ambiguity = _limit_ambiguity(engine, truth_sql, dialect, run)
    if ambiguity is not None:
        smells.append(Smell("tie_at_limit", f"is non-deterministic: {ambiguity}"))
    return first, smells


def _limit_ambiguity(engine: Engine, sql: str, dialect: str, run: RunSettings) -> str | None:
    probe = limit_probe(sql, dialect)
    if probe is None:
        return None
    try:
        probe_sql = transpile_truth(probe.sql, dialect, engine.dialect)
        result = engine.run_truth(probe_sql, timeout_s=run.gold_timeout_s, max_rows=probe.limit + 2)
    except QueryError:
        # The probe rewrites the query (extra key columns); where the warehouse does not take
        # the rewrite, the LIMIT simply is not probed. The ground truth itself ran fine.
        return None
    return boundary_ties(probe, _tuples(result))


def _tuples(result: ResultSet) -> list[tuple[Any, ...]]:
    columns = [_values(column) for column in result.table.columns]
    return list(zip(*columns, strict=True))


def _values(column: pa.ChunkedArray) -> list[Any]:
    """A column's Python values; a date or time Python cannot hold (DuckDB's ``infinity``, year
    12024) makes its column raw Arrow integers, which compare alike between two runs."""
    try:
        return list(column.to_pylist())
    except (OverflowError, ValueError):
        kind = column.type
        if not (pa.types.is_date(kind) or pa.types.is_time(kind) or pa.types.is_timestamp(kind)):
            raise
    storage = pa.int64() if kind.bit_width == 64 else pa.int32()
    return [value for chunk in column.chunks for value in chunk.view(storage).to_pylist()]


def _rows(result: ResultSet) -> Counter[tuple[Any, ...]]:
    """The rows as a multiset, floats rounded to 12 significant digits (parallel sums may
    differ in the last bits between runs without the answer changing)."""
    return Counter(tuple(_canonical(v) for v in row) for row in _tuples(result))


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.12g}")
    if isinstance(value, Decimal) and not value.is_finite():
        return None
    if isinstance(value, dict | list):
        return repr(value)
    return value
