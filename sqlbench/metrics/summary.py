"""A run's metrics summarised: each metric's mean and its high / medium / low breakdown
(high >= 80%, medium >= 30%, as Snowflake shows them)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlbench.metrics.names import BUILT_IN
from sqlbench.records.run import TrialResult

HIGH = 0.8
MEDIUM = 0.3


def band(score: float) -> str:
    """``high`` (>= 0.8), ``medium`` (>= 0.3) or ``low``.

    Example:
        >>> band(0.8), band(0.3), band(0.29)
        ('high', 'medium', 'low')
    """
    if score >= HIGH:
        return "high"
    if score >= MEDIUM:
        return "medium"
    return "low"


@dataclass(frozen=True)
class MetricSummary:
    """One metric over a run's answers."""

    name: str
    mean: float | None
    """Mean score over the answers that have one; None when none has."""
    scored: int
    """Answers with a score."""
    high: int
    medium: int
    low: int
    errors: int
    """Answers where the metric could not be computed (``error`` set)."""
    first_error: str | None = None


def summarize_metrics(trials: Iterable[TrialResult]) -> list[MetricSummary]:
    """One summary per metric present in any trial; built-in names first, then custom ones
    in name order."""
    scores: dict[str, list[float]] = {}
    errors: dict[str, list[str]] = {}
    for trial in trials:
        # A conversation's metrics are its turns' (docs/conversations.md): each turn counts.
        found = (
            [turn.metrics for turn in trial.turns] if trial.turns is not None else [trial.metrics]
        )
        for name, result in (item for metrics in found for item in metrics.items()):
            scores.setdefault(name, [])
            errors.setdefault(name, [])
            if result.score is not None:
                scores[name].append(result.score)
            elif result.error is not None:
                errors[name].append(result.error)
    order = [n for n in BUILT_IN if n in scores] + sorted(n for n in scores if n not in BUILT_IN)
    summaries = []
    for name in order:
        values = scores[name]
        bands = [band(value) for value in values]
        summaries.append(
            MetricSummary(
                name=name,
                mean=sum(values) / len(values) if values else None,
                scored=len(values),
                high=bands.count("high"),
                medium=bands.count("medium"),
                low=bands.count("low"),
                errors=len(errors[name]),
                first_error=errors[name][0] if errors[name] else None,
            )
        )
    return summaries


def assertion_counts(trials: Iterable[TrialResult]) -> tuple[int, int]:
    """(passed, total) assertions over the trials."""
    passed = total = 0
    for trial in trials:
        checked = (
            [a for turn in trial.turns for a in turn.assertions]
            if trial.turns is not None
            else trial.assertions
        )
        total += len(checked)
        passed += sum(1 for result in checked if result.passed)
    return passed, total
