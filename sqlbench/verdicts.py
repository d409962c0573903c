"""Verdicts: the one vocabulary every module uses for a question's outcome."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import StrEnum

MAX_REASON = 400
"""Longest reason a verdict carries (one line, cut with an ellipsis: ``text.one_line``)."""


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


SEVERITY = {Verdict.ERROR: 3, Verdict.FAIL: 2, Verdict.REVIEW: 1}
"""How bad a verdict that is not a pass is: ties between them go to the worse."""


def across_trials(verdicts: Iterable[Verdict]) -> Verdict:
    """A question's verdict from its trials' (``--repeat K``): skipped when every trial was;
    pass when every graded trial passed; else the most common verdict that is not a pass, ties
    going to the worse (error, fail, review). ``sqlbench show`` and run comparison read it.

    Example:
        >>> P, F, E = Verdict.PASS, Verdict.FAIL, Verdict.ERROR
        >>> across_trials([P, F, P]), across_trials([F, E]), across_trials([P, Verdict.SKIPPED])
        (<Verdict.FAIL: 'fail'>, <Verdict.ERROR: 'error'>, <Verdict.PASS: 'pass'>)
    """
    graded = [v for v in verdicts if v is not Verdict.SKIPPED]
    if not graded:
        return Verdict.SKIPPED
    others = Counter(v for v in graded if v is not Verdict.PASS)
    if not others:
        return Verdict.PASS
    return max(others, key=lambda v: (others[v], SEVERITY[v]))
