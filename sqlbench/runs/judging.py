"""``sqlbench judge RUN``: judged metrics over a stored run's traces, without asking the agent.

Each graded answer (agent errors and skipped questions excepted) is judged again with the
project's current questions (``ground_truth_output``, ``expected_tools``) and ``metrics:``;
its stored result is updated in place, its verdict untouched. Identical judge calls are
answered from the store's cache, so judging a run twice costs nothing the second time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlbench.errors import SqlbenchError
from sqlbench.metrics.judge import Judge, resolve_judge
from sqlbench.metrics.judged import with_judged_metrics
from sqlbench.project.files import CustomMetric, Project, Question
from sqlbench.records.run import TrialResult, TurnResult
from sqlbench.runs.pricing import priced, settings_model
from sqlbench.runs.scores import RunResult
from sqlbench.runs.store import RunStore


@dataclass(frozen=True)
class JudgeOutcome:
    """A judged run and what judging it took."""

    run: RunResult
    judged: int
    """Answers judged."""
    requests: int
    """Calls that reached the judge (the rest came from the cache)."""
    missing: tuple[str, ...]
    """``space/name`` of run questions the project no longer has (judged without them)."""


def judge_run(
    project: Project,
    store: RunStore,
    ref: str,
    env: Mapping[str, str] | None = None,
) -> JudgeOutcome:
    """Compute (or recompute) the judged metrics of the stored run ``ref``.

    Raises:
        SqlbenchError: No judge is configured, or the run is not found.
    """
    environ = os.environ if env is None else env
    endpoint, why = resolve_judge(project.settings.judge, environ)
    if endpoint is None:
        raise SqlbenchError(f"cannot judge: {why}")
    judge = Judge(endpoint, store, environ)
    info = store.find_run(ref)
    questions = {q.full_name: q for q in project.questions}
    custom = tuple(project.settings.metrics)
    judged = 0
    missing: list[str] = []
    model = settings_model(info.agent_settings)
    for trial in store.trials(info.id):
        question = questions.get(trial.full_name)
        if question is None and trial.full_name not in missing:
            missing.append(trial.full_name)
        if trial.turns is not None:
            updated = _judged_turns(question, trial, judge, custom)
        else:
            updated = with_judged_metrics(question, trial, judge, custom)
        if updated is not trial:
            updated = priced(updated, project.settings.pricing, model)
            store.replace_result(info.id, updated)
            judged += 1
    return JudgeOutcome(store.load_run(info.id), judged, judge.requests, tuple(missing))


def _judged_turns(
    question: Question | None,
    trial: TrialResult,
    judge: Judge,
    custom: Sequence[CustomMetric],
) -> TrialResult:
    """A conversation judged turn by turn, each turn against its own question (docs/
    conversations.md); the conversation itself carries no metrics of its own."""
    turns: list[TurnResult] = []
    for turn in trial.turns or []:
        asked = None
        if question is not None and turn.turn <= len(question.turns or []):
            asked = question.turn_question(turn.turn - 1)
        as_answer = TrialResult(
            space=trial.space,
            name=trial.name,
            trial=trial.trial,
            verdict=turn.verdict,
            reason=turn.reason,
            question=turn.question,
            truth_sql=turn.truth_sql,
            agent_sql=turn.sql,
            answer=turn.answer,
            agent_error=turn.agent_error,
            expected_preview=turn.expected_preview,
            actual_preview=turn.actual_preview,
            tool_calls=turn.tool_calls,
            latency_ms=turn.latency_ms,
            metrics=turn.metrics,
        )
        judged = with_judged_metrics(asked, as_answer, judge, custom)
        turns.append(turn.model_copy(update={"metrics": judged.metrics}))
    if turns == trial.turns:
        return trial
    return trial.model_copy(update={"turns": turns})
