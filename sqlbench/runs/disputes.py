"""Disputed ground truths (``sqlbench review QUESTION --dispute "why"``, docs/audit.md): a person
says the answer key of a question is wrong. The question leaves accuracy, with the count said
("2 disputed, not counted"), in every run graded against that key, on every side of a
comparison, until the question's text or its ground truth (inline SQL, certified query, any
``also_accept``) changes: the dispute is stored under their hash
(``records.hashes.dispute_hash``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlbench.records.hashes import dispute_hash, trial_dispute_hash
from sqlbench.records.run import Dispute, TrialResult, utc_now
from sqlbench.runs.liveness import current_user

if TYPE_CHECKING:
    from sqlbench.project.files import Question
    from sqlbench.runs.store import RunStore

__all__ = ["dispute", "dispute_graded"]


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
