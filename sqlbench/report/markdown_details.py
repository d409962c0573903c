"""Collapsible ``<details>`` blocks for the Markdown reports (PR comments, step summaries): for
each failing or regressed question, both SQL texts and small result previews.

GitHub refuses a job's step summary over 1 MiB, and a PR comment over 65,536 characters, so the
blocks are cut to a budget (``DEFAULT_BUDGET``, in UTF-8 bytes) and the rest is counted in one
line; SQL is fenced with more backticks than it holds, so no agent text can end the block.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from sqlbench.records.run import Preview, TrialResult
from sqlbench.report.markdown_cell import cell
from sqlbench.text import one_line

DEFAULT_BUDGET = 400_000
"""Bytes the blocks may take: well under GitHub's 1 MiB step summary with the rest of a report."""
_SQL_CHARS = 3_000
_PREVIEW_ROWS = 5
_PREVIEW_COLUMNS = 8
_CELL_CHARS = 60


def details_blocks(
    items: Sequence[tuple[str, TrialResult]], *, budget: int = DEFAULT_BUDGET
) -> list[str]:
    """Markdown lines: one ``<details>`` block per ``(label, trial)`` while they fit in
    ``budget`` bytes, then a line counting those left out.

    Example:
        >>> from sqlbench.verdicts import Verdict
        >>> t = TrialResult(space="s", name="q", verdict=Verdict.FAIL, reason="2 rows differ",
        ...                 truth_sql="SELECT 1", agent_sql="SELECT 2")
        >>> print("\\n".join(details_blocks([("fail", t)])))
        <details><summary><code>s/q</code> (fail): 2 rows differ</summary>
        <BLANKLINE>
        Ground truth SQL:
        <BLANKLINE>
        ```sql
        SELECT 1
        ```
        <BLANKLINE>
        Agent SQL:
        <BLANKLINE>
        ```sql
        SELECT 2
        ```
        <BLANKLINE>
        </details>
        <BLANKLINE>
    """
    lines: list[str] = []
    used = 0
    for index, (label, trial) in enumerate(items):
        block = _block(label, trial)
        size = len("\n".join(block).encode("utf-8")) + 1
        if used + size > budget:
            left = len(items) - index
            lines.append(
                f"_{left} more question{'s' if left != 1 else ''} not detailed here (size limit "
                "of a GitHub summary); `sqlbench show RUN QUESTION` or `sqlbench report` has "
                "them._"
            )
            break
        lines += block
        used += size
    return lines


def _block(label: str, trial: TrialResult) -> list[str]:
    summary = (
        f"<details><summary><code>{html.escape(trial.full_name)}</code> "
        f"({html.escape(label)}): {html.escape(one_line(trial.reason, 200))}</summary>"
    )
    lines = [summary, ""]
    if trial.turns is not None:
        # A conversation (docs/conversations.md): each turn with its verdict.
        for turn in trial.turns:
            lines += [
                f"**Turn {turn.turn}** ({turn.verdict.value}): {html.escape(turn.question)}  ",
                f"{html.escape(one_line(turn.reason, 200))}",
                "",
            ]
            lines += _sql("Ground truth SQL", turn.truth_sql)
            lines += _sql("Agent SQL", turn.sql)
            if turn.sql is None and turn.answer:
                lines += ["Agent's answer:", "", *_fenced(turn.answer, "text")]
            lines += _preview("Expected result", turn.expected_preview)
            lines += _preview("Agent result", turn.actual_preview)
        return [*lines, "</details>", ""]
    lines += _sql("Ground truth SQL", trial.truth_sql)
    lines += _sql("Agent SQL", trial.agent_sql)
    if trial.agent_sql is None and trial.answer:
        lines += ["Agent's answer:", "", *_fenced(trial.answer, "text")]
    lines += _preview("Expected result", trial.expected_preview)
    lines += _preview("Agent result", trial.actual_preview)
    lines += ["</details>", ""]
    return lines


def _sql(title: str, sql: str | None) -> list[str]:
    if sql is None or not sql.strip():
        return [f"{title}: (none)", ""]
    return [f"{title}:", "", *_fenced(sql.strip(), "sql")]


def _fenced(text: str, language: str) -> list[str]:
    if len(text) > _SQL_CHARS:
        text = text[:_SQL_CHARS] + f"\n… ({len(text) - _SQL_CHARS} more characters)"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence, ""]


def _preview(title: str, preview: Preview | None) -> list[str]:
    if preview is None:
        return []
    columns = preview.columns[:_PREVIEW_COLUMNS]
    more_columns = len(preview.columns) - len(columns)
    rows = list(zip(preview.rows, preview.differs, strict=True))[:_PREVIEW_ROWS]
    header = ["", *(_cell(c) for c in columns)]
    lines = [
        f"{title} ({_count(preview.total_rows, 'row')}, {preview.differing_rows} without a "
        "partner"
        + (f", {more_columns} more columns" if more_columns else "")
        + "; ✗ marks a row without a partner):",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for row, differs in rows:
        cells = ["✗" if differs else "", *(_cell(v) for v in row[:_PREVIEW_COLUMNS])]
        lines.append("| " + " | ".join(cells) + " |")
    if preview.total_rows > len(rows):
        lines.append(
            f"| … | {_count(preview.total_rows - len(rows), 'more row')} |"
            + " |" * (len(header) - 2)
        )
    return [*lines, ""]


def _count(n: int, noun: str) -> str:
    """``1 row``, ``2 rows``.

    Example:
        >>> _count(1, "row"), _count(3, "more row")
        ('1 row', '3 more rows')
    """
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _cell(value: object) -> str:
    text = "NULL" if value is None else str(value)
    return cell(one_line(text, _CELL_CHARS)) or " "
