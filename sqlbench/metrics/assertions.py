"""Assertions over the answer record (Salesforce Agentforce semantics; docs/agent-behaviour.md).

The answer record is what the agent gave plus what sqlbench measured::

    {"sql", "answer", "error", "latency_ms", "usage": {"input_tokens", "output_tokens"},
     "input_tokens", "output_tokens",
     "tool_calls": [{"name", "arguments", "output", "error", "started_ms", "duration_ms"}]}

``actual`` is a JSONPath into it (jsonpath-ng's extended syntax, filters included:
``$.tool_calls[?(@.name=='run_sql')].arguments.sql``). String operators (``equals``,
``contains``, ``startswith``, ``endswith``) are case-sensitive and read numbers as their JSON
text; numeric operators (``equals``, ``greater_than``, ``greater_than_or_equal``,
``less_than``, ``less_than_or_equal``) need a number (or text that is one).

Rules: a path that matches nothing fails the assertion ("matched nothing"); a path that
matches several values passes only when every value passes (one failing value is enough to
fail, and the reason names it), so a filter can never pass on its luckiest match.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from sqlbench.project.files import Assertion
from sqlbench.runs.records import AssertionResult, TrialResult

_SHOWN = 80
"""Characters of an actual value quoted in a reason."""


def answer_record(trial: TrialResult) -> dict[str, Any]:
    """The JSON document assertions read (module docstring), from a stored result."""
    usage = None
    if trial.input_tokens is not None or trial.output_tokens is not None:
        usage = {"input_tokens": trial.input_tokens, "output_tokens": trial.output_tokens}
    return {
        "sql": trial.agent_sql,
        "answer": trial.answer,
        "error": trial.agent_error,
        "latency_ms": trial.latency_ms,
        "usage": usage,
        "input_tokens": trial.input_tokens,
        "output_tokens": trial.output_tokens,
        "tool_calls": [call.model_dump(mode="json") for call in trial.tool_calls],
    }


def check_assertions(
    assertions: Sequence[Assertion], record: dict[str, Any]
) -> list[AssertionResult]:
    """Each assertion checked against ``record`` (see the module docstring for the rules).

    Example:
        >>> rule = Assertion(label="fast", actual="$.latency_ms", operator="less_than",
        ...                  expected=1000, type="numeric")
        >>> [r.passed for r in check_assertions([rule], {"latency_ms": 1500.0})]
        [False]
    """
    return [_check(assertion, record) for assertion in assertions]


def _check(assertion: Assertion, record: dict[str, Any]) -> AssertionResult:
    # Imported here: a question without assertions never parses a JSONPath.
    from jsonpath_ng.ext.parser import parse as parse_jsonpath

    values = [match.value for match in parse_jsonpath(assertion.actual).find(record)]
    if not values:
        return AssertionResult(
            label=assertion.label,
            passed=False,
            actual=None,
            reason=f"{assertion.actual} matched nothing",
        )
    actual: Any = values[0] if len(values) == 1 else values
    for value in values:
        problem = _problem(assertion, value)
        if problem is not None:
            which = f" (one of {len(values)} values)" if len(values) > 1 else ""
            return AssertionResult(
                label=assertion.label, passed=False, actual=actual, reason=problem + which
            )
    return AssertionResult(label=assertion.label, passed=True, actual=actual)


def _problem(assertion: Assertion, value: Any) -> str | None:
    """Why ``value`` fails ``assertion``; None when it passes."""
    expected = assertion.expected
    shown = _shown(value)
    if assertion.type == "numeric":
        number = _number(value)
        if number is None:
            return f"{shown} is not a number"
        assert isinstance(expected, int | float)
        ok = {
            "equals": number == expected,
            "greater_than": number > expected,
            "greater_than_or_equal": number >= expected,
            "less_than": number < expected,
            "less_than_or_equal": number <= expected,
        }[assertion.operator]
        words = assertion.operator.replace("_", " ")
        return None if ok else f"{shown} is not {words} {expected:g}"
    if value is None:
        return "the value is null"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    assert isinstance(expected, str)
    ok = {
        "equals": text == expected,
        "contains": expected in text,
        "startswith": text.startswith(expected),
        "endswith": text.endswith(expected),
    }[assertion.operator]
    words = {"equals": "equal", "contains": "contain", "startswith": "start with"}.get(
        assertion.operator, "end with"
    )
    return None if ok else f"{shown} does not {words} {expected!r}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    quoted = repr(text) if isinstance(value, str) else text
    return quoted if len(quoted) <= _SHOWN else quoted[: _SHOWN - 1] + "…"
