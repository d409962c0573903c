"""What a comparison returns: the verdict, one actionable reason and structured details."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from sqlbench.verdicts import Verdict

MAX_ROW_INDICES = 20
"""Unmatched row indices kept per side (enough to mark differing rows in previews)."""


class Finding(StrEnum):
    """The main finding of a comparison (``none`` for a pass); a validation problem is
    ``errors.Problem``, a different thing."""

    NONE = "none"
    COLUMN_COUNT = "column_count"
    """The agent's result has fewer columns than the expected one."""
    EXTRA_COLUMNS = "extra_columns"
    """Under ``columns: exact``: the agent's result has more columns than the expected one."""
    ROW_COUNT = "row_count"
    """Different row counts (multiset comparison)."""
    NO_PARTNER = "no_partner"
    """An expected column matches no agent column on its own."""
    ROWS_DIFFER = "rows_differ"
    """Every column has candidates, but no single mapping makes the rows match."""
    ORDER = "order"
    """Under strict order: the right rows in a different order."""
    ORDER_UNDECIDABLE = "order_undecidable"
    """Rows match out of order and the ground truth's ORDER BY keys cannot be checked."""
    NAME_SWAP = "name_swap"
    """The only matching mapping swaps columns that carry the same names on both sides."""
    BUDGET = "budget"
    CANDIDATE_COLUMNS = "candidate_columns"
    """The result would pass, but the agent returned many more columns than expected (more
    than the expected columns and at least 3, or past ``max_extra_columns``): an answer that
    lists candidates is left to a person."""
    """The column-mapping search ran out of its budget."""
    UNDECIDED = "undecided"
    """Too many near-equal numbers to settle pairing within tolerance."""


class NearMissKind(StrEnum):
    """A way in which a failing result is close to passing."""

    LOOSER_TOLERANCE = "looser_tolerance"
    SCALED = "scaled"
    ORDER_ONLY = "order_only"
    DUPLICATES = "duplicates"
    LIMIT_TIE = "limit_tie"
    COLUMNS_SUPERSET = "columns_superset"


@dataclass(frozen=True)
class NearMiss:
    """One near miss, with the phrase the reason uses."""

    kind: NearMissKind
    message: str
    """A short phrase a person can act on, e.g. ``would pass with rel_tol=1e-04``."""
    rel_tol: float | None = None
    """For LOOSER_TOLERANCE: the smallest tried rel_tol at which the result passes."""
    scaled: tuple[tuple[int, int, float], ...] = ()
    """For SCALED: (expected column, actual column, factor the actual values were off by)."""


@dataclass(frozen=True)
class ColumnGap:
    """An expected column that found no partner among the agent's columns."""

    expected: int
    """Expected column position (0-based)."""
    expected_name: str
    expected_kind: str
    """What the expected column holds (int, float, text, instant, ...)."""
    closest: int | None
    """The agent column most like it (same domain, most shared values), if any."""
    closest_name: str | None
    overlap: float
    """Share of the expected column's values found in the closest column (0-1)."""
    overlap_rounded: bool = False
    """True when ``overlap`` counted numbers as equal to about six significant digits (columns
    compared with tolerance), so a share of 100% can still hold values that differ."""


