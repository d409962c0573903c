"""The column mapping: one injective map from expected to actual columns for all rows together.

Candidates for each expected column are pruned by column signatures (domain, NULL count, value
multiset fingerprint, or sorted values within tolerance); the search is backtracking over the
expected columns, fewest candidates first, checking each partial mapping's rows with an O(n)
multiset fingerprint and each complete mapping with the exact row match. Identical actual
columns are interchangeable, so twelve identical columns of zeros take one path, not 12!.

The budget counts candidate mappings tried (partial and complete), never seconds, so a verdict
does not depend on the machine. Names: the name-consistent mapping is tried first, and mappings
that give an expected column the actual column that carries *another* expected column's exact
name are only tried after every other mapping failed (docs/verdicts.md: that swap is ``review``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from sqlbench.compare.columns import Column
from sqlbench.compare.pairs import Pair, RowMatch, row_hashes
from sqlbench.compare.rows import distinct_rows, match_rows
from sqlbench.compare.tolerance import group_views
from sqlbench.compare.views import Domain, ResultRole, Tolerance, View, ViewSet


class SearchStatus(StrEnum):
    """How a mapping search ended."""

    FOUND = "found"
    NONE = "none"
    BUDGET = "budget"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Criteria:
    """What "the rows match" means in one search."""

    distinct: bool
    """Compare distinct rows (``rows: set``)."""
    tol: Tolerance
    ties: Callable[[np.ndarray | None], np.ndarray] | None = None
    """Strict order: tie groups of expected row sequences (None: order ignored)."""


@dataclass(frozen=True)
class SearchResult:
    """The outcome of one mapping search."""

    status: SearchStatus
    mapping: tuple[int, ...] | None = None
    """Actual column position for each expected column, when found."""
    rows: RowMatch | None = None
    tried: int = 0
    """Candidate mappings tried (partial and complete)."""
    swapped: tuple[tuple[int, int], ...] = ()
    """(expected column, actual column named like another expected column) of a swap."""
    unpartnered: tuple[int, ...] = ()
    """Expected columns without any candidate."""
    failed: tuple[tuple[int, ...], RowMatch] | None = None
    """When the search had one mapping to try and its rows did not match: that mapping and
    its rows, matched with ``report`` (the fewest unmatched rows), for the failure's reason."""


class _OutOfBudget(Exception):
    pass


