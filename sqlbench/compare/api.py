"""``compare_results``: does the agent's result set match the ground truth's? (docs/verdicts.md)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import sqlglot
from pydantic import ValidationError
from sqlglot.errors import SqlglotError

from sqlbench.compare.examples import examples
from sqlbench.compare.match import Criteria, Matcher, SearchStatus, search
from sqlbench.compare.model import (
    MAX_ROW_INDICES,
    ColumnGap,
    Comparison,
    ComparisonDetails,
    Finding,
    NearMiss,
    NearMissKind,
)
from sqlbench.compare.nearmiss import Analysis, best_mapping, near_misses
from sqlbench.compare.normalize import normalize
from sqlbench.compare.order import OrderPlan, plan_order, tie_groups
from sqlbench.compare.pairs import RowMatch
from sqlbench.compare.reasons import build_reason
from sqlbench.compare.views import ResultRole, Tolerance, ViewSet, pair_domain
from sqlbench.errors import CompareOptionError
from sqlbench.project.files import CompareOptions
from sqlbench.project.problems import allowed_values
from sqlbench.verdicts import Verdict

DEFAULT_BUDGET = 10_000
"""Candidate column mappings (partial and complete) a comparison may try before ``review``."""


def compare_results(
    expected: pd.DataFrame | pa.Table,
    actual: pd.DataFrame | pa.Table,
    *,
    order: str = "ignore",
    rows: str = "bag",
    abs_tol: float = 1e-9,
    rel_tol: float = 1e-9,
    columns: str = "superset",
    expected_sql: str | None = None,
    dialect: str | None = None,
    budget: int = DEFAULT_BUDGET,
) -> Comparison:
    """Compare an agent's result set with the ground truth's (docs/verdicts.md).

    Column names never matter (except that swapping two columns whose names match on both
    sides gives ``review``); the agent's extra columns are ignored unless ``columns="exact"``;
    one injective column mapping must hold for all rows together. Rows are a multiset unless
    ``rows="set"``.

    Args:
        expected: the ground truth's result (duplicate column names allowed).
        actual: the agent's result.
        order: ``ignore`` (default), ``strict`` (in order; rows tied on the ground truth's
            ORDER BY keys may permute) or ``auto`` (strict exactly when ``expected_sql``'s
            outermost query has ORDER BY).
        rows: ``bag`` (duplicates count, default) or ``set``.
        abs_tol: absolute numeric tolerance.
        rel_tol: relative numeric tolerance (below 1).
        columns: ``superset`` (default: the agent's extra columns are ignored) or ``exact``
            (the agent must return as many columns as the ground truth; extra columns fail,
            naming them, with a near miss when the result would pass under ``superset``).
        expected_sql: the ground truth's SQL; needed for ``order="auto"``.
        dialect: sqlglot dialect of ``expected_sql``.
        budget: candidate column mappings to try before giving ``review``.

    ``order``, ``rows``, ``abs_tol``, ``rel_tol`` and ``columns`` have the type and range of
    their ``compare:`` keys in sqlbench.yml, checked by the same definition (``CompareOptions``).

    Returns:
        A :class:`Comparison` with ``verdict`` (pass, fail or review), ``reason``, ``details``.

    Raises:
        CompareOptionError: for an invalid option value.

    Example:
        >>> import pandas as pd
        >>> gold = pd.DataFrame({"name": ["a", "b"], "n": [1, 2]})
        >>> agent = pd.DataFrame({"total": [2.0, 1.0], "who": ["b", "a"]})
        >>> compare_results(gold, agent).passed
        True
        >>> compare_results(gold, agent.assign(id=[7, 8]), columns="exact").passed
        False
    """
    _check(order, rows, columns, abs_tol, rel_tol, expected_sql, dialect, budget)
    e_cols, a_cols = normalize(expected), normalize(actual)
    names_e, names_a = [c.name for c in e_cols], [c.name for c in a_cols]
    plan = plan_order(order, expected_sql, dialect, names_e)
    n_e = len(expected) if isinstance(expected, pd.DataFrame) else expected.num_rows
    n_a = len(actual) if isinstance(actual, pd.DataFrame) else actual.num_rows
    views = ViewSet(e_cols, a_cols, (n_e, n_a))
    tol = Tolerance(float(abs_tol), float(rel_tol))
    keys = plan.keys if plan.complete else ()  # ties unknown: compare in plain order first
    criteria = Criteria(distinct=rows == "set", tol=tol, ties=_ties(plan, views, n_e, keys))
    analysis = Analysis(views, criteria, plan, max(100, budget // 10), names_e, names_a)
    base = ComparisonDetails(
        problem=Finding.NONE,
        expected_rows=n_e,
        actual_rows=n_a,
        expected_columns=tuple(names_e),
        actual_columns=tuple(names_a),
        expected_kinds=tuple(c.kind.value for c in e_cols),
        actual_kinds=tuple(c.kind.value for c in a_cols),
        column_mapping={},
        mapping_matches=False,
        order="strict" if plan.strict else "ignore",
        order_source=plan.source,
        rows=rows,
        abs_tol=tol.abs_tol,
        rel_tol=tol.rel_tol,
        columns=columns,
        budget=budget,
        notes=(f"ground truth SQL not parsed: {plan.parse_error}",) if plan.parse_error else (),
    )
    superset = _decide(analysis, base, budget, n_e, n_a)
    if columns == "exact" and len(names_a) > len(names_e):
        return _extra_columns(superset)
    return superset


def _check(
    order: object,
    rows: object,
    columns: object,
    abs_tol: object,
    rel_tol: object,
    expected_sql: object,
    dialect: object,
    budget: object,
) -> None:
    options = {"order": order, "rows": rows, "columns": columns}
    options |= {"abs_tol": abs_tol, "rel_tol": rel_tol}
    try:
        # The project's own definition of each option (``compare:`` in sqlbench.yml), strictly:
        # "0.1" or True is not a tolerance here, where no YAML was read.
        CompareOptions.model_validate(options, strict=True)
    except ValidationError as err:
        name = str(err.errors()[0]["loc"][0])
        allowed = allowed_values(CompareOptions, name)
        raise CompareOptionError(f"{name} must be {allowed}, not {options[name]!r}") from None
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise CompareOptionError(f"budget must be a positive integer, not {budget!r}")
    if expected_sql is not None and not isinstance(expected_sql, str):
        raise CompareOptionError("expected_sql must be the ground truth's SQL text")
    if order == "auto" and expected_sql is None:
        raise CompareOptionError("order='auto' needs expected_sql= (the ground truth's SQL)")
    if dialect is not None and not (isinstance(dialect, str) and dialect in _KNOWN_DIALECTS):
        try:
            sqlglot.Dialect.get_or_raise(dialect)  # type: ignore[arg-type]
        except (ValueError, SqlglotError) as err:
            raise CompareOptionError(f"unknown SQL dialect {dialect!r}") from err
        if isinstance(dialect, str):
            _KNOWN_DIALECTS.add(dialect)


_KNOWN_DIALECTS: set[str] = set()
"""Dialect names sqlglot accepted (checking builds a dialect object: ~40 us a comparison)."""


def _ties(
    plan: OrderPlan, views: ViewSet, n_e: int, keys: tuple[int, ...]
) -> Callable[[np.ndarray | None], np.ndarray] | None:
    """Tie groups on ``keys`` for strict order (None when order is ignored)."""
    if not plan.strict:
        return None
    key_views = []
    for k in keys:
        col = views.columns[ResultRole.EXPECTED][k]
        domain = pair_domain(col, col)
        assert domain is not None
        key_views.append(views.view(ResultRole.EXPECTED, k, domain))
    return tie_groups(key_views, n_e)


def _decide(
    analysis: Analysis, base: ComparisonDetails, budget: int, n_e: int, n_a: int
) -> Comparison:
    k_e, k_a = len(analysis.names_e), len(analysis.names_a)
    criteria = analysis.criteria
    if k_a < k_e:
        return _fail(analysis, replace(base, problem=Finding.COLUMN_COUNT))
    if not criteria.distinct and n_e != n_a:
        return _fail(analysis, replace(base, problem=Finding.ROW_COUNT))
    matcher = Matcher(analysis.views, criteria)
    result = search(matcher, budget, analysis.names_e, analysis.names_a)
    plan = analysis.plan
    if plan.strict and not plan.complete and result.status is SearchStatus.NONE:
        lenient = replace(
            criteria, ties=_ties(plan, analysis.views, n_e, plan.keys) if plan.keys else None
        )  # ties on the known keys, or no order
        second = search(
            Matcher(analysis.views, lenient), budget, analysis.names_e, analysis.names_a
        )
        tried = result.tried + second.tried
        if second.status is SearchStatus.FOUND:
            return _finish(
                Verdict.REVIEW,
                replace(
                    base,
                    problem=Finding.ORDER_UNDECIDABLE,
                    mappings_tried=tried,
                    column_mapping=dict(enumerate(second.mapping or ())),
                    mapping_matches=False,
                ),
            )
        result = replace(second, tried=tried, failed=None)  # rows under other criteria
    if result.status is SearchStatus.FOUND:
        assert result.mapping is not None
        details = replace(
            base,
            column_mapping=dict(enumerate(result.mapping)),
            mapping_matches=True,
            mappings_tried=result.tried,
        )
        if result.swapped:
            return _finish(
                Verdict.REVIEW,
                replace(details, problem=Finding.NAME_SWAP, swapped_columns=result.swapped),
            )
        return _finish(Verdict.PASS, details)
    if result.status in (SearchStatus.BUDGET, SearchStatus.UNDECIDED):
        problem = Finding.BUDGET if result.status is SearchStatus.BUDGET else Finding.UNDECIDED
        mapping, _ = _best(analysis)
        return _finish(
            Verdict.REVIEW,
            replace(
                base,
                problem=problem,
                mappings_tried=min(result.tried, budget),
                column_mapping=mapping,
            ),
        )
    problem = Finding.NO_PARTNER if result.unpartnered else Finding.ROWS_DIFFER
    return _fail(
        analysis, replace(base, problem=problem, mappings_tried=result.tried), result.failed
    )


def _extra_columns(superset: Comparison) -> Comparison:
    """``columns: exact`` with more agent columns than expected: a fail, always. The details
    keep what the comparison found with the extra columns ignored (its mapping tells which
    agent columns are extra); a pass there becomes the ``columns_superset`` near miss, and
    other near misses are dropped (none of them alone would make this result pass)."""
    d = superset.details
    mapped = set(d.column_mapping.values())
    passes = superset.verdict is Verdict.PASS
    misses = (
        (NearMiss(NearMissKind.COLUMNS_SUPERSET, "would pass with columns: superset"),)
        if passes
        else ()
    )
    details = replace(
        d,
        problem=Finding.EXTRA_COLUMNS,
        superset_problem=d.problem,
        extra_columns=tuple(j for j in range(len(d.actual_columns)) if j not in mapped),
        near_misses=misses,
    )
    return _finish(Verdict.FAIL, details)


def _best(analysis: Analysis) -> tuple[dict[int, int], tuple[ColumnGap, ...]]:
    """The best mapping found by column similarity, and the columns it leaves unpartnered."""
    matcher = Matcher(analysis.views, analysis.criteria)
    candidates = [matcher.candidates(i) for i in range(len(analysis.names_e))]
    return best_mapping(analysis, candidates)


def _fail(
    analysis: Analysis,
    base: ComparisonDetails,
    failed: tuple[tuple[int, ...], RowMatch] | None = None,
) -> Comparison:
    """A fail's details: the best mapping, its unmatched rows (reused from the search when
    it matched the same mapping), examples and near misses."""
    matcher = Matcher(analysis.views, analysis.criteria)
    mapping, gaps = _best(analysis)
    rows: RowMatch | None = None
    if failed is not None and tuple(mapping.get(i) for i in range(len(mapping))) == failed[0]:
        rows = failed[1]
    elif (mapping and len(mapping) == len(analysis.names_e)) or base.problem is Finding.ROW_COUNT:
        rows = _rows_or_none(matcher, mapping, base)
    misses = near_misses(analysis, mapping, rows, gaps)
    problem = base.problem
    if problem is Finding.ROWS_DIFFER and any(m.kind is NearMissKind.ORDER_ONLY for m in misses):
        problem = Finding.ORDER
    details = replace(
        base, problem=problem, column_mapping=mapping, column_gaps=gaps, near_misses=misses
    )
    if rows is not None:
        e_examples, a_examples = examples(matcher, mapping, rows)
        details = replace(
            details,
            expected_unmatched_rows=tuple(
                int(r) for r in rows.expected_unmatched[:MAX_ROW_INDICES]
            ),
            actual_unmatched_rows=tuple(int(r) for r in rows.actual_unmatched[:MAX_ROW_INDICES]),
            expected_unmatched_count=len(rows.expected_unmatched),
            actual_unmatched_count=len(rows.actual_unmatched),
            expected_examples=e_examples,
            actual_examples=a_examples,
        )
    return _finish(Verdict.FAIL, details)


def _rows_or_none(
    matcher: Matcher, mapping: dict[int, int], base: ComparisonDetails
) -> RowMatch | None:
    if not mapping and base.expected_columns:
        return None
    return matcher.rows(mapping, report=True)


def _finish(verdict: Verdict, details: ComparisonDetails) -> Comparison:
    return Comparison(verdict, build_reason(verdict, details), details)
