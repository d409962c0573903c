"""Tool selection accuracy (Snowflake Cortex semantics) and tool call success
(docs/agent-behaviour.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlbench.project.files import ExpectedTool
from sqlbench.records.run import MetricResult, ToolCallRecord


def tool_selection_accuracy(
    expected: Sequence[ExpectedTool], calls: Sequence[ToolCallRecord]
) -> MetricResult:
    """matched tool names / max(expected entries, actual calls); order ignored, each actual
    call matched at most once; ``[]`` expected and no call made scores 1.

    Example:
        >>> calls = [ToolCallRecord(name="search"), ToolCallRecord(name="run_sql"),
        ...          ToolCallRecord(name="run_sql")]
        >>> tool_selection_accuracy([ExpectedTool(tool_name="run_sql")], calls).score
        0.3333333333333333
    """
    wanted = Counter(entry.tool_name for entry in expected)
    made = Counter(call.name for call in calls)
    matched = wanted & made
    denominator = max(len(expected), len(calls))
    score = 1.0 if denominator == 0 else sum(matched.values()) / denominator
    return MetricResult(
        score=score,
        detail={
            "expected": [entry.tool_name for entry in expected],
            "actual": [call.name for call in calls],
            "matched": sorted(matched.elements()),
            "missing": sorted((wanted - made).elements()),
            "unexpected": sorted((made - wanted).elements()),
        },
    )


def tool_call_success(calls: Sequence[ToolCallRecord]) -> MetricResult | None:
    """The share of tool calls without an error; None when no tool was called.

    Example:
        >>> calls = [ToolCallRecord(name="a"), ToolCallRecord(name="b", error="x")]
        >>> found = tool_call_success(calls)
        >>> found.score, found.detail
        (0.5, {'calls': 2, 'failed': ['b: x']})
    """
    if not calls:
        return None
    failed = [f"{call.name}: {call.error}" for call in calls if call.error is not None]
    return MetricResult(
        score=(len(calls) - len(failed)) / len(calls),
        detail={"calls": len(calls), "failed": failed},
    )