@dataclass(frozen=True)
class PartialCredit:
    """Cell-level precision, recall and F1 of the agent's result against the expected one
    (``sqlbench.compare.partial``; docs/verdicts.md, "Partial credit"). Never a verdict."""

    matched_cells: int
    """True positives: expected cells the agent's result holds."""
    agent_cells: int
    """Cells of the agent's result that count (mapped columns, and under ``columns: exact`` its
    extra ones, on the rows compared)."""
    expected_cells: int
    """Cells of the expected result (every column, on the rows compared)."""
    agent_rows: int = 0
    """Rows of the agent's result that count (distinct ones under ``rows: set``)."""

    @property
    def precision(self) -> float:
        """Matched cells over the agent's cells (1 when both results are empty)."""
        if not self.agent_cells:
            return 1.0 if not self.expected_cells else 0.0
        return self.matched_cells / self.agent_cells

    @property
    def recall(self) -> float:
        """Matched cells over the expected cells (1 when both results are empty)."""
        if not self.expected_cells:
            return 1.0 if not self.agent_cells else 0.0
        return self.matched_cells / self.expected_cells

    @property
    def f1(self) -> float:
        """The harmonic mean of precision and recall (0 when both are 0)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    def with_extra_columns(self, extra: int) -> PartialCredit:
        """The same credit with ``extra`` more agent columns counted as false positives on each
        counted agent row (``columns: exact``)."""
        return replace(self, agent_cells=self.agent_cells + extra * self.agent_rows)


@dataclass(frozen=True)
class ComparisonDetails:
    """Everything the comparison found; the reason is built from these fields only."""

    problem: Finding
    expected_rows: int
    actual_rows: int
    expected_columns: tuple[str, ...]
    actual_columns: tuple[str, ...]
    expected_kinds: tuple[str, ...]
    """What each expected column holds (int, float, text, instant, null, ...)."""
    actual_kinds: tuple[str, ...]
    column_mapping: dict[int, int]
    """Expected column position -> actual column position: the mapping used (pass), or the
    best one found (otherwise; may be partial)."""
    mapping_matches: bool
    """True when ``column_mapping`` makes every row match."""
    order: str
    """Row order as applied: ``ignore`` or ``strict``."""
    order_source: str
    """Why: the option, or the ground truth's outermost ORDER BY."""
    rows: str
    """``bag`` or ``set``."""
    abs_tol: float
    rel_tol: float
    columns: str = "superset"
    """``superset`` (the agent's extra columns are ignored) or ``exact`` (they fail)."""
    expected_unmatched_rows: tuple[int, ...] = ()
    """Expected row indices with no partner (first MAX_ROW_INDICES)."""
    actual_unmatched_rows: tuple[int, ...] = ()
    """Actual row indices with no partner (first MAX_ROW_INDICES)."""
    expected_unmatched_count: int = 0
    actual_unmatched_count: int = 0
    expected_examples: tuple[str, ...] = ()
    """A few unmatched expected rows, rendered."""
    actual_examples: tuple[str, ...] = ()
    """A few unmatched actual rows (mapped columns, expected order), rendered; the k-th is the
    closest partner of the k-th expected example (by position under strict order), so the
    reason does not depend on the agent's row order (``sqlbench.compare.examples``)."""
    column_gaps: tuple[ColumnGap, ...] = ()
    near_misses: tuple[NearMiss, ...] = ()
    swapped_columns: tuple[tuple[int, int], ...] = ()
    """For NAME_SWAP: (expected column, actual column carrying another expected column's
    exact name) for each such pair in the only matching mapping."""
    extra_columns: tuple[int, ...] = ()
    """For EXTRA_COLUMNS and CANDIDATE_COLUMNS: agent column positions outside
    ``column_mapping``."""
    max_extra_columns: int | None = None
    """For CANDIDATE_COLUMNS: the limit set (None: the default rule)."""
    superset_problem: Finding | None = None
    """For EXTRA_COLUMNS: what the comparison found with the extra columns ignored
    (``none``: it would pass under ``columns: superset``); the other fields describe that
    comparison."""
    mappings_tried: int = 0
    budget: int = 0
    partial_credit: PartialCredit | None = None
    """How many of the expected cells the agent's result holds under ``column_mapping``
    (``sqlbench.compare.partial``); it never changes the verdict."""
    notes: tuple[str, ...] = field(default=())
    """Other facts worth a mention (empty ground truth, unparseable SQL, ...)."""

    @property
    def expected_empty(self) -> bool:
        """The ground truth returned no rows (any empty answer passes)."""
        return self.expected_rows == 0

    def near_miss(self, kind: NearMissKind) -> NearMiss | None:
        """The near miss of that kind, if flagged."""
        return next((n for n in self.near_misses if n.kind is kind), None)


@dataclass(frozen=True)
class Comparison:
    """The result of ``compare_results``."""

    verdict: Verdict
    """PASS, FAIL or REVIEW."""
    reason: str
    """One line a person can act on, built from ``details``."""
    details: ComparisonDetails

    @property
    def passed(self) -> bool:
        """True when the verdict is PASS."""
        return self.verdict is Verdict.PASS
