"""The deterministic metrics of one graded answer, and the one way they touch its verdict.

``with_metrics`` is what the run loop applies to every graded answer: it computes what the
question asks for (tool selection accuracy for ``expected_tools``, task navigation
efficiency for ``expected_trajectory``, tool call success whenever tools were called, the
``assertions``), stores them on the result, and turns a pass (or a review, or a fail) into a
fail when an assertion fails, with the assertion's label and actual value in the reason.
Judged metrics are added separately (``sqlbench.metrics.judged``) and never change a verdict.
"""

from __future__ import annotations

from sqlbench.metrics.assertions import answer_record, check_assertions
from sqlbench.metrics.names import (
    TASK_NAVIGATION_EFFICIENCY,
    TOOL_CALL_SUCCESS,
    TOOL_SELECTION_ACCURACY,
)
from sqlbench.metrics.tools import tool_call_success, tool_selection_accuracy
from sqlbench.metrics.trajectory import task_navigation_efficiency
from sqlbench.project.files import Question
from sqlbench.records.run import AssertionResult, MetricResult, TrialResult
from sqlbench.text import one_line
from sqlbench.verdicts import MAX_REASON, Verdict

_NOT_ASKED = (Verdict.ERROR, Verdict.SKIPPED)
"""Verdicts whose answers get no metrics: the agent failed or was not asked."""


def with_metrics(question: Question, trial: TrialResult) -> TrialResult:
    """``trial`` with its deterministic metrics and assertions, the verdict adjusted.

    An agent error (or a question not asked) keeps its verdict and gets no metrics: there is
    no behaviour to measure.
    """
    if trial.verdict in _NOT_ASKED:
        return trial
    found = deterministic_metrics(question, trial)
    if not found and not question.assertions and not trial.assertions:
        # Nothing to add, check or change: the copy below would equal ``trial`` field by
        # field (a public benchmark's answers: no tools, no assertions; 8 us an answer).
        return trial
    metrics = dict(trial.metrics)
    metrics.update(found)
    assertions = check_assertions(question.assertions, answer_record(trial))
    verdict, reason = trial.verdict, trial.reason
    failed = [result for result in assertions if not result.passed]
    if failed:
        verdict, reason = Verdict.FAIL, _failed_reason(trial, failed)
    return trial.model_copy(
        update={"metrics": metrics, "assertions": assertions, "verdict": verdict, "reason": reason}
    )


def deterministic_metrics(question: Question, trial: TrialResult) -> dict[str, MetricResult]:
    """The metrics the question asks for, by name (no model needed)."""
    metrics: dict[str, MetricResult] = {}
    if question.expected_tools is not None:
        metrics[TOOL_SELECTION_ACCURACY] = tool_selection_accuracy(
            question.expected_tools, trial.tool_calls
        )
    if question.expected_trajectory is not None:
        metrics[TASK_NAVIGATION_EFFICIENCY] = task_navigation_efficiency(
            question.expected_trajectory, trial.tool_calls
        )
    success = tool_call_success(trial.tool_calls)
    if success is not None:
        metrics[TOOL_CALL_SUCCESS] = success
    return metrics


def assertion_reason(result: AssertionResult) -> str:
    """``assertion 'label' failed: <why>``."""
    return f"assertion {result.label!r} failed: {result.reason}"


def _failed_reason(trial: TrialResult, failed: list[AssertionResult]) -> str:
    first = assertion_reason(failed[0])
    more = f" (and {len(failed) - 1} more assertion(s))" if len(failed) > 1 else ""
    if trial.verdict is Verdict.PASS:
        text = f"{first}{more}; the result set matched"
    elif trial.verdict is Verdict.FAIL:
        text = f"{one_line(trial.reason, 200)}; also {first}{more}"
    else:
        text = f"{first}{more}; otherwise {trial.verdict.value}: {trial.reason}"
    return one_line(text, MAX_REASON)
