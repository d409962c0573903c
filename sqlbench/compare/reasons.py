"""The one-line reason of a comparison, built from its details in this one place."""

from __future__ import annotations

from dataclasses import replace

from sqlbench.compare.model import ComparisonDetails, Finding, NearMissKind
from sqlbench.verdicts import Verdict

_EXTRA_NAMES = 5
"""Extra agent columns named in a reason; more are counted."""


def build_reason(verdict: Verdict, d: ComparisonDetails) -> str:
    """One line a person can act on: what matched, or what differs and how close it came.

    Example:
        >>> from sqlbench.compare.model import ComparisonDetails, Finding
        >>> d = ComparisonDetails(
        ...     Finding.ROW_COUNT, expected_rows=3, actual_rows=4, expected_columns=("x",),
        ...     actual_columns=("x",), expected_kinds=("int",), actual_kinds=("int",),
        ...     column_mapping={0: 0}, mapping_matches=False, order="ignore",
        ...     order_source="order: ignore", rows="bag", abs_tol=1e-9, rel_tol=1e-9)
        >>> build_reason(Verdict.FAIL, d)
        '3 rows expected, 4 returned'
    """
    text = _main(verdict, d)
    both_empty = d.expected_rows == 0 and d.actual_rows == 0
    if verdict is not Verdict.PASS and both_empty and "both results are empty" not in text:
        text += "; both results are empty"
    extras = [
        n.message
        for n in d.near_misses
        if not (d.problem is Finding.ORDER and n.kind is NearMissKind.ORDER_ONLY)
    ]
    if extras:
        text += "; near miss: " + "; ".join(extras)
    return " ".join(text.split())


def _main(verdict: Verdict, d: ComparisonDetails) -> str:
    if verdict is Verdict.PASS:
        return _passed(d)
    p = d.problem
    if p is Finding.EXTRA_COLUMNS:
        return _extra_columns(d)
    if p is Finding.CANDIDATE_COLUMNS:
        return _candidate_columns(d)
    if p is Finding.COLUMN_COUNT:
        return _column_count(d)
    if p is Finding.ROW_COUNT:
        expected = _count(d.expected_rows, "row") if d.expected_rows else "no rows"
        text = f"{expected} expected, {d.actual_rows or 'none'} returned"
        if d.near_miss(NearMissKind.DUPLICATES) is None and d.mapping_matches is False:
            text += _example_clause(d)
        return text
    if p is Finding.NO_PARTNER:
        # The plain difference leads; which column found no partner is the detail after it.
        if d.expected_unmatched_count or d.actual_unmatched_count:
            if _one_value(d) and d.expected_examples and d.actual_examples:
                return _rows_differ(d)  # `expected 3, got 6` says it all
            return f"{_rows_differ(d)}; {_gaps(d)}"
        return _gaps(d) + _both_empty(d)
    if p is Finding.ROWS_DIFFER:
        if not (d.expected_unmatched_count or d.actual_unmatched_count) and d.column_gaps:
            return _gaps(d)  # no row differs under the best mapping: a column is what lacks
        return _rows_differ(d)
    if p is Finding.ORDER:
        text = f"the right rows in a different order ({d.order_source})"
        if d.expected_unmatched_rows:
            text += f"; first row out of place: row {d.expected_unmatched_rows[0] + 1}"
            if d.expected_examples and d.actual_examples:
                text += f": expected {d.expected_examples[0]}, agent {d.actual_examples[0]}"
        return text
    if p is Finding.ORDER_UNDECIDABLE:
        return (
            f"the rows match, but in a different order, and tied rows cannot be told apart "
            f"({d.order_source}): check by hand"
        )
    if p is Finding.NAME_SWAP:
        moves = ", ".join(
            f"expected {d.expected_columns[i]!r} = agent {d.actual_columns[j]!r}"
            for i, j in d.swapped_columns
        )
        return f"the only matching column mapping swaps same-named columns ({moves}): check by hand"
    if p is Finding.BUDGET:
        return (
            f"the column-mapping search ran out of budget ({d.mappings_tried} candidate "
            f"mappings tried): check by hand or raise the budget"
        )
    if p is Finding.UNDECIDED:
        return (
            "too many near-equal numbers to pair rows within tolerance: check by hand or "
            "tighten the tolerance"
        )
    return f"results differ ({p.value})"


