"""Result-set comparison (docs/verdicts.md): ``compare_results`` and what it returns."""

from __future__ import annotations

from sqlbench.compare.api import DEFAULT_BUDGET, compare_results
from sqlbench.compare.model import (
    ColumnGap,
    Comparison,
    ComparisonDetails,
    Finding,
    NearMiss,
    NearMissKind,
)
from sqlbench.errors import CompareOptionError, InputError

__all__ = [
    "DEFAULT_BUDGET",
    "ColumnGap",
    "CompareOptionError",
    "Comparison",
    "ComparisonDetails",
    "Finding",
    "InputError",
    "NearMiss",
    "NearMissKind",
    "compare_results",
]
