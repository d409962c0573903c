"""``with_metrics``: what it adds to a graded answer, and the copy it skips when there is
nothing to add."""

from __future__ import annotations

from typing import Any

import pytest

from sqlbench.metrics.assertions import answer_record, check_assertions
from sqlbench.metrics.compute import _failed_reason, deterministic_metrics, with_metrics
from sqlbench.project.files import Assertion, Question
from sqlbench.records.run import AssertionResult, ToolCallRecord, TrialResult
from sqlbench.verdicts import Verdict


def _before(question: Question, trial: TrialResult) -> TrialResult:
    """``with_metrics`` as it was before it returned ``trial`` when nothing changes."""
    if trial.verdict in (Verdict.ERROR, Verdict.SKIPPED):
        return trial
    metrics = dict(trial.metrics)
    metrics.update(deterministic_metrics(question, trial))
    assertions = check_assertions(question.assertions, answer_record(trial))
    verdict, reason = trial.verdict, trial.reason
    failed = [result for result in assertions if not result.passed]
    if failed:
        verdict, reason = Verdict.FAIL, _failed_reason(trial, failed)
    return trial.model_copy(
        update={"metrics": metrics, "assertions": assertions, "verdict": verdict, "reason": reason}
    )


_FAST = Assertion(
    label="fast", actual="$.latency_ms", operator="less_than", expected=100, type="numeric"
)
_QUESTIONS: dict[str, dict[str, Any]] = {
    "plain": {},
    "tools": {"expected_tools": [{"tool_name": "search"}]},
    "assertion": {"assertions": [_FAST.model_dump()]},
}
_TRIALS: dict[str, dict[str, Any]] = {
    "plain": {},
    "tool calls": {"tool_calls": [ToolCallRecord(name="search", error="boom")]},
    "assertions kept": {"assertions": [AssertionResult(label="old", passed=True)]},
    "slow": {"latency_ms": 250.0},
}


@pytest.mark.parametrize("verdict", list(Verdict))
@pytest.mark.parametrize("trial_kind", list(_TRIALS))
@pytest.mark.parametrize("question_kind", list(_QUESTIONS))
def test_with_metrics_gives_what_the_copy_gave(
    verdict: Verdict, trial_kind: str, question_kind: str
) -> None:
    question = Question(name="q", question="?", sql="SELECT 1", **_QUESTIONS[question_kind])
    trial = TrialResult(
        space="auto", name="q", verdict=verdict, reason="why", **_TRIALS[trial_kind]
    )
    now, before = with_metrics(question, trial), _before(question, trial)
    assert now == before
    assert now.model_dump_json() == before.model_dump_json()


def test_an_answer_with_nothing_to_measure_is_returned_as_it_is() -> None:
    """No tools, no expected tools or trajectory, no assertions (a public benchmark's answers):
    no copy of the record (8 us an answer)."""
    question = Question(name="q", question="?", sql="SELECT 1")
    trial = TrialResult(space="auto", name="q", verdict=Verdict.PASS, reason="ok")
    assert with_metrics(question, trial) is trial
