"""Explaining a failure: the best column mapping, missing partners, differing rows, near misses.

Runs only when the verdict is not a pass. Each near-miss check is a fresh mapping search under
changed criteria (order ignored, duplicates ignored, a looser tolerance, one column scaled by
100) with a small budget of its own: near misses inform the reason, they never change the
verdict.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from sqlbench.compare.columns import Column, Kind
from sqlbench.compare.match import Criteria, Matcher, SearchStatus, search
from sqlbench.compare.model import ColumnGap, NearMiss, NearMissKind
from sqlbench.compare.order import OrderPlan
from sqlbench.compare.pairs import Pair, RowIndices, RowMatch, row_hashes
from sqlbench.compare.rows import distinct_count, match_rows
from sqlbench.compare.views import Domain, ResultRole, Tolerance, View, ViewSet

_SAMPLE = 4096
_TOLERANCE_LADDER = (1e-6, 1e-4, 1e-3)
"""Tolerances a near miss may suggest: only small relative differences (a result 0.5% off is
plainly another answer, not float noise or rounding)."""


@dataclass(frozen=True)
class Analysis:
    """What the comparison looks at besides the verdict."""

    views: ViewSet
    criteria: Criteria
    plan: OrderPlan
    budget: int
    names_e: list[str]
    names_a: list[str]
    counts: dict[tuple[ResultRole, int, Domain], ValueCounts] = field(default_factory=dict)
    """Cache of value counts per column view (for similarity)."""

    def found(self, criteria: Criteria, views: ViewSet | None = None) -> tuple[int, ...] | None:
        """A mapping under which the rows match with ``criteria``, within the small budget."""
        matcher = Matcher(views or self.views, criteria)
        result = search(matcher, self.budget, self.names_e, self.names_a)
        return result.mapping if result.status is SearchStatus.FOUND else None


def similarity(analysis: Analysis, e_pos: int, a_pos: int) -> float:
    """Share of the expected column's values (NULLs included, duplicates counted) that the
    actual column also holds, numbers rounded to about six significant digits; -1 when the
    two columns can never match."""
    views = analysis.views
    domain = views.domain(e_pos, a_pos)
    if domain is None:
        return -1.0
    expected = _value_counts(analysis, ResultRole.EXPECTED, e_pos, domain)
    actual = _value_counts(analysis, ResultRole.ACTUAL, a_pos, domain)
    if expected.small is not None and actual.small is not None:
        theirs = actual.small
        common = sum(min(n, theirs[v]) for v, n in expected.small.items() if v in theirs)
        return float(common) / expected.rows if expected.rows else 1.0
    _, shared_e, shared_a = np.intersect1d(
        expected.values, actual.values, assume_unique=True, return_indices=True
    )
    total = int(expected.counts.sum())
    shared = np.minimum(expected.counts[shared_e], actual.counts[shared_a])
    return float(shared.sum()) / total if total else 1.0


class ValueCounts:
    """The values of one column view, comparable across columns (numbers rounded when
    tolerant, NULL as one value), and how often each occurs."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = codes
        self.rows = len(codes)
        """Rows of the column (the counts' sum)."""
        self.small = dict(Counter(codes.tolist())) if self.rows <= SMALL_COUNTS else None
        """The counts by value, for a column of at most ``SMALL_COUNTS`` rows: shares of
        small columns are counted in Python (numpy's set operations cost more on a few
        values); None for a larger column."""

    @cached_property
    def values(self) -> np.ndarray:
        """The distinct comparable values, ascending."""
        return self._unique[0]

    @cached_property
    def counts(self) -> np.ndarray:
        """How many rows hold each value."""
        return self._unique[1]

    @cached_property
    def _unique(self) -> tuple[np.ndarray, np.ndarray]:
        values, counts = np.unique(self.codes, return_counts=True)
        return values, counts


SMALL_COUNTS = 64
"""Columns of up to this many rows keep their value counts as a dict."""


def _value_counts(analysis: Analysis, side: ResultRole, pos: int, domain: Domain) -> ValueCounts:
    key = (side, pos, domain)
    found = analysis.counts.get(key)
    if found is None:
        view = analysis.views.view(side, pos, domain)
        codes = _comparable(view, domain)
        if view.null_count:
            codes = np.where(view.null, np.iinfo(np.int64).min, codes)
        found = ValueCounts(codes)
        analysis.counts[key] = found
    return found


