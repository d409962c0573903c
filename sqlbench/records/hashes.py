"""The hashes records carry: ``stable_hash`` (a short hash of a value's canonical JSON, for run
identity and reviews) and ``review_hashes`` (what a person's decision on a question is tied
to: its ground truth and the agent's answer), and ``dispute_hash`` (what a person's dispute
of a ground truth is tied to: the question's text and its ground truth).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlbench.records.run import Dispute, TrialResult


def stable_hash(value: Any) -> str:
    """A short (16 hex) SHA-256 of ``value``'s canonical JSON (sorted keys, no spaces).

    Example:
        >>> stable_hash({"b": 1, "a": [1, 2]}) == stable_hash({"a": [1, 2], "b": 1})
        True
        >>> len(stable_hash("x"))
        16
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class ReviewHashes(NamedTuple):
    """What a decision depends on: the ground truth and the agent's answer, hashed."""

    truth: str
    sql: str


def review_hashes(trials: Sequence[TrialResult]) -> ReviewHashes:
    """The hashes a decision on these trials (one question of a run) is tied to.

    The ground truth is its SQL and every ``also_accept``; the agent's side is the SQL of each
    trial (its text answer where it gave no SQL), so a decision on a word answer does not
    follow a different word answer.

    Example:
        >>> from sqlbench.verdicts import Verdict
        >>> t = TrialResult(space="s", name="q", verdict=Verdict.REVIEW, reason="r",
        ...                 truth_sql="SELECT 1", agent_sql="SELECT 1 AS one")
        >>> review_hashes([t]) == review_hashes([t.model_copy(update={"reason": "x"})])
        True
        >>> changed = t.model_copy(update={"agent_sql": "SELECT 2"})
        >>> review_hashes([t]).sql == review_hashes([changed]).sql
        False
    """
    first = trials[0]
    if first.turns is not None:
        # A conversation: every turn's ground truth and answer (docs/conversations.md).
        return ReviewHashes(
            stable_hash(
                [
                    {"sql": t.truth_sql, "expect": t.expect, "question": t.question}
                    for t in first.turns
                ]
            ),
            stable_hash(
                [
                    [{"sql": t.sql} if t.sql is not None else {"answer": t.answer} for t in turns]
                    for turns in (trial.turns or [] for trial in trials)
                ]
            ),
        )
    truth = stable_hash({"sql": first.truth_sql, "also_accept": first.also_accept})
    answers = [
        {"sql": t.agent_sql} if t.agent_sql is not None else {"answer": t.answer} for t in trials
    ]
    return ReviewHashes(truth, stable_hash(answers))


def dispute_hash(question: str, truth_sql: str | None, also_accept: list[str]) -> str:
    """What a dispute is tied to: the question's text and its ground truth.

    Example:
        >>> dispute_hash("q?", "SELECT 1", []) == dispute_hash("q?", "SELECT 1", [])
        True
        >>> dispute_hash("q?", "SELECT 1", []) == dispute_hash("q?", "SELECT 2", [])
        False
    """
    return stable_hash({"question": question, "sql": truth_sql, "also_accept": also_accept})


def trial_dispute_hash(trial: TrialResult) -> str:
    """``dispute_hash`` of the key a stored answer was graded against."""
    return dispute_hash(trial.question, trial.truth_sql, trial.also_accept)


def disputed_keys(disputes: list[Dispute]) -> dict[tuple[str, str, str], Dispute]:
    """Disputes by ``(space, name, truth_hash)``."""
    return {(d.space, d.name, d.truth_hash): d for d in disputes}
