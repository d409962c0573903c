"""Human review (docs/commands.md, ``sqlbench review``): a person decides a question's verdict.

The automatic verdict is kept; the decision is stored beside it (who, when, an optional note)
and counted in accuracy, with the number of human-decided questions said next to it. A decision
is carried to later runs of the same store only while the question's ground truth and the
agent's SQL hash the same as when the person decided (``hashes.review_hashes``); the carried
copy names the run it came from.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

import yaml

from sqlbench.errors import SqlbenchError
from sqlbench.records.hashes import review_hashes
from sqlbench.records.run import HumanReview, TrialResult, utc_now
from sqlbench.runs.liveness import current_user
from sqlbench.runs.scores import QuestionResult, RunResult
from sqlbench.verdicts import Verdict

if TYPE_CHECKING:
    from sqlbench.runs.store import RunStore

_HIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
"""Control, zero-width and bidirectional formatting characters."""
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
    turn: int | None = None,
) -> Decision:
    """Store a person's decision on ``question`` of ``run`` (replacing an earlier one).

    ``turn`` decides one turn of a conversation, kept with the person's other turn decisions
    on it; the conversation's verdict follows from them (``conversation_verdict``).

    Raises:
        SqlbenchError: ``verdict`` is not pass or fail, or the question was skipped; ``turn``
            on a question that is not a conversation, a turn it did not ask, or a run with
            repeats.
    """
    if verdict not in DECIDABLE:
        raise SqlbenchError(f"a person decides pass or fail, not {verdict.value}")
    if question.verdict is Verdict.SKIPPED:
        raise SqlbenchError(
            f"{question.full_name} was skipped in run {run.info.name}: there is nothing to decide"
        )
    hashes = review_hashes(question.trials)
    turns: dict[int, Verdict] = {}
    if turn is not None:
        turns = _turn_decisions(run, question, turn, verdict)
        verdict = conversation_verdict(question.first, turns)
    review = HumanReview(
        verdict=verdict,
        turns=turns,
        note=(note.strip() or None) if note is not None else None,
        decided_by=decided_by or current_user(),
        decided_at=utc_now(),
        truth_hash=hashes.truth,
        sql_hash=hashes.sql,
    )
    store.save_review(run.info.id, question.space, question.name, review)
    return Decision(review, question.human)


def _turn_decisions(
    run: RunResult, question: QuestionResult, turn: int, verdict: Verdict
) -> dict[int, Verdict]:
    turns = question.first.turns
    if turns is None:
        raise SqlbenchError(f"{question.full_name} is not a conversation: decide it without --turn")
    if len(question.trials) > 1:
        raise SqlbenchError(
            f"{question.full_name} was asked {len(question.trials)} times (--repeat): decide the "
            "conversation as a whole, without --turn"
        )
    if not 1 <= turn <= len(turns):
        raise SqlbenchError(
            f"{question.full_name} asked {len(turns)} turn{'s' if len(turns) != 1 else ''} in run "
            f"{run.info.name}: there is no turn {turn} to decide"
        )
    if turns[turn - 1].verdict is Verdict.ERROR:
        # The agent (or the ground truth) failed there and later turns were not asked: a
        # decision would stand in for answers that do not exist.
        raise SqlbenchError(
            f"turn {turn} of {question.full_name} is an error ({turns[turn - 1].reason}): there "
            "is no answer to decide; run it again"
        )
    earlier = question.human.turns if question.human is not None else {}
    return {**earlier, turn: verdict}


def conversation_verdict(trial: TrialResult, decided: dict[int, Verdict]) -> Verdict:
    """A conversation's verdict with a person's turn decisions in place of the automatic turn
    verdicts: pass when every turn passes, else the worst (error, fail, review)."""
    verdicts = [decided.get(t.turn, t.verdict) for t in trial.turns or []]
    if all(v is Verdict.PASS for v in verdicts):
        return Verdict.PASS
    return next(v for v in (Verdict.ERROR, Verdict.FAIL, Verdict.REVIEW) if v in verdicts)


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
        if _HIDDEN.search(sql):
            # Bidi overrides and other invisible characters would be pasted unseen (a U+202E
            # makes the SQL read otherwise than it runs): written as escapes instead.
            quoted = yaml.safe_dump([sql], allow_unicode=False, width=1000).rstrip("\n")
            lines.append("\n".join("  " + line for line in quoted.splitlines()))
            continue
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
