"""What the HTML report shows, as JSON-safe data: the run, its questions, the comparison with a
base and the accuracy trend. ``report/html.py`` puts it in the page; the page's script draws the
question list and detail from it with text nodes only (agent output is untrusted).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlbench.records.run import HumanReview, Preview, RunSummary, TurnResult
from sqlbench.report.run_format import (
    abstention_json,
    abstention_line,
    counts_line,
    economy_lines,
    has_conversations,
    human_line,
    shows_abstention,
    trial_economy,
    turn_accuracy_line,
    usd_text,
    verdict_text,
)
from sqlbench.report.rundiff_format import counting_text, reliability_text
from sqlbench.rundiff.answers import AnswerChange
from sqlbench.rundiff.diff import ChangeKind, RunDiff, diff_runs, side_from_result
from sqlbench.rundiff.stats import format_p
from sqlbench.runs.scores import QuestionResult, RunResult
from sqlbench.verdicts import Verdict

if TYPE_CHECKING:
    from sqlbench.variants.rebuild import RebuiltVariant

_PLAIN_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?$")


def report_data(
    run: RunResult,
    *,
    base: RunResult | None = None,
    history: Sequence[RunSummary] = (),
    variants: Mapping[tuple[str, str], RebuiltVariant] | None = None,
) -> dict[str, Any]:
    """Everything the page shows about ``run`` (and its comparison with ``base``); with
    ``variants``, the rows of the data variant each question failed on."""
    diff = _diff(base, run) if base is not None else None
    change_of = {(c.space, c.name): c.kind.value for c in diff.changes} if diff else {}
    changed_answers = list(diff.answer_changes) if diff is not None else []
    answer_changed = {(a.space, a.name) for a in changed_answers}
    questions = [
        _question(q, change_of.get((q.space, q.name)), (q.space, q.name) in answer_changed)
        for q in run.questions
    ]
    for entry, question in zip(questions, run.questions, strict=True):
        rebuilt = (variants or {}).get((question.space, question.name))
        entry["variant"] = None if rebuilt is None else _variant(rebuilt)
    data: dict[str, Any] = {
        "run": _run(run),
        "breakdowns": {
            "space": _breakdown(run.questions, lambda q: [q.space]),
            "tag": _breakdown(run.questions, lambda q: list(q.first.tags) or ["(no tag)"]),
        },
        "questions": questions,
        "compare": _compare(diff, base, changed_answers) if diff and base else None,
        "trend": trend_series(history, run),
    }
    return data


def _diff(base: RunResult, head: RunResult) -> RunDiff:
    return diff_runs(side_from_result(base), side_from_result(head))


def _run(run: RunResult) -> dict[str, Any]:
    info = run.info
    accuracy = run.accuracy
    latencies = sorted(
        t.latency_ms for q in run.questions for t in q.trials if t.latency_ms is not None
    )
    input_tokens = [t.input_tokens for q in run.questions for t in q.trials if t.input_tokens]
    output_tokens = [t.output_tokens for q in run.questions for t in q.trials if t.output_tokens]
    interval = accuracy.interval
    return {
        "id": info.id,
        "name": info.name,
        "environment": info.environment,
        "source": info.source_label,
        "agent": f"{info.agent_name} ({info.agent_kind})",
        "status": run.status.label,
        "accuracy": accuracy.label(),
        "value": accuracy.value,
        "interval": f"{interval.low:.0%}–{interval.high:.0%}" if interval else None,
        "human": accuracy.human,
        "counts": counts_line(run),
        "abstention": abstention_json(run.abstention()),
        "abstention_line": abstention_line(run.abstention()) if shows_abstention(run) else None,
        "turn_accuracy": (turn_accuracy_line(run.abstention()) if has_conversations(run) else None),
        "created_by": info.created_by,
        "created_at": f"{info.created_at:%Y-%m-%d %H:%M} UTC",
        "updated_at": f"{info.updated_at:%Y-%m-%d %H:%M} UTC",
        "repeat": info.repeat,
        "imported": info.imported,
        "latency_p50": _percentile(latencies, 0.5),
        "latency_p95": _percentile(latencies, 0.95),
        "input_tokens": sum(input_tokens) if input_tokens else None,
        "output_tokens": sum(output_tokens) if output_tokens else None,
        "cost": _cost(run),
        "economy": economy_lines(run),
        "error": info.error,
    }


def _cost(run: RunResult) -> dict[str, str] | None:
    """The run's cost as the report shows it (docs/cost.md); None when none was recorded."""
    cost = run.cost()
    if cost is None:
        return None
    return {
        "total": usd_text(cost.usd),
        "per_correct": usd_text(cost.per_correct) if cost.usd is not None else "not priced",
        "tokens": f"{cost.tokens:,}" if cost.tokens is not None else "–",
    }