def _comparable(view: View, domain: Domain) -> np.ndarray:
    """Codes, with numbers rounded to about six significant digits when tolerant."""
    if not domain.tolerant or view.floats is None:
        return view.codes
    finite = np.isfinite(view.floats)
    mantissa, exponent = np.frexp(np.where(finite, view.floats, 0.0))
    rounded = np.round(mantissa * 2**20).astype(np.int64) * 4096 + exponent
    return np.where(finite, rounded, view.codes)  # infinities keep their exact code


def best_mapping(
    analysis: Analysis, candidates: list[list[int]]
) -> tuple[dict[int, int], tuple[ColumnGap, ...]]:
    """A greedy best mapping (candidates first, then most shared values, then names) and the
    expected columns it leaves without a real partner, each with its closest agent column."""
    names_e, names_a = analysis.names_e, analysis.names_a
    k_e, k_a = len(names_e), len(names_a)
    # Candidate pairs score above every other pair, so an expected column whose only
    # candidate no other column wants takes it whatever the shares: its shares need not be
    # computed (on large results each one reads two whole columns).
    wanted = Counter(j for c in candidates for j in c)
    fixed = {i: c[0] for i, c in enumerate(candidates) if len(c) == 1 and wanted[c[0]] == 1}
    scores: list[tuple[float, int, int]] = []
    overlap: dict[tuple[int, int], float] = {}
    for i in range(k_e):
        if i in fixed:
            continue
        for j in range(k_a):
            share = similarity(analysis, i, j)
            if share < 0:
                continue
            overlap[(i, j)] = share
            bonus = 2.0 if j in candidates[i] else 0.0
            if names_e[i] == names_a[j]:
                bonus += 0.5
            elif names_e[i].casefold() == names_a[j].casefold():
                bonus += 0.25
            scores.append((share + bonus, i, j))
    scores.sort(key=lambda s: (-s[0], abs(s[1] - s[2]), s[1], s[2]))
    mapping: dict[int, int] = dict(fixed)
    used: set[int] = set(fixed.values())
    for _, i, j in scores:
        if i not in mapping and j not in used:
            mapping[i] = j
            used.add(j)
    gaps = []
    for i in range(k_e):
        if candidates[i] and i in mapping and mapping[i] in candidates[i]:
            continue
        options = [(share, j) for (e, j), share in overlap.items() if e == i]
        closest = max(options, key=lambda o: (o[0], -abs(o[1] - i)), default=None)
        kind = analysis.views.columns[ResultRole.EXPECTED][i].kind.value
        domain = None if closest is None else analysis.views.domain(i, closest[1])
        gaps.append(
            ColumnGap(
                i,
                names_e[i],
                kind,
                None if closest is None else closest[1],
                None if closest is None else names_a[closest[1]],
                0.0 if closest is None else closest[0],
                overlap_rounded=domain is not None and domain.tolerant,
            )
        )
    return dict(sorted(mapping.items())), tuple(gaps)


def near_misses(
    analysis: Analysis, mapping: dict[int, int], rows: RowMatch | None, gaps: tuple[ColumnGap, ...]
) -> tuple[NearMiss, ...]:
    """Every near miss that applies to a failing comparison.

    On large results where a complete mapping leaves only a few rows unmatched, the checks
    that loosen a rule (duplicates, tolerance) look at those rows only (``Remainder``): the
    rest already match exactly, so a failing comparison costs about what a passing one does.
    """
    found: list[NearMiss] = []
    c = analysis.criteria
    n_e, n_a = analysis.views.rows
    rest = Remainder.of(analysis, mapping, rows)
    order_only = c.ties is not None and analysis.found(dataclasses.replace(c, ties=None))
    if order_only:
        found.append(NearMiss(NearMissKind.ORDER_ONLY, "the same rows match in a different order"))
    elif not c.distinct:
        dup = rest.same_distinct_rows() if rest is not None else None
        if rest is None:
            dup = analysis.found(Criteria(distinct=True, tol=c.tol))
        if dup is not None:
            found.append(_duplicates(analysis, dup, n_e, n_a))
    if _has_tolerant_pair(analysis.views):
        for rel in _TOLERANCE_LADDER:
            looser = dataclasses.replace(c, tol=Tolerance(c.tol.abs_tol, rel))
            if rel > c.tol.rel_tol and (
                rest.matches(looser) if rest is not None else analysis.found(looser) is not None
            ):
                found.append(
                    NearMiss(
                        NearMissKind.LOOSER_TOLERANCE,
                        f"would pass with rel_tol={rel:g}",
                        rel_tol=rel,
                    )
                )
                break
    scaled = _scaled(analysis, gaps)
    if scaled is not None:
        found.append(scaled)
    tie = _limit_tie(analysis, mapping, rows, n_e, n_a)
    if tie is not None:
        found.append(tie)
    return tuple(found)


