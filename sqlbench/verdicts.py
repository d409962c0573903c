"""Verdicts: the one vocabulary every module uses for a question's outcome."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """A question's outcome (docs/verdicts.md). Values are the lower-case words in every output."""

    PASS = "pass"
    """The agent's result set matches the ground truth's (or an also_accept one)."""
    FAIL = "fail"
    """The agent's SQL ran and did not match, or did not run."""
    REVIEW = "review"
    """Nothing to compare automatically (no ground truth, no SQL, ambiguous comparison)."""
    ERROR = "error"
    """The agent itself or the ground truth failed."""
    SKIPPED = "skipped"
    """The question carries `skip:`; not counted in accuracy."""