class Matcher:
    """Column candidates, partial checks and row matching for one pair of results."""

    def __init__(self, views: ViewSet, criteria: Criteria) -> None:
        self.views = views
        self.criteria = criteria
        self.n_e, self.n_a = views.rows
        self._tie_view: View | None = None
        self._distinct = views.distinct_rows

    def pair(self, e_pos: int, a_pos: int) -> Pair:
        """Expected column ``e_pos`` and actual column ``a_pos`` in their domain."""
        domain = self.views.domain(e_pos, a_pos)
        assert domain is not None
        return Pair(
            self.views.view(ResultRole.EXPECTED, e_pos, domain),
            self.views.view(ResultRole.ACTUAL, a_pos, domain),
            domain.tolerant,
        )

    def candidates(self, e_pos: int) -> list[int]:
        """Actual columns whose values could be expected column ``e_pos``'s."""
        return [a for a in range(len(self.views.columns[1])) if self.column_match(e_pos, a)]

    def quick_match(self, e_pos: int, a_pos: int) -> bool:
        """Cheap necessary condition: a common domain, NULL counts, smallest/largest value."""
        domain = self.views.domain(e_pos, a_pos)
        if domain is None:
            return False
        column_e = self.views.column(ResultRole.EXPECTED, e_pos)
        column_a = self.views.column(ResultRole.ACTUAL, a_pos)
        if not self.criteria.distinct and (
            column_e.rows != column_a.rows or column_e.null_count != column_a.null_count
        ):
            return False  # multisets of different sizes
        if self.criteria.distinct and (column_e.null_count > 0) != (column_a.null_count > 0):
            return False
        bounds_e = self.views.bounds(ResultRole.EXPECTED, e_pos, domain)
        bounds_a = self.views.bounds(ResultRole.ACTUAL, a_pos, domain)
        return _bounds_agree(
            bounds_e, bounds_a, self._tol(column_e, column_a, domain), domain.tolerant
        )

    def _tol(self, column_e: Column, column_a: Column, domain: Domain) -> Tolerance:
        """The tolerance for float64 necessary conditions: loosened where a side has values
        compared exactly (their float64s may round apart)."""
        tol = self.criteria.tol
        if domain.tolerant and (column_e.exact is not None or column_a.exact is not None):
            return tol.loosened()
        return tol

    def column_match(self, e_pos: int, a_pos: int) -> bool:
        """Column-level necessary condition: same value multiset (set) in a common domain."""
        if not self.quick_match(e_pos, a_pos):
            return False
        domain = self.views.domain(e_pos, a_pos)
        assert domain is not None
        view_e = self.views.view(ResultRole.EXPECTED, e_pos, domain)
        view_a = self.views.view(ResultRole.ACTUAL, a_pos, domain)
        tol = self._tol(
            self.views.column(ResultRole.EXPECTED, e_pos),
            self.views.column(ResultRole.ACTUAL, a_pos),
            domain,
        )
        if not self.criteria.distinct:
            if view_e.bag_fingerprint == view_a.bag_fingerprint:
                return True
            if not domain.tolerant:
                return False
            sorted_e, sorted_a = view_e.sorted_floats, view_a.sorted_floats
            if not tol.close(sorted_e[[0, -1]], sorted_a[[0, -1]]).all():
                return False
            return bool(tol.close(sorted_e, sorted_a).all())
        if view_e.set_fingerprint == view_a.set_fingerprint:
            return True
        if not domain.tolerant:
            return False
        values_e, values_a = np.unique(view_e.sorted_floats), np.unique(view_a.sorted_floats)
        return _covers(values_e, values_a, tol) and _covers(values_a, values_e, tol)

    def partial_ok(self, assigned: list[tuple[int, int]]) -> bool:
        """O(n) necessary condition on the exactly-compared columns of a partial mapping."""
        pairs = [self.pair(i, j) for i, j in assigned]
        exact_e = group_views(pairs, ResultRole.EXPECTED)
        exact_a = group_views(pairs, ResultRole.ACTUAL)
        if self.criteria.distinct:
            hashes_e = row_hashes(exact_e, None, self.n_e)
            hashes_a = row_hashes(exact_a, None, self.n_a)
            return np.array_equal(np.unique(hashes_e), np.unique(hashes_a))
        if self.criteria.ties is not None:
            tie = self._ties()
            exact_e.append(tie)
            exact_a.append(tie)
        hashes_e = row_hashes(exact_e, None, self.n_e)
        hashes_a = row_hashes(exact_a, None, self.n_a)
        return int(hashes_e.sum(dtype=np.uint64)) == int(hashes_a.sum(dtype=np.uint64))

    def _ties(self) -> View:
        if self._tie_view is None:
            assert self.criteria.ties is not None
            ids = self.criteria.ties(None)
            self._tie_view = View(ids, np.zeros(len(ids), dtype=bool))
        return self._tie_view

    def rows(self, mapping: dict[int, int] | tuple[int, ...], report: bool = False) -> RowMatch:
        """Match the rows under a (possibly partial) mapping, in expected-column order;
        ``report`` finds the fewest unmatched rows on a failure (for reasons)."""
        items = sorted(mapping.items()) if isinstance(mapping, dict) else enumerate(mapping)
        pairs = [self.pair(i, j) for i, j in items]
        c = self.criteria
        return match_rows(
            pairs,
            self.n_e,
            self.n_a,
            distinct=c.distinct,
            tol=c.tol,
            ties=c.ties,
            report=report,
            distinct_rows=self._distinct_rows,
        )

    def _distinct_rows(self, views: list[View], count: int) -> np.ndarray:
        """``rows.distinct_rows``, remembered for the view set (its views live as long as it
        does, so their ids name them)."""
        key = (frozenset(map(id, views)), count)
        found = self._distinct.get(key)
        if found is None:
            found = distinct_rows(views, count)
            found.flags.writeable = False  # shared by every match that asks these columns
            self._distinct[key] = found
        return found


def _bounds_agree(
    bounds_e: tuple[float, float] | None,
    bounds_a: tuple[float, float] | None,
    tol: Tolerance,
    tolerant: bool,
) -> bool:
    """Equal multisets (or sets) have equal smallest and largest values: a cheap first test."""
    if bounds_e is None or bounds_a is None:
        return bounds_e is None and bounds_a is None
    if not tolerant:
        return bounds_e == bounds_a
    return bool(
        tol.close(np.array(bounds_e, dtype=np.float64), np.array(bounds_a, dtype=np.float64)).all()
    )


def _covers(values: np.ndarray, others: np.ndarray, tol: Tolerance) -> bool:
    """Every sorted value has a close neighbour among the sorted others."""
    if not len(values):
        return True
    if not len(others):
        return False
    at = np.searchsorted(others, values)
    left = others[np.clip(at - 1, 0, len(others) - 1)]
    right = others[np.clip(at, 0, len(others) - 1)]
    return bool((tol.close(values, left) | tol.close(values, right)).all())


def search(matcher: Matcher, budget: int, names_e: list[str], names_a: list[str]) -> SearchResult:
    """Find a column mapping under which the rows match, within ``budget`` mappings tried."""
    return _Search(matcher, budget, names_e, names_a).run()


