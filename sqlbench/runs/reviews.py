"""Human review (docs/commands.md, ``sqlbench review``): a person decides a question's verdict.

The automatic verdict is kept; the decision is stored beside it (who, when, an optional note)
and counted in accuracy, with the number of human-decided questions said next to it. A decision
is carried to later runs of the same store only while the question's ground truth and the
agent's SQL hash the same as when the person decided (``hashes.review_hashes``); the carried
copy names the run it came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import yaml

from sqlbench.errors import SqlbenchError
from sqlbench.runs.hashes import review_hashes
from sqlbench.runs.liveness import current_user
from sqlbench.runs.records import HumanReview, utc_now
from sqlbench.runs.scores import QuestionResult, RunResult
from sqlbench.verdicts import Verdict

if TYPE_CHECKING:
    from sqlbench.runs.store import RunStore

DECIDABLE = (Verdict.PASS, Verdict.FAIL)
"""What a person can decide."""


class Decision(NamedTuple):
    """What ``decide`` stored."""

    review: HumanReview
    replaced: HumanReview | None
    """The decision it replaced on the same question, if any."""


def decide(
    store: RunStore,
    run: RunResult,
    question: QuestionResult,
    verdict: Verdict,
    note: str | None = None,
    *,
    decided_by: str | None = None,
) -> Decision:
    """Store a person's decision on ``question`` of ``run`` (replacing an earlier one).

    Raises:
        SqlbenchError: ``verdict`` is not pass or fail, or the question was skipped.
    """
    if verdict not in DECIDABLE:
        raise SqlbenchError(f"a person decides pass or fail, not {verdict.value}")
    if question.verdict is Verdict.SKIPPED:
        raise SqlbenchError(
            f"{question.full_name} was skipped in run {run.info.name}: there is nothing to decide"
        )
    hashes = review_hashes(question.trials)
    review = HumanReview(
        verdict=verdict,
        note=(note.strip() or None) if note is not None else None,
        decided_by=decided_by or current_user(),
        decided_at=utc_now(),
        truth_hash=hashes.truth,
        sql_hash=hashes.sql,
    )
    store.save_review(run.info.id, question.space, question.name, review)
    return Decision(review, question.human)


def also_accept_proposal(question: QuestionResult) -> str | None:
    """The YAML to paste into the question's file so that the agent's SQL of a question a
    person decided ``pass`` passes on its own next time; None when there is nothing to propose
    (not decided pass, passed on its own, no agent SQL, or that SQL is already accepted)."""
    human = question.human
    sql = question.first.agent_sql
    if human is None or human.verdict is not Verdict.PASS or not sql:
        return None
    if question.first.turns is not None:
        return None  # a conversation's ground truths are per turn: nothing at its top level
    if question.verdict is Verdict.PASS:
        return None
    accepted = list(question.first.also_accept)
    if sql.strip() in (s.strip() for s in accepted):
        return None
    return _also_accept_yaml([*accepted, sql.strip()])


def _also_accept_yaml(sqls: list[str]) -> str:
    """``also_accept:`` with each SQL as a ``|`` block (read as written), or in PyYAML's own
    quoting where a block would not load back to the same text.

    Example:
        >>> print(_also_accept_yaml(["SELECT a" + chr(10) + "FROM t"]), end="")
        also_accept:
          - |-
            SELECT a
            FROM t
    """
    lines = ["also_accept:"]
    for sql in sqls:
        block = "  - |-\n" + "".join(f"    {line}\n" for line in sql.splitlines())
        try:
            loaded = yaml.safe_load("x:\n" + block)
        except yaml.YAMLError:
            loaded = None
        if loaded == {"x": [sql]}:
            lines.append(block.rstrip("\n"))
        else:
            quoted = yaml.safe_dump([sql], allow_unicode=True, width=1000).rstrip("\n")
            lines.append("\n".join("  " + line for line in quoted.splitlines()))
    return "\n".join(lines) + "\n"
