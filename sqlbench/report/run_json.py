"""A run as JSON for machines (docs/commands.md): ``schema_version``, the run's metadata,
``accuracy: {passed, total, human}`` (``passed`` counts human decisions, ``human`` is how many
questions a person decided) and ``results: [{space, name, verdict, reason, ...}]``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlbench.metrics.summary import summarize_metrics
from sqlbench.records.accuracy import Accuracy
from sqlbench.records.run import RunInfo, TrialResult
from sqlbench.report.metric_format import metric_json
from sqlbench.report.run_format import abstention_json
from sqlbench.runs.scores import QuestionResult, RunResult

SCHEMA_VERSION = 1
"""Version of this JSON shape; bumped when a field changes meaning or goes away."""


def run_to_json(
    run: RunResult, questions: Sequence[QuestionResult] | None = None
) -> dict[str, Any]:
    """The run as a JSON-able dict (verdicts in lower case, timestamps ISO 8601 UTC);
    ``results`` lists ``questions`` (the ones a filter kept) or every question."""
    accuracy = run.accuracy
    latency = run.latency_percentiles()
    tokens = run.tokens()
    return {
        "schema_version": SCHEMA_VERSION,
        "run": _metadata(run.info, run),
        "accuracy": {
            "passed": accuracy.passed,
            "total": accuracy.total,
            "human": accuracy.human,
            "not_asked": accuracy.not_asked,
            "from_certified_query": accuracy.from_certified_query,
            "disputed": accuracy.disputed,
            "value": accuracy.value,
            "questions": accuracy.questions,
            "interval": list(accuracy.interval) if accuracy.interval is not None else None,
        },
        "counts": {verdict.value: n for verdict, n in run.counts().items()},
        "abstention": abstention_json(run.abstention()),
        "turn_accuracy": _turn_accuracy(run),
        "metrics": _metrics_summary(run),
        "warehouses": {
            name: {"passed": acc.passed, "total": acc.total, "value": acc.value}
            for name, acc in run.by_warehouse().items()
        },
        "by_space": {name: _acc(acc) for name, acc in run.by_space().items()},
        "by_tag": {name: _acc(acc) for name, acc in run.by_tag().items()},
        "latency_ms": None if latency is None else {"p50": latency[0], "p95": latency[1]},
        "tokens": None if tokens is None else {"input": tokens[0], "output": tokens[1]},
        **economy_json(run),
        "results": [
            _question(q, run.info.repeat)
            for q in (run.questions if questions is None else questions)
        ],
    }


def economy_json(run: RunResult) -> dict[str, Any]:
    """The run's ``cost`` (sums, per answer, per correct answer), mean ``partial_credit`` and
    ``work`` ratios (docs/cost.md); each None when no answer recorded it."""
    cost, credit, work = run.cost(), run.partial_credit(), run.work()
    return {
        "cost": None
        if cost is None
        else {
            "usd": cost.usd,
            "tokens": cost.tokens,
            "per_answer_usd": cost.per_answer,
            "per_correct_usd": cost.per_correct,
            "judge_usd": cost.judge_usd,
            "unpriced": list(cost.unpriced),
        },
        "partial_credit": None
        if credit is None
        else {
            "precision": credit.precision,
            "recall": credit.recall,
            "f1": credit.f1,
            "answers": credit.answers,
        },
        "work": None
        if work is None
        else {
            "unit": work.unit,
            "answers": len(work.ratios),
            "median_ratio": work.median if work.ratios else None,
            "max_ratio": work.ratios[-1] if work.ratios else None,
            "not_reported": work.not_reported,
        },
    }


def _turn_accuracy(run: RunResult) -> dict[str, Any]:
    """Every conversation turn and single question counted on its own (docs/conversations.md)."""
    abstention = run.abstention()
    return _acc(Accuracy.of_trials(abstention.correct, abstention.total))


def _acc(accuracy: Accuracy) -> dict[str, Any]:
    return {"passed": accuracy.passed, "total": accuracy.total, "value": accuracy.value}


def render(run: RunResult, questions: Sequence[QuestionResult] | None = None) -> str:
    """``run_to_json`` as indented JSON text, one result per line."""
    return dumps_run(run_to_json(run, questions)) + "\n"


def dumps_run(data: dict[str, Any]) -> str:
    """A ``run_to_json`` dict as JSON text: indented by 2, each of its ``results`` on one line
    (Python's indenting encoder is pure Python and takes seconds for a few thousand results;
    the compact one is C).

    Example:
        >>> print(dumps_run({"run": {"name": "r"}, "results": [{"name": "q1"}, {"name": "q2"}]}))
        {
          "run": {
            "name": "r"
          },
          "results": [
            {"name": "q1"},
            {"name": "q2"}
          ]
        }
    """
    results = data.get("results")
    if not results:
        return json.dumps(data, indent=2, ensure_ascii=False)
    head = json.dumps({**data, "results": []}, indent=2, ensure_ascii=False)
    before, found, after = head.rpartition('"results": []')
    assert found, "results is a key of the run's JSON"
    lines = ",\n    ".join(
        json.dumps(item, ensure_ascii=False, separators=(", ", ": ")) for item in results
    )
    return f'{before}"results": [\n    {lines}\n  ]{after}'


def _metadata(info: RunInfo, run: RunResult) -> dict[str, Any]:
    return {
        "id": info.id,
        "name": info.name,
        "status": run.status.value,
        "environment": info.environment,
        "branch": info.branch,
        "commit": info.commit,
        "dirty": info.dirty,
        "working_tree_hash": info.working_tree_hash,
        "question_set_hash": info.question_set_hash,
        "question_count": info.question_count,
        "agent": {
            "name": info.agent_name,
            "kind": info.agent_kind,
            "settings": info.agent_settings,
            "settings_hash": info.agent_settings_hash,
        },
        "compare": info.compare,
        "repeat": info.repeat,
        "shard": info.shard,
        "select": info.select,
        "spaces": info.spaces,
        "sqlbench_version": info.sqlbench_version,
        "created_by": info.created_by,
        "created_at": info.created_at.isoformat(),
        "updated_at": info.updated_at.isoformat(),
        "finished_at": info.finished_at.isoformat() if info.finished_at else None,
        "error": info.error,
    }


def trial_to_json(trial: TrialResult) -> dict[str, Any]:
    """One trial as JSON, every stored field, metrics as ``{name: {score, ...detail}}``."""
    data = trial.model_dump(mode="json")
    data["metrics"] = {name: metric_json(result) for name, result in trial.metrics.items()}
    return data


def _trial(trial: TrialResult) -> dict[str, Any]:
    data = trial.model_dump(
        mode="json",
        exclude={"space", "name", "question", "tags", "truth_sql", "also_accept", "position"},
    )
    data["metrics"] = {name: metric_json(result) for name, result in trial.metrics.items()}
    return data


def _metrics_summary(run: RunResult) -> dict[str, Any]:
    trials = [t for q in run.questions for t in q.trials]
    return {
        s.name: {
            "mean": s.mean,
            "scored": s.scored,
            "high": s.high,
            "medium": s.medium,
            "low": s.low,
            "errors": s.errors,
        }
        for s in summarize_metrics(trials)
    }


def _question(question: QuestionResult, repeat: int) -> dict[str, Any]:
    first = question.first
    entry: dict[str, Any] = {
        "space": question.space,
        "name": question.name,
        "verdict": question.verdict.value,
        "reason": question.reason,
        "question": first.question,
        "tags": first.tags,
        "truth_sql": first.truth_sql,
        "also_accept": first.also_accept,
        "warehouse": first.warehouse,
        "human": question.human.model_dump(mode="json") if question.human else None,
        "disputed": question.disputed.model_dump(mode="json") if question.disputed else None,
    }
    if repeat > 1 or len(question.trials) > 1:
        entry.update(
            passed=question.passed,
            pass_rate=question.pass_rate,
            pass_at_k=question.pass_at_k,
            pass_hat_k=question.pass_hat_k,
            flaky=question.flaky,
            trials=[_trial(t) for t in question.trials],
        )
    else:
        entry.update(_trial(first))
    return entry


def render_question(run: RunResult, question: QuestionResult) -> str:
    """One question of a run in full (``sqlbench show RUN QUESTION --format json``)."""
    data = {
        "schema_version": SCHEMA_VERSION,
        "run": run_to_json(run)["run"],
        "result": _question_json(question),
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def _question_json(question: QuestionResult) -> dict[str, object]:
    return {
        "space": question.space,
        "name": question.name,
        "verdict": question.verdict.value,
        "reason": question.reason,
        "pass_rate": question.pass_rate,
        "flaky": question.flaky,
        "trials": [trial_to_json(t) for t in question.trials],
    }
