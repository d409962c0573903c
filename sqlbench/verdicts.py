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


NOT_ASKED = "not asked: the agent's endpoint "
"""How the reason of an ``unreachable`` error begins (``not asked: the agent's endpoint
answered 429 (...)``); what the endpoint did follows, up to `` (``."""


class ErrorKind(StrEnum):
    """Why an ``error`` is no failure of the agent (``results[].error_kind``)."""

    UNREACHABLE = "unreachable"
    """The agent's endpoint could not be reached (HTTP 429/5xx, a refused or reset connection,
    after the retries): the question was not asked. Counted apart, outside accuracy's
    denominator and a comparison's regressions and fixes; ``run --resume`` asks it again."""


class ResultFlag(StrEnum):
    """What a result's ``flags`` can hold: facts about an answer beside its verdict."""

    CONSTANT_ANSWER = "constant_answer"
    """The agent's SQL does not read the data (no table or view, or only literals in its
    output) while the ground truth does."""
    GROUND_TRUTH_SEEN = "ground_truth_seen"
    """The agent's trace shows a tool call naming the project's question or certified-query
    files or its run store."""
    FROM_CERTIFIED_QUERY = "from_certified_query"
    """The agent's SQL reproduces, after normalising, the certified query that is its
    question's ground truth."""