def _extra_columns(d: ComparisonDetails) -> str:
    """``columns: exact``: how many extra columns and which; then, unless the result would
    pass with them ignored (a near miss), what that comparison found."""
    k_e, k_a = len(d.expected_columns), len(d.actual_columns)
    extra = k_a - k_e
    text = f"the agent returned {_count(k_a, 'column')}, the ground truth {k_e} (columns: exact): "
    names = _agent_names(d, d.extra_columns)
    if len(d.extra_columns) == extra:
        text += f"extra agent column{'' if extra == 1 else 's'} {names}"
    else:  # no complete mapping: which agent columns are the extra ones is not known
        text += f"{_count(extra, 'extra agent column')} among {names}"
    superset = d.superset_problem
    if superset is None or superset is Finding.NONE:
        return text
    # Not a pass: _main words a fail and a review's problem alike.
    found = _main(Verdict.FAIL, replace(d, problem=superset, superset_problem=None))
    return f"{text}; ignoring {'it' if extra == 1 else 'them'}: {found}"


def _candidate_columns(d: ComparisonDetails) -> str:
    """A result that would pass beside many extra columns: how many, which, and the rule."""
    k_e, k_a = len(d.expected_columns), len(d.actual_columns)
    extra = k_a - k_e
    rule = (
        f"more than max_extra_columns {d.max_extra_columns}"
        if d.max_extra_columns is not None
        else "more than the expected columns and at least 3; set compare: {max_extra_columns: N} "
        "to allow more"
    )
    return (
        f"the answer holds many candidate columns: {_count(k_a, 'column')} for "
        f"{_count(k_e, 'expected column')}, {_count(extra, 'extra agent column')} "
        f"({_agent_names(d, d.extra_columns)}) beside the matching one{'s' if k_e > 1 else ''} "
        f"({rule}); check by hand"
    )


def _agent_names(d: ComparisonDetails, positions: tuple[int, ...]) -> str:
    """``'id', 'email'``; a name the agent's result repeats gets its position."""
    names = d.actual_columns
    parts = [
        f"{names[j]!r} (#{j + 1})" if names.count(names[j]) > 1 else repr(names[j])
        for j in positions[:_EXTRA_NAMES]
    ]
    more = f" and {len(positions) - _EXTRA_NAMES} more" if len(positions) > _EXTRA_NAMES else ""
    return ", ".join(parts) + more


def _passed(d: ComparisonDetails) -> str:
    if d.expected_empty:
        return (
            "both results are empty (the ground truth returns no rows, so any empty answer passes)"
        )
    k_e = len(d.expected_columns)
    text = f"results match: {_count(d.expected_rows, 'row')} x {_count(k_e, 'column')}"
    extra = len(d.actual_columns) - k_e
    notes = []
    if d.order == "strict":
        notes.append("in order")
    if d.rows == "set":
        notes.append("as sets")
    if extra:
        notes.append(f"{_count(extra, 'extra agent column')} ignored")
    for note in d.notes:
        notes.append(note)
    return text + (f" ({', '.join(notes)})" if notes else "")


def _rows_differ(d: ComparisonDetails) -> str:
    """The plain difference: ``expected 3, got 6`` for one value, else how many rows of each
    side found no partner, with the first pair of differing rows.

    Example:
        >>> from sqlbench.compare.model import ComparisonDetails, Finding
        >>> d = ComparisonDetails(
        ...     Finding.ROWS_DIFFER, expected_rows=1, actual_rows=1, expected_columns=("n",),
        ...     actual_columns=("count_star()",), expected_kinds=("int",),
        ...     actual_kinds=("int",), column_mapping={0: 0}, mapping_matches=False,
        ...     order="ignore", order_source="order: ignore", rows="bag", abs_tol=1e-9,
        ...     rel_tol=1e-9, expected_unmatched_count=1, actual_unmatched_count=1,
        ...     expected_examples=("(3)",), actual_examples=("(6)",))
        >>> _rows_differ(d)
        'expected 3, got 6'
    """
    e_un, a_un = d.expected_unmatched_count, d.actual_unmatched_count
    if d.expected_rows == 1 and d.actual_rows == 1 and d.expected_examples and d.actual_examples:
        expected, actual = d.expected_examples[0], d.actual_examples[0]
        if _one_value(d):
            return f"expected {expected[1:-1]}, got {actual[1:-1]}"
        return f"expected row {expected}, got {actual}"
    if d.rows == "bag" and e_un == a_un:
        # Same row counts: every unmatched expected row faces an unmatched agent row.
        text = f"{e_un} of {d.expected_rows} rows differ"
    else:
        parts = []
        if e_un:
            parts.append(f"{_count(e_un, 'expected row')} missing")
        if a_un:
            parts.append(f"{_count(a_un, 'agent row')} not expected")
        text = ", ".join(parts) or "rows differ"
        if d.rows == "set":
            text += " (compared as sets)"
    return text + _example_clause(d)


