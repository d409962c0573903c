"""Task navigation efficiency (Azure AI evaluation semantics; docs/agent-behaviour.md).

``exact``: the agent's calls are the expected steps, in order, nothing more. ``in_order``:
every expected step appears in order, extra calls allowed. ``any_order``: every expected step
appears (as often as expected), extra calls allowed. Precision = matched steps / the agent's
calls, recall = matched steps / expected steps, matched counted as multisets; F1 their
harmonic mean. A step with ``arguments`` matches a call of that name whose arguments equal
them as values (numbers by value: ``1`` equals ``1.0``); a bare name matches any arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlbench.project.files import ExpectedTrajectory, TrajectoryStep
from sqlbench.runs.records import MetricResult, ToolCallRecord


def task_navigation_efficiency(
    expected: ExpectedTrajectory, calls: Sequence[ToolCallRecord]
) -> MetricResult:
    """Pass/fail under ``expected.match`` plus precision, recall and F1; score 1 or 0.

    Example:
        >>> calls = [ToolCallRecord(name=n) for n in ("search", "validate", "report")]
        >>> result = task_navigation_efficiency(
        ...     ExpectedTrajectory(steps=["search", "report"], match="in_order"), calls)
        >>> result.score, result.detail["precision"], result.detail["recall"]
        (1.0, 0.6666666666666666, 1.0)
    """
    steps = [TrajectoryStep(name=s) if isinstance(s, str) else s for s in expected.steps]
    matched = _multiset_matches(steps, calls)
    if expected.match == "exact":
        passed = len(steps) == len(calls) and all(
            _matches(step, call) for step, call in zip(steps, calls, strict=True)
        )
    elif expected.match == "in_order":
        passed = _in_order(steps, calls)
    else:
        passed = matched == len(steps)
    precision = matched / len(calls) if calls else (1.0 if not steps else 0.0)
    recall = matched / len(steps) if steps else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return MetricResult(
        score=1.0 if passed else 0.0,
        detail={
            "passed": passed,
            "match": expected.match,
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "expected": [_label(step) for step in steps],
            "actual": [call.name for call in calls],
        },
    )


def _label(step: TrajectoryStep) -> Any:
    return step.name if step.arguments is None else {"name": step.name, "arguments": step.arguments}


def _matches(step: TrajectoryStep, call: ToolCallRecord) -> bool:
    if step.name != call.name:
        return False
    return step.arguments is None or same_value(step.arguments, call.arguments)


def _in_order(steps: Sequence[TrajectoryStep], calls: Sequence[ToolCallRecord]) -> bool:
    position = 0
    for step in steps:
        while position < len(calls) and not _matches(step, calls[position]):
            position += 1
        if position == len(calls):
            return False
        position += 1
    return True


def _multiset_matches(steps: Sequence[TrajectoryStep], calls: Sequence[ToolCallRecord]) -> int:
    """The most expected steps that distinct calls can match. Steps with arguments go first:
    each fits one kind of call, while a bare name fits any call of that name, so this greedy
    order finds the largest matching."""
    free = list(calls)
    count = 0
    for step in sorted(steps, key=lambda s: s.arguments is None):
        for index, call in enumerate(free):
            if _matches(step, call):
                del free[index]
                count += 1
                break
    return count


def same_value(expected: Any, actual: Any) -> bool:
    """Equality as values: mappings by keys, lists in order, numbers by value (not bools).

    Example:
        >>> same_value({"limit": 10, "q": "x"}, {"q": "x", "limit": 10.0})
        True
        >>> same_value(True, 1)
        False
    """
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(expected, actual, rel_tol=0, abs_tol=0) or expected == actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            same_value(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            same_value(a, b) for a, b in zip(expected, actual, strict=True)
        )
    return bool(type(expected) is type(actual) and expected == actual)
