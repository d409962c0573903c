"""An answer's partial credit as stored (docs/verdicts.md, "Partial credit")."""

from __future__ import annotations

from sqlbench.compare import Comparison
from sqlbench.runs.records import PartialCreditRecord

NO_CREDIT = PartialCreditRecord(precision=0.0, recall=0.0, f1=0.0)
"""The credit of an answer with no result to compare (no SQL, SQL that did not run, an agent
error): it holds none of the expected cells, as BIRD's Soft-F1 scores it."""


def credit_of(comparison: Comparison | None, truth_result: bool) -> PartialCreditRecord | None:
    """The stored credit of a graded answer: its comparison's, else none of the cells when
    there was a ground-truth result to hold (``truth_result``), else None (nothing to hold)."""
    if comparison is not None:
        found = comparison.details.partial_credit
        if found is None:
            return None
        return PartialCreditRecord(
            precision=round(found.precision, 6),
            recall=round(found.recall, 6),
            f1=round(found.f1, 6),
        )
    return NO_CREDIT if truth_result else None
