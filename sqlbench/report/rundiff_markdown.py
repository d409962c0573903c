"""Comparisons and check results as GitHub-flavoured Markdown (PR comments, step summaries)."""

from __future__ import annotations

from sqlbench.report.markdown_cell import cell, code
from sqlbench.report.markdown_details import details_blocks
from sqlbench.report.rundiff_format import (
    ANSWER_CHANGES_TITLE,
    SECTION_TITLES,
    SIDE_COLUMNS,
    comparison_header,
    economy_delta_lines,
    metric_delta_lines,
    reason_text,
    section_count,
    source_text,
    transition,
    verdicts_text,
)
from sqlbench.rundiff.diff import ChangeKind, RunDiff
from sqlbench.rundiff.policy import CheckResult

_LISTED_ONLY = (ChangeKind.ADDED, ChangeKind.REMOVED, ChangeKind.SKIPPED)


def render(diff: RunDiff, *, heading: str = "### sqlbench compare") -> str:
    """The comparison: accuracy table, difference, test, conclusion and every change."""
    lines = [f"{heading}: {diff.conclusion.value}", "", *_body(diff)]
    return "\n".join(lines) + "\n"


def render_check(result: CheckResult) -> str:
    """The check: pass/fail headline, each rule's outcome, then the comparison."""
    diff = result.diff
    policy = result.policy
    if result.incomplete:
        headline = "## ⏳ sqlbench check incomplete (questions not asked)"
    elif result.passed:
        headline = "## ✅ sqlbench check passed"
    else:
        broken = ", ".join(r.rule for r in result.blocking())
        headline = f"## ❌ sqlbench check failed ({broken})"
    lines = [
        headline,
        "",
        f"Base `{code(source_text(diff.base))}` → head `{code(source_text(diff.head))}`. "
        f"Fails on: {', '.join(policy.fail_on) or 'nothing'} (alpha {policy.alpha:g}).",
        "",
        "| rule | enforced | outcome |",
        "|---|---|---|",
    ]
    for rule in result.rules:
        mark = ("❌" if rule.enforced else "⚠️") if rule.failed else "✅"
        enforced = "yes" if rule.enforced else "no"
        lines.append(f"| {rule.rule} | {enforced} | {mark} {cell(rule.message)} |")
    incomplete = result.incomplete_message()
    if incomplete is not None:
        lines += ["", f"**{cell(incomplete[0].upper() + incomplete[1:])}**"]
    lines += ["", *_body(diff)]
    return "\n".join(lines) + "\n"


def _body(diff: RunDiff) -> list[str]:
    header = comparison_header(diff)
    lines = [
        "|" + "|".join(f" {title} " if title else " " for title in SIDE_COLUMNS) + "|",
        "|" + "---|" * len(SIDE_COLUMNS),
        *[
            f"| {side.role} | {cell(side.run)} | {side.accuracy} | {side.interval} |"
            for side in header.sides
        ],
        "",
        *([f"**Counted:** {cell(header.counting)}  "] if header.counting else []),
        f"**Difference (head − base):** {header.difference}  ",
        *([f"**Reliability:** {header.reliability}  "] if header.reliability else []),
        *[f"**Warning:** {cell(warning)}  " for warning in header.warnings],
        f"**Paired test:** {header.test}  ",
        f"**Conclusion:** {cell(header.conclusion)}",
    ]
    economy = economy_delta_lines(diff)
    if economy:
        lines += ["", "#### Cost, partial credit and work", ""]
        lines += [
            f"  - {cell(line.strip())}" if line.startswith("  ") else f"- {cell(line)}"
            for line in economy
        ]
    metric_lines = metric_delta_lines(diff)
    if metric_lines:
        lines += ["", "#### Metrics (means on each side; paired over shared questions)", ""]
        lines += [
            f"  - {cell(line.strip())}" if line.startswith("  ") else f"- {cell(line)}"
            for line in metric_lines
        ]
    for kind in ChangeKind:
        changes = diff.of_kind(kind)
        if not changes:
            continue
        lines += ["", f"#### {SECTION_TITLES[kind]} ({section_count(changes)})", ""]
        if kind in _LISTED_ONLY:
            for change in changes:
                present = change.head if change.head is not None else change.base
                summary = present.summary if present is not None else ""
                lines.append(
                    f"- `{code(change.full_name)}` ({summary}): {cell(reason_text(present))}"
                )
            continue
        lines += ["| question | base → head | base reason | head reason |", "|---|---|---|---|"]
        for change in changes:
            lines.append(
                f"| `{code(change.full_name)}` | {transition(change)} "
                f"| {cell(reason_text(change.base))} | {cell(reason_text(change.head))} |"
            )
        if kind is ChangeKind.REGRESSION:
            shown = [
                (transition(c), c.head.shown)
                for c in changes
                if c.head is not None and c.head.shown is not None
            ]
            if shown:
                lines += ["", *details_blocks(shown)]
    if diff.answer_changes:
        lines += [
            "",
            f"#### {ANSWER_CHANGES_TITLE} ({len(diff.answer_changes)})",
            "",
            "| question | verdicts | expected result: base → head |",
            "|---|---|---|",
        ]
        for answer in diff.answer_changes:
            lines.append(
                f"| `{cell(answer.full_name)}` | {cell(verdicts_text(diff, answer))} "
                f"| {cell(answer.summary())} |"
            )
    return lines