_LARGE = 20_000
"""Results with at least this many rows (both sides) check near misses on the remainder."""
_REMAINDER_MAX = 2_000
"""... when at most this many rows are unmatched."""


@dataclass(frozen=True)
class Remainder:
    """The rows a complete mapping left unmatched on a large result; the others match exactly
    (or within tolerance) one to one. A loosened rule that matches these rows to each other
    makes the whole match (the rest stays matched), so a near miss found here is true; one
    missed here may still hold through another pairing, and is then not offered."""

    analysis: Analysis
    mapping: tuple[int, ...]
    unmatched: RowIndices
    """The rows of each side the mapping left without a partner."""

    @classmethod
    def of(
        cls, analysis: Analysis, mapping: dict[int, int], rows: RowMatch | None
    ) -> Remainder | None:
        n_e, n_a = analysis.views.rows
        if (
            rows is None
            or rows.undecided
            or analysis.criteria.ties is not None
            or len(mapping) != len(analysis.names_e)
            or min(n_e, n_a) < _LARGE
            or len(rows.expected_unmatched) + len(rows.actual_unmatched) > _REMAINDER_MAX
        ):
            return None
        ordered = tuple(mapping[i] for i in range(len(mapping)))
        return cls(analysis, ordered, RowIndices(rows.expected_unmatched, rows.actual_unmatched))

    def _pairs(self, criteria: Criteria) -> list[Pair]:
        matcher = Matcher(self.analysis.views, criteria)
        return [matcher.pair(i, j) for i, j in enumerate(self.mapping)]

    def matches(self, criteria: Criteria) -> bool:
        """The unmatched rows match each other under ``criteria``."""
        rows = self.unmatched
        pairs = [
            Pair(_restrict(p.expected, rows.expected), _restrict(p.actual, rows.actual), p.tolerant)
            for p in self._pairs(criteria)
        ]
        result = match_rows(
            pairs,
            len(rows.expected),
            len(rows.actual),
            distinct=criteria.distinct,
            tol=criteria.tol,
        )
        return result.ok

    def same_distinct_rows(self) -> tuple[int, ...] | None:
        """The mapping when both sides hold the same distinct rows (each unmatched row occurs,
        exactly, on the other side), else None."""
        pairs = self._pairs(self.analysis.criteria)
        n_e, n_a = self.analysis.views.rows
        views_e, views_a = [p.expected for p in pairs], [p.actual for p in pairs]
        found = _present(views_e, self.unmatched.expected, views_a, n_a)
        if found and _present(views_a, self.unmatched.actual, views_e, n_e):
            return self.mapping
        return None


def _restrict(view: View, rows: np.ndarray) -> View:
    exact = None
    if view.exact is not None:
        where = {int(old): new for new, old in enumerate(rows)}
        exact = {where[k]: v for k, v in view.exact.items() if k in where} or None
    floats = None if view.floats is None else view.floats[rows]
    return View(view.codes[rows], view.null[rows], floats, exact)


def _present(views: list[View], rows: np.ndarray, others: list[View], count: int) -> bool:
    """Every row ``rows`` of ``views`` equals (codes and NULLs) some row of ``others``."""
    if not len(rows):
        return True
    theirs = row_hashes(others, None, count)
    ours = row_hashes(views, rows, len(views[0].codes) if views else 0)
    few = len(rows) <= 16  # a scan per row beats sorting a large side
    order = None if few else np.argsort(theirs)
    ordered = None if order is None else theirs[order]
    for row, h in zip(rows, ours, strict=True):
        if order is None or ordered is None:
            same = np.flatnonzero(theirs == h)
        else:
            lo, hi = np.searchsorted(ordered, h, "left"), np.searchsorted(ordered, h, "right")
            same = order[lo:hi]
        if not any(
            all(
                v.codes[row] == o.codes[k] and v.null[row] == o.null[k]
                for v, o in zip(views, others, strict=True)
            )
            for k in same
        ):
            return False
    return True


def _duplicates(analysis: Analysis, mapping: tuple[int, ...], n_e: int, n_a: int) -> NearMiss:
    matcher = Matcher(analysis.views, Criteria(distinct=True, tol=analysis.criteria.tol))
    pairs = [matcher.pair(i, j) for i, j in enumerate(mapping)]
    distinct_e = distinct_count([p.expected for p in pairs], n_e)
    distinct_a = distinct_count([p.actual for p in pairs], n_a)
    extra_e, extra_a = n_e - distinct_e, n_a - distinct_a
    if extra_a > extra_e:
        text = (
            f"the same distinct rows, but the agent's result repeats rows: "
            f"{_rows(n_a, distinct_a)} against {_rows(n_e, distinct_e)} (missing DISTINCT?)"
        )
    elif extra_a < extra_e:
        text = (
            f"the same distinct rows, but the agent's result drops duplicates: "
            f"{_rows(n_a, distinct_a)} against {_rows(n_e, distinct_e)} (extra DISTINCT?)"
        )
    else:
        text = "the same distinct rows, but they repeat a different number of times"
    return NearMiss(NearMissKind.DUPLICATES, text)


