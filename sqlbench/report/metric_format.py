"""Wording of agent-behaviour metrics shared by the run renderers (text, Markdown, JSON, JUnit)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from sqlbench import text
from sqlbench.metrics.summary import MetricSummary, assertion_counts, summarize_metrics
from sqlbench.runs.records import MetricResult, TrialResult


def percent(value: float | None) -> str:
    """``83%``, or ``n/a``.

    Example:
        >>> percent(0.8333), percent(None)
        ('83%', 'n/a')
    """
    return "n/a" if value is None else text.percent(value)


def summary_line(summary: MetricSummary) -> str:
    """``tool_selection_accuracy: mean 83% · high 4 · medium 1 · low 0 (5 answers)``.

    Example:
        >>> summary_line(MetricSummary("tool_call_success", 1.0, 2, 2, 0, 0, 0))
        'tool_call_success: mean 100% · high 2 · medium 0 · low 0 (2 answers)'
    """
    if summary.scored == 0:
        line = f"{summary.name}: not computed"
    else:
        line = (
            f"{summary.name}: mean {percent(summary.mean)} · high {summary.high} · medium "
            f"{summary.medium} · low {summary.low} ({summary.scored} answer"
            f"{'' if summary.scored == 1 else 's'})"
        )
    if summary.errors:
        line += f"; {summary.errors} not scored: {summary.first_error}"
    return line


def metric_lines(trials: Iterable[TrialResult]) -> list[str]:
    """The run summary's metric lines: one per metric, then the assertions' tally."""
    listed = list(trials)
    lines = [summary_line(summary) for summary in summarize_metrics(listed)]
    passed, total = assertion_counts(listed)
    if total:
        lines.append(f"assertions: {passed}/{total} passed")
    return lines


def metric_json(result: MetricResult) -> dict[str, Any]:
    """``{score, <detail...>, band?, explanation?, judge_model?, ...}`` (docs/commands.md)."""
    data: dict[str, Any] = {"score": result.score}
    data.update(result.detail)
    for key in ("error", "band", "explanation", "judge_model", "prompt_hash", "judge_tokens"):
        value = getattr(result, key)
        if value is not None:
            data[key] = value
    return data


def metric_detail(name: str, result: MetricResult) -> list[str]:
    """Lines for ``show``: the score, then what it was computed from."""
    score = "n/a" if result.score is None else f"{result.score:.2f}"
    head = f"{name}: {score}" + (f" ({result.band})" if result.band else "")
    if result.error:
        head += f" — {result.error}"
    lines = [head]
    detail = result.detail
    if "matched" in detail and "missing" in detail:
        lines.append(
            f"  matched {_names(detail['matched'])} · missing {_names(detail['missing'])} · "
            f"unexpected {_names(detail.get('unexpected', []))}"
        )
    if "precision" in detail:
        verdict = "passed" if detail.get("passed") else "failed"
        lines.append(
            f"  {detail.get('match')} match {verdict} · precision {detail['precision']:.2f} · "
            f"recall {detail['recall']:.2f} · F1 {detail['f1']:.2f}"
        )
        expected = [_step(step) for step in detail.get("expected", [])]
        actual = [str(step) for step in detail.get("actual", [])]
        width = max([len("expected"), *(len(step) for step in expected)])
        lines.append(f"  {'expected'.ljust(width)}  actual")
        for index in range(max(len(expected), len(actual))):
            left = expected[index] if index < len(expected) else ""
            right = actual[index] if index < len(actual) else ""
            # Only an exact match pairs steps by position; elsewhere a mark would mislead.
            mark = " "
            if detail.get("match") == "exact" and left.split("(")[0] != right:
                mark = "≠"
            lines.append(f"  {left.ljust(width)} {mark} {right}")
    if detail.get("failed"):
        lines += [f"  failed call: {text}" for text in detail["failed"]]
    if result.explanation:
        lines.append(f"  judge ({result.judge_model}): {result.explanation}")
    for key, value in detail.items():
        if key.startswith("pairs"):
            lines.append(f"  {key}: {json.dumps(value, ensure_ascii=False, default=str)}")
    return lines


def _names(names: Any) -> str:
    return ", ".join(str(name) for name in names) if names else "–"


def _step(step: Any) -> str:
    if isinstance(step, dict):
        arguments = json.dumps(step.get("arguments"), ensure_ascii=False, default=str)
        return f"{step.get('name')}({arguments})"
    return str(step)
