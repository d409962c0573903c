"""A run as Markdown (a CI job summary, a pull-request comment)."""

from __future__ import annotations

from sqlbench.records.run import RunStatus
from sqlbench.report.markdown_cell import cell, code
from sqlbench.report.markdown_details import details_blocks
from sqlbench.report.metric_format import metric_lines
from sqlbench.report.run_format import (
    abstention_line,
    accuracy_line,
    counts_line,
    economy_lines,
    has_conversations,
    latency_text,
    not_asked_line,
    question_latency,
    shows_abstention,
    turn_accuracy_line,
    verdict_text,
)
from sqlbench.runs.scores import RunResult
from sqlbench.verdicts import Verdict

_ICONS = {
    Verdict.PASS: "✅",
    Verdict.FAIL: "❌",
    Verdict.REVIEW: "🔍",
    Verdict.ERROR: "⚠️",
    Verdict.SKIPPED: "⏭️",
}


def render(run: RunResult) -> str:
    """A heading with the accuracy and the run's identity, then one table row per question."""
    info = run.info
    status = "" if run.status is RunStatus.COMPLETED else f" — **{run.status.label}**"
    lines = [
        f"## sqlbench run `{code(info.name)}`{status}",
        "",
        f"**{accuracy_line(run.accuracy, info.repeat)}** · {counts_line(run)}",
        *([] if not_asked_line(run) is None else ["", cell(not_asked_line(run) or "")]),
        "",
        *([turn_accuracy_line(run.abstention()), ""] if has_conversations(run) else []),
        *([abstention_line(run.abstention()), ""] if shows_abstention(run) else []),
        *_metric_list(run),
        *_warehouse_table(run),
        f"Branch `{code(info.source_label)}` ({info.environment}) · agent "
        f"`{code(info.agent_name)}` ({info.agent_kind})"
        + (f" · shard {info.shard}" if info.shard else "")
        + (f" · repeat {info.repeat}" if info.repeat > 1 else ""),
        "",
        "| | Question | Verdict | Reason | Latency |",
        "|---|---|---|---|---|",
    ]
    for question in run.questions:
        lines.append(
            f"| {_ICONS[question.verdict]} | `{code(question.full_name)}` | "
            f"{verdict_text(question)} | {cell(question.reason)} | "
            f"{latency_text(question_latency(question))} |"
        )
    failing = [
        (verdict_text(q), next(t for t in q.trials if t.verdict is q.verdict))
        for q in run.questions
        if q.decided_verdict in (Verdict.FAIL, Verdict.ERROR)
    ]
    if failing:
        lines += ["", f"#### Failing questions ({len(failing)})", "", *details_blocks(failing)]
    return "\n".join(lines) + "\n"


def _metric_list(run: RunResult) -> list[str]:
    lines = [*metric_lines(t for q in run.questions for t in q.trials), *economy_lines(run)]
    if not lines:
        return []
    return [*(f"- {cell(line)}" for line in lines), ""]


def _warehouse_table(run: RunResult) -> list[str]:
    accuracies = run.by_warehouse()
    if not accuracies:
        return []
    rows = [f"| `{code(name)}` | {acc.label()} |" for name, acc in accuracies.items()]
    return ["| Warehouse | Accuracy |", "|---|---|", *rows, ""]
