"""The one-line reason of a comparison, built from its details in this one place."""

from __future__ import annotations

from dataclasses import replace

from sqlbench.compare.model import ComparisonDetails, NearMissKind, Problem
from sqlbench.verdicts import Verdict

_EXTRA_NAMES = 5
"""Extra agent columns named in a reason; more are counted."""


def build_reason(verdict: Verdict, d: ComparisonDetails) -> str:
    """One line a person can act on: what matched, or what differs and how close it came.

    Example:
        >>> from sqlbench.compare.model import ComparisonDetails, Problem
        >>> d = ComparisonDetails(
        ...     Problem.ROW_COUNT, expected_rows=3, actual_rows=4, expected_columns=("x",),
        ...     actual_columns=("x",), expected_kinds=("int",), actual_kinds=("int",),
        ...     column_mapping={0: 0}, mapping_matches=False, order="ignore",
        ...     order_source="order: ignore", rows="bag", abs_tol=1e-9, rel_tol=1e-9)
        >>> build_reason(Verdict.FAIL, d)
        'agent returned 4 rows, expected 3'
    """
    text = _main(verdict, d)
    extras = [
        n.message
        for n in d.near_misses
        if not (d.problem is Problem.ORDER and n.kind is NearMissKind.ORDER_ONLY)
    ]
    if extras:
        text += "; near miss: " + "; ".join(extras)
    return " ".join(text.split())


def _main(verdict: Verdict, d: ComparisonDetails) -> str:
    if verdict is Verdict.PASS:
        return _passed(d)
    p = d.problem
    if p is Problem.EXTRA_COLUMNS:
        return _extra_columns(d)
    if p is Problem.COLUMN_COUNT:
        k_e, k_a = len(d.expected_columns), len(d.actual_columns)
        text = f"agent returned {_count(k_a, 'column')}, expected {k_e}"
        return text + (f"; {_gaps(d)}" if d.column_gaps else "")
    if p is Problem.ROW_COUNT:
        text = f"agent returned {_count(d.actual_rows, 'row')}, expected {d.expected_rows}"
        if d.near_miss(NearMissKind.DUPLICATES) is None and d.mapping_matches is False:
            text += _example_clause(d)
        return text
    if p is Problem.NO_PARTNER:
        text = _gaps(d)
        if d.expected_unmatched_count or d.actual_unmatched_count:
            text += "; " + _rows_differ(d)
        return text
    if p is Problem.ROWS_DIFFER:
        return _rows_differ(d)
    if p is Problem.ORDER:
        text = f"the right rows in a different order ({d.order_source})"
        if d.expected_unmatched_rows:
            text += f"; first row out of place: row {d.expected_unmatched_rows[0] + 1}"
            if d.expected_examples and d.actual_examples:
                text += f": expected {d.expected_examples[0]}, agent {d.actual_examples[0]}"
        return text
    if p is Problem.ORDER_UNDECIDABLE:
        return (
            f"the rows match, but in a different order, and tied rows cannot be told apart "
            f"({d.order_source}): check by hand"
        )
    if p is Problem.NAME_SWAP:
        moves = ", ".join(
            f"expected {d.expected_columns[i]!r} = agent {d.actual_columns[j]!r}"
            for i, j in d.swapped_columns
        )
        return f"the only matching column mapping swaps same-named columns ({moves}): check by hand"
    if p is Problem.BUDGET:
        return (
            f"the column-mapping search ran out of budget ({d.mappings_tried} candidate "
            f"mappings tried): check by hand or raise the budget"
        )
    if p is Problem.UNDECIDED:
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
    if superset is None or superset is Problem.NONE:
        return text
    # Not a pass: _main words a fail and a review's problem alike.
    found = _main(Verdict.FAIL, replace(d, problem=superset, superset_problem=None))
    return f"{text}; ignoring {'it' if extra == 1 else 'them'}: {found}"


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
    shown = max(d.expected_unmatched_count, d.actual_unmatched_count)
    return f"{shown} of {d.expected_rows} rows differ" + _example_clause(d)


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
        if g.closest is not None and g.closest_name is not None:
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
        return f", e.g. expected {d.expected_examples[0]}, agent {d.actual_examples[0]}"
    if d.expected_examples:
        return f", e.g. expected row {d.expected_examples[0]} is missing"
    if d.actual_examples:
        return f", e.g. agent row {d.actual_examples[0]} is not expected"
    return ""
