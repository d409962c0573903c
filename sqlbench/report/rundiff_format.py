"""Wording shared by the comparison renderers (text, Markdown, JSON, JUnit).

Numbers and sentences about a ``RunDiff`` are built here once, so every format says the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlbench.records.accuracy import Accuracy, IntervalMethod
from sqlbench.report.run_format import ratio_text, usd_text
from sqlbench.rundiff.answers import AnswerChange
from sqlbench.rundiff.diff import Change, ChangeKind, QuestionOutcome, RunDiff, RunSide
from sqlbench.rundiff.stats import Conclusion, format_p, min_questions
from sqlbench.runs.spend import RunCost
from sqlbench.text import percent

SECTION_TITLES: dict[ChangeKind, str] = {
    ChangeKind.REGRESSION: "Regressions: passed on base, not on head",
    ChangeKind.FIX: "Fixes: pass on head, did not on base",
    ChangeKind.FLAKY: "Flaky: 0 < pass rate < 1 on a side (not a regression or a fix)",
    ChangeKind.CHANGED: "Other changes: a non-pass verdict became another",
    ChangeKind.ADDED: "Added: on head only (not counted)",
    ChangeKind.REMOVED: "Removed: on base only (not counted)",
    ChangeKind.SKIPPED: "Skipped on one side only (not counted)",
    ChangeKind.NOT_ASKED: "Not asked: the agent's endpoint was unreachable (not counted)",
}
"""Heading of each kind of change, in report order."""
ANSWER_CHANGES_TITLE = "Answer changes: the expected result differs, whatever the verdicts"
"""Heading of the questions whose ground-truth result differs between the sides."""


def points(value: float) -> str:
    """A difference of proportions in percentage points, signed.

    Example:
        >>> points(-0.2), points(0.0), points(1 / 30)
        ('-20.0 points', '0.0 points', '+3.3 points')
    """
    return f"{value * 100:+.1f} points" if value else "0.0 points"


def accuracy_text(accuracy: Accuracy) -> str:
    """``80% (8/10)`` for single runs; ``73% mean pass rate (10 questions)`` for repeats."""
    if accuracy.method is not IntervalMethod.BOOTSTRAP or accuracy.value is None:
        return accuracy.label()
    return f"{percent(accuracy.value)} mean pass rate ({accuracy.questions} questions)"


def interval_text(accuracy: Accuracy) -> str:
    """``49%–94% (Wilson)``; ``n/a`` for a side with no questions."""
    if accuracy.total == 0 or accuracy.interval is None:
        return "n/a (no questions)"
    low, high = accuracy.interval
    return f"{percent(low)}–{percent(high)} ({accuracy.method})"


def side_text(side: RunSide) -> str:
    """``main-2024… (main@1a2b3c4, agent auto, reused)``; ``+dirty`` after the commit of a
    working tree with uncommitted edits, as wherever a run's version is shown."""
    details = []
    if side.branch:
        details.append(source_text(side))
    if side.agent:
        details.append(f"agent {side.agent}")
    if side.reused:
        details.append("reused")
    return f"{side.label} ({', '.join(details)})" if details else side.label


def source_text(side: RunSide) -> str:
    """``main@1a2b3c4`` (``main@1a2b3c4+dirty`` for uncommitted edits): which version a side
    evaluated (its label when it has no branch)."""
    dirty = "+dirty" if side.dirty else ""
    if side.branch and side.commit and side.branch != side.commit:
        return f"{side.branch}@{side.commit[:7]}{dirty}"
    if side.commit:
        return f"{side.commit[:7]}{dirty}"
    return f"{side.branch}{dirty}" if side.branch else side.label


def outcome_text(outcome: QuestionOutcome | None) -> str:
    """``pass``, ``flaky 2/3``, or ``absent``."""
    return "absent" if outcome is None else outcome.summary


def transition(change: Change) -> str:
    """``pass → fail``; ``fail → pass (person; automatic fail)`` where a person decided."""
    return f"{outcome_text(change.base)} → {outcome_text(change.head)}"


def section_count(changes: list[Change]) -> str:
    """``2`` changes, or ``2, 1 by a person's decision only`` when a decision alone made some
    of them (the automatic verdicts did not flip).

    Example:
        >>> section_count([])
        '0'
    """
    by_person = sum(1 for change in changes if change.by_person)
    if not by_person:
        return str(len(changes))
    return f"{len(changes)}, {by_person} by a person's decision only"


def verdicts_text(diff: RunDiff, answer: AnswerChange) -> str:
    """``pass → pass``: the question's verdicts on each side, beside its answer change."""
    key = (answer.space, answer.name)
    base = next((o for o in diff.base.outcomes if (o.space, o.name) == key), None)
    head = next((o for o in diff.head.outcomes if (o.space, o.name) == key), None)
    return f"{outcome_text(base)} → {outcome_text(head)}"