def _rows(total: int, distinct: int) -> str:
    return f"{total} row{'' if total == 1 else 's'} ({distinct} distinct)"


def _has_tolerant_pair(views: ViewSet) -> bool:
    return any(
        views.domain(i, j) is Domain.FLOAT
        for i in range(len(views.columns[0]))
        for j in range(len(views.columns[1]))
    )


def _scaled(analysis: Analysis, gaps: tuple[ColumnGap, ...]) -> NearMiss | None:
    """Agent numbers 100x (or 1/100 of) the expected ones: percent against fraction."""
    views = analysis.views
    e_cols, a_cols = views.columns
    numeric_gaps = [g.expected for g in gaps if e_cols[g.expected].numeric]
    if not numeric_gaps:
        return None
    replaced = list(a_cols)
    factors: dict[int, float] = {}
    for j, col in enumerate(a_cols):
        if not col.numeric or col.kind is Kind.TEXT:
            continue
        for factor in (100.0, 0.01):
            trial = _scale(col, factor)
            if trial is None:
                continue
            probe = ViewSet(
                e_cols, [trial if k == j else c for k, c in enumerate(a_cols)], views.rows
            )
            matcher = Matcher(probe, analysis.criteria)
            if any(matcher.column_match(i, j) for i in numeric_gaps):
                replaced[j] = trial
                factors[j] = factor
                break
    if not factors:
        return None
    mapping = analysis.found(analysis.criteria, ViewSet(e_cols, replaced, views.rows))
    if mapping is None:
        return None
    scaled = tuple((i, j, 1 / factors[j]) for i, j in enumerate(mapping) if j in factors)
    parts = []
    for i, j, off in scaled:
        times = "100x" if off > 1 else "1/100 of"
        parts.append(
            f"agent column {analysis.names_a[j]!r} is {times} expected column "
            f"{analysis.names_e[i]!r}"
        )
    return NearMiss(
        NearMissKind.SCALED, "; ".join(parts) + " (percent against fraction?)", scaled=scaled
    )


def _scale(col: Column, factor: float) -> Column | None:
    """The column times ``factor``; None when it holds an infinity or scaling overflows
    (inf is 100x inf, and 1e308 x 100 is inf: neither is a percent against a fraction)."""
    floats = col.floats
    assert floats is not None
    if not np.isfinite(floats).all():
        return None
    with np.errstate(over="ignore"):
        values = floats / 100.0 if factor == 0.01 else floats * factor
    if not np.isfinite(values).all():
        return None
    return dataclasses.replace(
        col, kind=Kind.FLOAT, ints=None, floats_=values, tagged=None, exact_=None
    )


def _limit_tie(
    analysis: Analysis, mapping: dict[int, int], rows: RowMatch | None, n_e: int, n_a: int
) -> NearMiss | None:
    """The differing rows all tie with the last expected row on the ORDER BY keys."""
    plan = analysis.plan
    if (
        rows is None
        or not plan.has_limit
        or not plan.keys
        or not plan.complete
        or n_e != n_a
        or not n_e
        or len(mapping) != len(analysis.names_e)
    ):
        return None
    unmatched_e, unmatched_a = rows.expected_unmatched, rows.actual_unmatched
    if not len(unmatched_e) or not len(unmatched_a):
        return None
    matcher = Matcher(analysis.views, analysis.criteria)
    last = n_e - 1
    for key in plan.keys:
        p = matcher.pair(key, mapping[key])
        for view, unmatched in ((p.expected, unmatched_e), (p.actual, unmatched_a)):
            if p.tolerant:
                assert view.floats is not None and p.expected.floats is not None
                same = analysis.criteria.tol.close(
                    view.floats[unmatched], np.full(len(unmatched), p.expected.floats[last])
                )
            else:
                same = view.codes[unmatched] == p.expected.codes[last]
            if not (same & (view.null[unmatched] == p.expected.null[last])).all():
                return None
    return NearMiss(
        NearMissKind.LIMIT_TIE,
        "the differing rows all tie with the last row on the ORDER BY keys: the "
        "ground truth's LIMIT cuts through a tie, so its rows are not deterministic "
        "(add a tiebreaker to its ORDER BY)",
    )