def _percentile(values: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile of sorted ``values``.

    Example:
        >>> _percentile([10.0, 20.0, 30.0, 40.0], 0.5), _percentile([], 0.5)
        (20.0, None)
    """
    if not values:
        return None
    rank = max(1, math.ceil(fraction * len(values)))
    return values[rank - 1]


def _breakdown(questions: Sequence[QuestionResult], keys: Any) -> list[dict[str, Any]]:
    passed: dict[str, float] = {}
    total: Counter[str] = Counter()
    for question in questions:
        if question.pass_rate is None:
            continue
        for key in keys(question):
            passed[key] = passed.get(key, 0.0) + question.pass_rate
            total[key] += 1
    return [
        {"key": key, "passed": round(passed[key], 2), "total": total[key]} for key in sorted(total)
    ]


def _question(question: QuestionResult, change: str | None, answer_changed: bool) -> dict[str, Any]:
    shown = next((t for t in question.trials if t.verdict is not Verdict.PASS), question.first)
    entry: dict[str, Any] = {
        "id": question.full_name,
        "space": question.space,
        "name": question.name,
        "verdict": question.verdict.value,
        "decided": question.decided_verdict.value,
        "label": verdict_text(question),
        "human": _human(question.human),
        "disputed": None
        if question.disputed is None
        else {
            "by": question.disputed.disputed_by,
            "since": question.disputed.disputed_at.strftime("%Y-%m-%d %H:%M UTC"),
            "reason": question.disputed.reason,
        },
        "reason": question.reason,
        "question": shown.question,
        "tags": list(shown.tags),
        "truth_sql": shown.truth_sql,
        "also_accept": list(shown.also_accept),
        "matched_truth": shown.matched_truth,
        "agent_sql": shown.agent_sql,
        "answer": shown.answer,
        "agent_error": shown.agent_error,
        "expected": _preview(shown.expected_preview),
        "actual": _preview(shown.actual_preview),
        "aligned": aligned_rows(shown.expected_preview, shown.actual_preview),
        "tool_calls": [
            call.model_dump(mode="json", exclude_none=True) for call in shown.tool_calls
        ],
        "metrics": {
            name: metric.model_dump(mode="json", exclude_defaults=True)
            for name, metric in shown.metrics.items()
        },
        "assertions": [a.model_dump(mode="json") for a in shown.assertions],
        "latency_ms": shown.latency_ms,
        "input_tokens": shown.input_tokens,
        "output_tokens": shown.output_tokens,
        "economy": trial_economy(shown),
        "work_ratio": shown.work.ratio if shown.work is not None else None,
        "trials": [t.verdict.value for t in question.trials],
        "trial": shown.trial,
        "expect": shown.expect,
        "turns": [_turn(turn) for turn in shown.turns] if shown.turns is not None else None,
        "change": change,
        "answer_changed": answer_changed,
    }
    return entry


VARIANT_ROWS = 200
"""Rows of each table of a data variant the page holds."""


def _variant(rebuilt: RebuiltVariant) -> dict[str, Any]:
    """A data variant's tables, each shaped as a preview."""
    tables = []
    for table in rebuilt.tables:
        columns = [c for c, _, _ in table.columns]
        rows = [[_cell(row.get(c)) for c in columns] for row in table.rows[:VARIANT_ROWS]]
        tables.append(
            {"name": table.name, "columns": columns, "rows": rows, "total_rows": len(table.rows)}
        )
    return {"number": rebuilt.number, "fingerprint": rebuilt.fingerprint, "tables": tables}


def _turn(turn: TurnResult) -> dict[str, Any]:
    """One turn of a conversation for the report's thread (docs/conversations.md)."""
    return {
        "turn": turn.turn,
        "question": turn.question,
        "verdict": turn.verdict.value,
        "reason": turn.reason,
        "expect": turn.expect,
        "truth_sql": turn.truth_sql,
        "agent_sql": turn.sql,
        "answer": turn.answer,
        "agent_error": turn.agent_error,
        "expected": _preview(turn.expected_preview),
        "actual": _preview(turn.actual_preview),
        "aligned": aligned_rows(turn.expected_preview, turn.actual_preview),
    }


def _human(review: HumanReview | None) -> dict[str, Any] | None:
    if review is None:
        return None
    return {**review.model_dump(mode="json"), "line": human_line(review)}


def _preview(preview: Preview | None) -> dict[str, Any] | None:
    """A preview, compact: ``marked`` lists the indexes of the rows without a partner and
    ``row_numbers`` is left out (None) when the rows are the first ones in order."""
    if preview is None:
        return None
    numbers = preview.row_numbers
    return {
        "columns": preview.columns,
        "rows": [[_cell(v) for v in row] for row in preview.rows],
        "row_numbers": None if numbers == list(range(len(numbers))) else numbers,
        "marked": [i for i, differs in enumerate(preview.differs) if differs],
        "total_rows": preview.total_rows,
        "differing_rows": preview.differing_rows,
    }


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _cell_key(value: Any) -> str:
    """A cell as the comparison would see it, roughly: numbers by value, NULL as NULL.

    Example:
        >>> _cell_key(6646), _cell_key(6646.0), _cell_key("6646.00"), _cell_key(None)
        ('6646', '6646', '6646', 'NULL')
    """
    if value is None or value == "NaN":
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float):
        return format(float(value), ".9g")
    text = str(value)
    return format(float(text), ".9g") if _PLAIN_NUMBER.match(text) else text


