"""``sqlbench compare --format json``: the comparison as a versioned JSON document."""

from __future__ import annotations

import json
from typing import Any

from sqlbench.records.accuracy import Accuracy
from sqlbench.records.run import Preview
from sqlbench.report.run_format import abstention_json
from sqlbench.report.rundiff_format import conclusion_text
from sqlbench.rundiff.diff import QuestionOutcome, RunDiff, RunSide
from sqlbench.runs.spend import RunCost

SCHEMA_VERSION = 1
"""Version of this document's shape; bumped on any incompatible change."""


def to_dict(diff: RunDiff) -> dict[str, Any]:
    """The comparison as plain JSON-safe data (``schema_version`` first)."""
    test = diff.test
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "comparison",
        "base": _side(diff.base, diff.base_accuracy),
        "head": _side(diff.head, diff.head_accuracy),
        "difference": diff.difference,
        "shared_questions": diff.paired,
        "warnings": list(diff.warnings),
        "automatic_only": diff.automatic_only,
        "difference_interval": (
            list(diff.difference_interval) if diff.difference_interval is not None else None
        ),
        "paired_test": {
            "method": test.method,
            "questions": test.questions,
            "changed": test.changed,
            "p_value": test.p_value,
            "alpha": test.alpha,
        },
        "conclusion": test.conclusion.value,
        "conclusion_text": conclusion_text(diff),
        "counts": {
            "regressions": len(diff.regressions),
            "fixes": len(diff.fixes),
            "by_person": sum(1 for change in diff.changes if change.by_person),
            "flaky": len(diff.flaky),
            "answer_changes": len(diff.answer_changes),
        },
        "answer_changes": [
            {
                "space": change.space,
                "name": change.name,
                "turn": change.turn,
                "base": _truth(change.base_fingerprint, change.base, change.base_only),
                "head": _truth(change.head_fingerprint, change.head, change.head_only),
            }
            for change in diff.answer_changes
        ],
        "economy": _economy(diff),
        "metrics": {
            delta.name: {
                "base_mean": delta.base_mean,
                "head_mean": delta.head_mean,
                "base_scored": delta.base_scored,
                "head_scored": delta.head_scored,
                "paired_mean_difference": delta.paired_mean_difference,
                "paired_test": {
                    "method": delta.test.method,
                    "questions": delta.test.questions,
                    "changed": delta.test.changed,
                    "p_value": delta.test.p_value,
                    "conclusion": delta.test.conclusion.value,
                },
                "dropped": [
                    {"question": d.full_name, "base": d.base, "head": d.head} for d in delta.dropped
                ],
            }
            for delta in diff.metrics
        },
        "changes": [
            {
                "kind": change.kind.value,
                "space": change.space,
                "name": change.name,
                "by_person": change.by_person,
                "base": _outcome(change.base),
                "head": _outcome(change.head),
            }
            for change in diff.changes
        ],
    }


def render(diff: RunDiff) -> str:
    """The comparison as indented JSON text."""
    return json.dumps(to_dict(diff), indent=2, ensure_ascii=False) + "\n"


def _side(side: RunSide, accuracy: Accuracy) -> dict[str, Any]:
    return {
        "run": side.label,
        "branch": side.branch,
        "commit": side.commit,
        "dirty": side.dirty,
        "agent": side.agent,
        "reused": side.reused,
        "accuracy": {
            "value": accuracy.value,
            "passed": accuracy.passed,
            "total": accuracy.total,
            "human": accuracy.human,
            "disputed": accuracy.disputed,
            "interval": list(accuracy.interval) if accuracy.interval is not None else None,
            "method": accuracy.method,
        },
        "abstention": abstention_json(side.abstention) if side.abstention is not None else None,
    }


def _truth(
    fingerprint: str | None, preview: Preview | None, only_here: list[list[Any]]
) -> dict[str, Any]:
    return {
        "fingerprint": fingerprint,
        "preview": preview.model_dump(mode="json") if preview is not None else None,
        "rows_only_here": only_here,
    }


def _outcome(outcome: QuestionOutcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {
        "verdict": outcome.verdict.value,
        "reason": outcome.reason,
        "passes": outcome.passes,
        "trials": outcome.trials,
        "rate": float(outcome.rate),
        "flaky": outcome.flaky,
        "human": outcome.human.model_dump(mode="json")
        if outcome.decided and outcome.human
        else None,
        "automatic": [v.value for v in outcome.automatic] if outcome.automatic else None,
    }


def _economy(diff: RunDiff) -> dict[str, Any] | None:
    """Cost per side with deltas, partial credit on questions failing on both sides, work
    ratios (docs/cost.md); None when neither side has a run."""
    economy = diff.economy
    if economy is None:
        return None

    def cost(side: RunCost | None) -> dict[str, Any] | None:
        if side is None:
            return None
        return {
            "usd": side.usd,
            "tokens": side.tokens,
            "per_correct_usd": side.per_correct,
            "unpriced": list(side.unpriced),
        }

    means = economy.credit_means
    return {
        "cost": {
            "base": cost(economy.base_cost),
            "head": cost(economy.head_cost),
            "usd_delta": economy.usd_delta,
            "per_correct_usd_delta": economy.per_correct_delta,
        },
        "partial_credit_both_failing": {
            "questions": [
                {"question": p.full_name, "base_f1": p.base, "head_f1": p.head}
                for p in economy.both_failing
            ],
            "base_f1": means[0] if means else None,
            "head_f1": means[1] if means else None,
        },
        "work": {
            "unit": economy.work_unit,
            "base_median_ratio": economy.base_work_median,
            "head_median_ratio": economy.head_work_median,
            "max_work_ratio": economy.max_work_ratio,
            "over": [
                {"question": o.full_name, "ratio": o.ratio, "unit": o.unit}
                for o in economy.over_work_ratio
            ],
        },
    }