class _Search:
    def __init__(self, matcher: Matcher, budget: int, names_e: list[str], names_a: list[str]):
        self.m = matcher
        self.budget = budget
        self.tried = 0
        self.undecided = False
        k_e, k_a = len(names_e), len(names_a)
        self.k_e = k_e
        self.partner: dict[int, int] = {}
        for i, name in enumerate(names_e):
            if names_e.count(name) == 1 and names_a.count(name) == 1:
                self.partner[i] = names_a.index(name)
        self.owner = {j: i for i, j in self.partner.items()}
        quick = [[j for j in range(k_a) if matcher.quick_match(i, j)] for i in range(k_e)]
        forced = all(len(c) == 1 for c in quick) and len({c[0] for c in quick}) == k_e
        if not forced:  # prune with value fingerprints only where there is a choice to make
            quick = [[j for j in c if matcher.column_match(i, j)] for i, c in enumerate(quick)]
        self.cands = [self._ordered(i, c, names_e, names_a) for i, c in enumerate(quick)]
        self.classes = (
            self._classes(k_a) if any(len(c) > 1 for c in self.cands) else list(range(k_a))
        )
        self.order = sorted(
            range(k_e), key=lambda i: (len(set(self.classes[j] for j in self.cands[i])), i)
        )
        self.branching = any(len({self.classes[j] for j in c}) > 1 for c in self.cands)
        self.assigned: dict[int, int] = {}
        self.used: set[int] = set()
        self.found: RowMatch | None = None
        self.leaves: list[tuple[tuple[int, ...], RowMatch]] = []

    def _ordered(
        self, i: int, cands: list[int], names_e: list[str], names_a: list[str]
    ) -> list[int]:
        name = names_e[i].casefold()

        def rank(j: int) -> tuple[int, int]:
            if self.partner.get(i) == j:
                return (0, j)
            return (1 if names_a[j].casefold() == name else 2, j)

        return sorted(cands, key=rank)

    def _classes(self, k_a: int) -> list[int]:
        """Class id per actual column; identical columns (same kind and values) share one."""
        columns = self.m.views.columns[1]
        classes = list(range(k_a))
        natives = [self.m.views.native(ResultRole.ACTUAL, j) for j in range(k_a)]
        for j in range(k_a):
            vj = natives[j]
            if vj is None:
                continue
            for k in range(j):
                vk = natives[k]
                if (
                    classes[k] == k
                    and vk is not None
                    and columns[k].kind is columns[j].kind
                    and np.array_equal(vj.codes, vk.codes)
                    and np.array_equal(vj.null, vk.null)
                ):
                    classes[j] = k
                    break
        return classes

    def run(self) -> SearchResult:
        missing = tuple(i for i in range(self.k_e) if not self.cands[i])
        if missing:
            return SearchResult(SearchStatus.NONE, unpartnered=missing)
        try:
            if self._dfs(0, no_swap=True):
                return self._result()
            if self.owner and self._dfs(0, no_swap=False):
                mapping = self.assigned
                swapped = tuple(
                    (i, j) for i, j in sorted(mapping.items()) if self._takes_other(i, j)
                )
                return self._result(swapped)
        except _OutOfBudget:
            return SearchResult(SearchStatus.BUDGET, tried=self.tried)
        status = SearchStatus.UNDECIDED if self.undecided else SearchStatus.NONE
        failed = self.leaves[0] if len(self.leaves) == 1 else None
        return SearchResult(status, tried=self.tried, failed=failed)

    def _result(self, swapped: tuple[tuple[int, int], ...] = ()) -> SearchResult:
        mapping = tuple(self.assigned[i] for i in range(self.k_e))
        return SearchResult(SearchStatus.FOUND, mapping, self.found, self.tried, swapped)

    def _count(self) -> None:
        self.tried += 1
        if self.tried > self.budget:
            raise _OutOfBudget

    def _dfs(self, depth: int, no_swap: bool) -> bool:
        if depth == self.k_e:
            self._count()
            # With a single mapping to try, a failure is final: match it for the report now
            # (the exact stage costs the same; only leftover rows see the tolerant stage).
            result = self.m.rows(self.assigned, report=not self.branching)
            if result.ok:
                self.found = result
                return True
            self.undecided |= result.undecided
            if not self.branching:
                self.leaves.append((tuple(self.assigned[i] for i in range(self.k_e)), result))
            return False
        i = self.order[depth]
        tried_classes: set[int] = set()
        for j in self.cands[i]:
            cls = self.classes[j]
            if j in self.used or cls in tried_classes:
                continue
            pick = self._representative(i, cls, no_swap)
            if pick is None:
                continue
            tried_classes.add(cls)
            self.assigned[i] = pick
            self.used.add(pick)
            ok = True
            if self.branching and 1 <= depth < self.k_e - 1:
                self._count()
                ok = self.m.partial_ok(sorted(self.assigned.items()))
            if ok and self._dfs(depth + 1, no_swap):
                return True
            del self.assigned[i]
            self.used.discard(pick)
        return False

    def _representative(self, i: int, cls: int, no_swap: bool) -> int | None:
        """The unused member of an identical-column class to give expected column ``i``."""
        members = [
            j
            for j in range(len(self.classes))
            if self.classes[j] == cls and j not in self.used and j in self.cands[i]
        ]
        if not members:
            return None
        if self.partner.get(i) in members:
            return self.partner[i]
        free = [j for j in members if not self._takes_other(i, j)]
        if free:
            return free[0]
        return None if no_swap else members[0]

    def _takes_other(self, i: int, j: int) -> bool:
        """Expected column ``i`` (named like an actual column) would take the actual column
        named like another expected column: half of a same-named swap."""
        return i in self.partner and j in self.owner and self.owner[j] != i
