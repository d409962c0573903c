"""``sqlbench compare`` as plain text for a terminal."""

from __future__ import annotations

from sqlbench.report.rundiff_format import (
    ANSWER_CHANGES_TITLE,
    SECTION_TITLES,
    SIDE_COLUMNS,
    comparison_header,
    economy_delta_lines,
    metric_delta_lines,
    reason_text,
    section_count,
    transition,
    verdicts_text,
)
from sqlbench.rundiff.diff import ChangeKind, RunDiff
from sqlbench.rundiff.policy import CheckResult

_LISTED_ONLY = (ChangeKind.ADDED, ChangeKind.REMOVED)


def render(diff: RunDiff) -> str:
    """The comparison as text: both accuracies, the changes with both reasons, the test.

    Added and removed questions are listed one per line; every other change shows the
    question, the transition and the reason on each side.
    """
    header = comparison_header(diff)
    rows = [SIDE_COLUMNS, *(side.cells for side in header.sides)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(SIDE_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    ]
    if header.counting:
        lines.append(f"Counted: {header.counting}")
    lines.append(f"Difference (head - base): {header.difference}")
    if header.reliability is not None:
        lines.append(f"Reliability: {header.reliability}")
    lines += [f"Warning: {warning}" for warning in header.warnings]
    for kind in ChangeKind:
        changes = diff.of_kind(kind)
        if not changes:
            if kind in (ChangeKind.REGRESSION, ChangeKind.FIX):
                lines += ["", f"{SECTION_TITLES[kind]}: none"]
            continue
        lines += ["", f"{SECTION_TITLES[kind]} ({section_count(changes)}):"]
        name_width = max(len(c.full_name) for c in changes)
        for change in changes:
            if kind in _LISTED_ONLY:
                present = change.head if kind is ChangeKind.ADDED else change.base
                lines.append(
                    f"  {change.full_name.ljust(name_width)}  "
                    f"{present.summary if present else ''}: {reason_text(present)}"
                )
                continue
            lines.append(f"  {change.full_name.ljust(name_width)}  {transition(change)}")
            lines.append(f"      base: {reason_text(change.base)}")
            lines.append(f"      head: {reason_text(change.head)}")
    answers = diff.answer_changes
    lines += ["", f"{ANSWER_CHANGES_TITLE}: " + (f"{len(answers)}" if answers else "none")]
    for answer in answers:
        lines.append(f"  {answer.full_name}  {verdicts_text(diff, answer)}")
        lines.append(f"      expected: {answer.summary()}")
    metric_lines = metric_delta_lines(diff)
    if metric_lines:
        lines += ["", "Metrics (means on each side; paired over shared questions):"]
        lines += [f"  {line}" for line in metric_lines]
    economy = economy_delta_lines(diff)
    if economy:
        lines += ["", *economy]
    lines += ["", f"Paired test: {header.test}", f"Conclusion: {header.conclusion}"]
    return "\n".join(lines) + "\n"


def render_check(result: CheckResult) -> str:
    """The check as text: each rule's outcome, the comparison, then the verdict line."""
    lines = []
    for rule in result.rules:
        mark = ("FAIL" if rule.enforced else "warn") if rule.failed else "ok"
        enforced = "" if rule.enforced else " (not enforced)"
        lines.append(f"  {mark:<4}  {rule.rule}{enforced}: {rule.message}")
    verdict = (
        "passed" if result.passed else ("failed: " + ", ".join(r.rule for r in result.blocking()))
    )
    incomplete = result.incomplete_message()
    if incomplete is not None:
        verdict = incomplete if result.passed else f"{verdict}; {incomplete}"
    return (
        "\n".join(
            ["Check rules:", *lines, "", render(result.diff).rstrip(), "", f"Check {verdict}"]
        )
        + "\n"
    )
