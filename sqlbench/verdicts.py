"""Verdicts: the one vocabulary every module uses for a question's outcome."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """A question's outcome (SPEC section 3). Values are the lower-case words in every output."""

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