def _one_value(d: ComparisonDetails) -> bool:
    """Both results are one value (one row; one expected column)."""
    return d.expected_rows == 1 and d.actual_rows == 1 and len(d.expected_columns) == 1


def _column_count(d: ComparisonDetails) -> str:
    """``column 'region' missing (2 columns expected, 1 returned)`` when the columns without a
    partner are as many as the columns missing, else the counts, then each gap."""
    k_e, k_a = len(d.expected_columns), len(d.actual_columns)
    counts = f"{_count(k_e, 'column')} expected, {k_a} returned"
    gaps = d.column_gaps
    if d.expected_rows == 0 and d.actual_rows == 0:
        counts += "; both results are empty"
    elif d.expected_rows != d.actual_rows:
        # A missing column is rarely all that differs: 0 rows against 28 must be said.
        expected = _count(d.expected_rows, "row") if d.expected_rows else "no rows"
        counts += f"; {expected} expected, {d.actual_rows or 'none'} returned"
    if gaps and len(gaps) == k_e - k_a:
        names = ", ".join(repr(g.expected_name) for g in gaps[:_EXTRA_NAMES])
        more = f" and {len(gaps) - _EXTRA_NAMES} more" if len(gaps) > _EXTRA_NAMES else ""
        noun = "column" if len(gaps) == 1 else "columns"
        return f"{noun} {names}{more} missing ({counts})"
    return counts + (f"; {_gaps(d)}" if gaps else "")


def _both_empty(d: ComparisonDetails) -> str:
    if d.expected_rows == 0 and d.actual_rows == 0:
        return "; both results are empty"
    return ""


def _share(fraction: float) -> str:
    """A percentage that never rounds a near miss to 100% or a sliver to 0%."""
    if 0.995 <= fraction < 1:
        return ">99%"
    if 0 < fraction < 0.005:
        return "<1%"
    return f"{fraction:.0%}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _column(name: str, pos: int) -> str:
    return f"{name!r} (#{pos + 1})"


def _gaps(d: ComparisonDetails) -> str:
    gaps = d.column_gaps
    parts = []
    for g in gaps[:3]:
        text = f"expected column {_column(g.expected_name, g.expected)} has no partner"
        if (
            g.closest is not None
            and g.closest_name is not None
            and g.overlap >= 1
            and not g.overlap_rounded
        ):
            # Every value is there: the column is taken, or the rows pair it otherwise.
            taken = [i for i, j in d.column_mapping.items() if j == g.closest and i != g.expected]
            where = f"agent column {_column(g.closest_name, g.closest)}"
            if taken:
                other = _column(d.expected_columns[taken[0]], taken[0])
                text += (
                    f" (its values are all in {where}, which stands for expected column {other})"
                )
            else:
                text += f" (its values are all in {where}, but not on the same rows)"
        elif g.closest is not None and g.closest_name is not None:
            text += (
                f" (closest: agent column {_column(g.closest_name, g.closest)}, "
                f"{_share(g.overlap)} of values "
                + ("equal to 6 significant digits)" if g.overlap_rounded else "shared)")
            )
        else:
            kinds = sorted(set(d.actual_kinds))
            text += (
                f" (it holds {g.expected_kind}; no agent column is comparable: they hold "
                f"{', '.join(kinds) or 'nothing'})"
            )
        parts.append(text)
    more = f"; and {len(gaps) - 3} more" if len(gaps) > 3 else ""
    return "; ".join(parts) + more


def _example_clause(d: ComparisonDetails) -> str:
    if d.expected_examples and d.actual_examples:
        return f", e.g. expected {d.expected_examples[0]}, got {d.actual_examples[0]}"
    if d.expected_examples:
        return f", e.g. expected row {d.expected_examples[0]} is missing"
    if d.actual_examples:
        return f", e.g. agent row {d.actual_examples[0]} is not expected"
    return ""
