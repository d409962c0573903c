"""Disputed ground truths (``sqlbench review QUESTION --dispute "why"``, docs/audit.md): a person
says the answer key of a question is wrong. The question leaves accuracy, with the count said
("2 disputed, not counted"), in every run graded against that key, on every side of a
comparison, until the question's text or its ground truth (inline SQL, certified query, any
``also_accept``) changes: the dispute is stored under their hash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlbench.runs.identity import stable_hash
from sqlbench.runs.liveness import current_user
from sqlbench.runs.records import Dispute, TrialResult, utc_now

if TYPE_CHECKING:
    from sqlbench.project.files import Question
    from sqlbench.runs.store import RunStore

__all__ = [
    "dispute",
    "dispute_graded",
    "dispute_hash",
    "disputed_keys",
    "trial_dispute_hash",
]


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


def dispute(store: RunStore, question: Question, reason: str) -> Dispute:
    """Store a person's dispute of ``question``'s current ground truth (replacing theirs or
    another's on the same key)."""
    found = Dispute(
        space=question.space,
        name=question.name,
        truth_hash=dispute_hash(question.question, question.truth_sql, list(question.also_accept)),
        reason=reason,
        disputed_by=current_user(),
        disputed_at=utc_now(),
    )
    store.save_dispute(found)
    return found


def dispute_graded(store: RunStore, trial: TrialResult, reason: str) -> Dispute:
    """Store a person's dispute of the ground truth ``trial`` was graded against (the viewer,
    which reads runs, not the project's files)."""
    found = Dispute(
        space=trial.space,
        name=trial.name,
        truth_hash=trial_dispute_hash(trial),
        reason=reason,
        disputed_by=current_user(),
        disputed_at=utc_now(),
    )
    store.save_dispute(found)
    return found