def aligned_rows(expected: Preview | None, actual: Preview | None) -> list[list[int | None]]:
    """Pairs of row indexes (into each preview's rows; None for a gap) to show side by side:
    matching rows of both sides on one line (an agent row matches an expected row when it holds
    its values, extra columns allowed), then the rows that differ, marked by the page.

    Example:
        >>> from sqlbench.records.run import Preview
        >>> e = Preview(columns=["a"], types=["int64"], rows=[[1], [2], [3]],
        ...             row_numbers=[0, 1, 2], differs=[False, False, True], total_rows=3)
        >>> a = Preview(columns=["x", "y"], types=["int64", "string"],
        ...             rows=[[2, "b"], [9, "z"], [1, "a"]], row_numbers=[0, 1, 2],
        ...             differs=[False, True, False], total_rows=3)
        >>> aligned_rows(e, a)
        [[0, 2], [1, 0], [2, 1]]
    """
    left = expected.rows if expected else []
    right = actual.rows if actual else []
    left_differs = expected.differs if expected else []
    right_differs = actual.differs if actual else []
    right_keys = [tuple(sorted(_cell_key(v) for v in row)) for row in right]
    exact: dict[tuple[str, ...], list[int]] = {}
    for j, key in enumerate(right_keys):
        if not right_differs[j]:
            exact.setdefault(key, []).append(j)
    used: set[int] = set()
    pairs: list[list[int | None]] = []
    left_open: list[int] = []
    unpaired: list[tuple[int, tuple[str, ...]]] = []
    for i, row in enumerate(left):
        if left_differs[i]:
            left_open.append(i)
            continue
        key = tuple(sorted(_cell_key(v) for v in row))
        same = exact.get(key)
        if same:
            partner = same.pop(0)
            used.add(partner)
            pairs.append([i, partner])
        else:
            unpaired.append((i, key))
    # Rows the agent returned with extra columns: the expected values must all be among them.
    right_bags = (
        {
            j: Counter(right_keys[j])
            for j in range(len(right))
            if not right_differs[j] and j not in used
        }
        if unpaired
        else {}
    )
    for i, key in unpaired:
        bag = Counter(key)
        found = next(
            (j for j, other in right_bags.items() if j not in used and not bag - other), None
        )
        if found is None:
            left_open.append(i)
        else:
            used.add(found)
            pairs.append([i, found])
    pairs.sort(key=lambda pair: pair[0] if pair[0] is not None else -1)
    left_open.sort()
    right_open = [j for j in range(len(right)) if j not in used]
    for k in range(max(len(left_open), len(right_open))):
        pairs.append(
            [
                left_open[k] if k < len(left_open) else None,
                right_open[k] if k < len(right_open) else None,
            ]
        )
    return pairs


def _compare(diff: RunDiff, base: RunResult, changed: Sequence[AnswerChange]) -> dict[str, Any]:
    def names(kind: ChangeKind) -> list[str]:
        return [c.full_name for c in diff.of_kind(kind)]

    return {
        "base": {
            "name": base.info.name,
            "source": base.info.source_label,
            "agent": base.info.agent_name,
            "accuracy": base.accuracy.label(),
        },
        "counting": counting_text(diff),
        "by_person": [c.full_name for c in diff.changes if c.by_person],
        "base_accuracy": f"{diff.base_accuracy.value:.0%}",
        "head_accuracy": f"{diff.head_accuracy.value:.0%}",
        "reliability": reliability_text(diff),
        "difference": f"{diff.difference:+.0%}" if diff.difference is not None else "n/a",
        "p_value": format_p(diff.test.p_value) if diff.test.p_value is not None else "n/a",
        "conclusion": diff.conclusion.value,
        "paired": diff.paired,
        "regressions": names(ChangeKind.REGRESSION),
        "fixes": names(ChangeKind.FIX),
        "changed": names(ChangeKind.CHANGED),
        "flaky": names(ChangeKind.FLAKY),
        "added": names(ChangeKind.ADDED),
        "removed": names(ChangeKind.REMOVED),
        "answer_changes": [
            {
                "id": a.full_name,
                "summary": a.summary(),
                "base": _preview(a.base),
                "head": _preview(a.head),
            }
            for a in changed
        ],
    }


def trend_series(history: Sequence[RunSummary], run: RunResult) -> list[dict[str, Any]]:
    """Accuracy over time of the stored runs (the project's store), one series per branch and
    agent, oldest first; shard runs and runs with nothing graded are left out."""
    series: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for summary in sorted(history, key=lambda s: s.info.created_at):
        info = summary.info
        value = summary.accuracy.value
        if value is None or info.shard is not None:
            continue
        series.setdefault((info.branch, info.agent_name), []).append(
            {
                "name": info.name,
                "at": info.created_at.isoformat(),
                "accuracy": value,
                "current": info.id == run.info.id,
            }
        )
    return [
        {"branch": branch, "agent": agent, "points": points}
        for (branch, agent), points in sorted(series.items())
    ]