def reason_text(outcome: QuestionOutcome | None) -> str:
    """The outcome's reason, with the pass count for repeated trials."""
    if outcome is None:
        return "(not in this run)"
    if outcome.decided and outcome.human is not None:
        review = outcome.human
        decided = f"decided {review.verdict.value} by {review.decided_by}"
        if review.note:
            decided += f" ({review.note})"
        if review.carried_from:
            decided += f", carried from run {review.carried_from}"
        return f"{decided}; automatic: {outcome.machine().reason}"
    return outcome.reason


def counting_text(diff: RunDiff) -> str | None:
    """What the accuracies count when a person decided any question: their decisions, or
    (``--automatic-only``) the automatic verdicts alone; None when nobody decided anything."""
    if diff.automatic_only:
        if not diff.decisions_left_out:
            return None
        many = diff.decisions_left_out
        return (
            f"automatic verdicts only (--automatic-only): {many} decision"
            f"{'' if many == 1 else 's'} by a person left out"
        )
    decided = diff.base_accuracy.human + diff.head_accuracy.human
    if not decided:
        return None
    by_person = sum(1 for change in diff.changes if change.by_person)
    flips = (
        f"; {by_person} change{'' if by_person == 1 else 's'} made by a decision only"
        if (by_person)
        else ""
    )
    return (
        "a person's decision counts in place of the automatic verdict (sqlbench review)"
        f"{flips}; --automatic-only counts the machine's verdicts alone"
    )


def test_text(diff: RunDiff) -> str:
    """``exact McNemar on 10 shared questions, 2 changed: p = 0.5``."""
    test = diff.test
    text = f"{test.method} on {test.questions} shared questions, {test.changed} changed"
    if test.p_value is not None:
        text += f": {format_p(test.p_value)}"
    return text


def conclusion_text(diff: RunDiff) -> str:
    """The one-word conclusion followed by why, in one sentence."""
    test = diff.test
    word = test.conclusion.value
    if test.conclusion is Conclusion.TOO_FEW:
        need = min_questions(test.alpha)
        return (
            f"{word}: with {test.questions} shared questions no difference could be significant "
            f"at alpha {test.alpha:g} (needs at least {need})"
        )
    if test.p_value is None:
        return word
    if test.conclusion is Conclusion.INCONCLUSIVE:
        if test.changed == 0:
            return f"{word}: no shared question changed"
        return (
            f"{word}: the difference is not significant at alpha {test.alpha:g} "
            f"({format_p(test.p_value)})"
        )
    better = "better" if test.conclusion is Conclusion.IMPROVED else "worse"
    return (
        f"{word}: head is significantly {better} than base "
        f"({format_p(test.p_value)}, below alpha {test.alpha:g})"
    )


def difference_text(diff: RunDiff) -> str:
    """``-20.0 points on 10 shared questions`` plus the paired bootstrap interval for repeated
    runs; ``n/a`` when the sides share no question (an empty side)."""
    if diff.difference is None:
        return "n/a: the two sides share no question"
    shared = f"{diff.paired} shared question{'s' if diff.paired != 1 else ''}"
    text = f"{points(diff.difference)} on {shared}"
    if diff.difference_interval is not None:
        low, high = diff.difference_interval
        text += f" (95% paired bootstrap: {points(low)} to {points(high)})"
    return text


def metric_delta_lines(diff: RunDiff) -> list[str]:
    """One line per agent-behaviour metric (both means, the paired difference and test), then the
    questions whose score dropped most; empty when neither run has metrics."""
    lines = []
    for delta in diff.metrics:
        base = "n/a" if delta.base_mean is None else percent(delta.base_mean)
        head = "n/a" if delta.head_mean is None else percent(delta.head_mean)
        test = delta.test
        if delta.paired_mean_difference is None:
            paired = "no question scored on both sides"
        else:
            paired = (
                f"{points(delta.paired_mean_difference)} on {test.questions} shared, "
                f"{test.method}"
                + (f" {format_p(test.p_value)}" if test.p_value is not None else "")
                + f": {test.conclusion.value}"
            )
        lines.append(f"{delta.name}: base {base} → head {head} ({paired})")
        if delta.dropped:
            worst = ", ".join(
                f"{d.full_name} {percent(d.base)} → {percent(d.head)}" for d in delta.dropped
            )
            lines.append(f"  dropped most: {worst}")
    return lines


SIDE_COLUMNS = ("", "run", "accuracy", "95% interval")
"""Columns of the table that opens a comparison: one row per side."""


@dataclass(frozen=True)
class SideSummary:
    """One side's row of the table that opens a comparison."""

    role: str
    """``base`` or ``head``."""
    run: str
    accuracy: str
    interval: str

    @property
    def cells(self) -> tuple[str, str, str, str]:
        """The row's cells, in ``SIDE_COLUMNS`` order."""
        return (self.role, self.run, self.accuracy, self.interval)


@dataclass(frozen=True)
class ComparisonHeader:
    """What every comparison report opens with, worded once; each format lays it out."""

    sides: tuple[SideSummary, SideSummary]
    """Base, then head."""
    difference: str
    warnings: tuple[str, ...]
    test: str
    conclusion: str
    counting: str | None = None
    """What the accuracies count, when a person decided any question (``counting_text``)."""
    reliability: str | None = None
    """``base 0.50 → head 0.75 (decline_penalty 1; wrong answers 2 → 1)``; None when either
    side has no run."""


def comparison_header(diff: RunDiff) -> ComparisonHeader:
    """The header facts of a comparison: each side's run, accuracy and interval, the
    difference, the warnings, the paired test and the conclusion."""
    return ComparisonHeader(
        sides=(
            _side_summary("base", diff.base, diff.base_accuracy),
            _side_summary("head", diff.head, diff.head_accuracy),
        ),
        difference=difference_text(diff),
        warnings=tuple(diff.warnings),
        test=test_text(diff),
        conclusion=conclusion_text(diff),
        counting=counting_text(diff),
        reliability=reliability_text(diff),
    )


def reliability_text(diff: RunDiff) -> str | None:
    """Each side's reliability score and wrong answers (docs/conversations.md)."""
    base, head = diff.base.abstention, diff.head.abstention
    if base is None or head is None:
        return None

    def score(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    penalty = f"decline_penalty {head.penalty:g}"
    if base.penalty != head.penalty:
        penalty = f"decline_penalty {base.penalty:g} → {head.penalty:g}"
    return (
        f"base {score(base.reliability)} → head {score(head.reliability)} ({penalty}; wrong "
        f"answers {base.wrong_answers} → {head.wrong_answers}; correct declines "
        f"{base.correct_declines}/{base.expected_declines} → "
        f"{head.correct_declines}/{head.expected_declines})"
    )


def _side_summary(role: str, side: RunSide, accuracy: Accuracy) -> SideSummary:
    return SideSummary(role, side_text(side), accuracy_text(accuracy), interval_text(accuracy))


def _signed_usd(value: float) -> str:
    """A dollar delta with its sign: ``+$0.012``, ``-$1.50``, ``$0.00``."""
    if not value:
        return "$0.00"
    return ("+" if value > 0 else "-") + usd_text(abs(value))


def economy_delta_lines(diff: RunDiff) -> list[str]:
    """Cost on each side with the delta beside the accuracy's, partial credit on the
    questions failing on both sides, work ratios and the questions past ``max_work_ratio``
    (docs/cost.md); empty when the runs carry none of these."""
    economy = diff.economy
    if economy is None or economy.empty:
        return []
    lines = []
    base, head = economy.base_cost, economy.head_cost
    if base is not None or head is not None:

        def side(cost: RunCost | None) -> str:
            if cost is None:
                return "no cost recorded"
            if cost.usd is None:
                unpriced = f" (no price for {', '.join(cost.unpriced)})" if cost.unpriced else ""
                return f"not priced{unpriced}"
            return f"{usd_text(cost.usd)} ({usd_text(cost.per_correct)} per correct answer)"

        line = f"Cost: base {side(base)} → head {side(head)}"
        if economy.usd_delta is not None:
            line += f": {_signed_usd(economy.usd_delta)}"
            if economy.per_correct_delta is not None:
                line += f" ({_signed_usd(economy.per_correct_delta)} per correct answer)"
            if diff.difference is not None:
                line += f", accuracy {points(diff.difference)}"
        lines.append(line)
    means = economy.credit_means
    if means is not None:
        count = len(economy.both_failing)
        lines.append(
            f"Partial credit on the {count} question{'s' if count != 1 else ''} failing on "
            f"both sides: F1 base {means[0]:.2f} → head {means[1]:.2f}"
        )
        moved = sorted(economy.both_failing, key=lambda p: -abs(p.head - p.base))[:5]
        lines += [f"  {p.full_name} {p.base:.2f} → {p.head:.2f}" for p in moved if p.head != p.base]
    if economy.base_work_median is not None or economy.head_work_median is not None:
        lines.append(
            f"Work ({economy.work_unit}): median agent/truth base "
            f"{ratio_text(economy.base_work_median)} → head "
            f"{ratio_text(economy.head_work_median)}"
        )
    if economy.max_work_ratio is not None:
        over = economy.over_work_ratio
        lines.append(
            f"Over max_work_ratio {economy.max_work_ratio:g} on head: "
            + (", ".join(f"{o.full_name} {ratio_text(o.ratio)}" for o in over) or "none")
        )
    return lines
