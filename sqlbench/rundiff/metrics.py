"""Agent-behaviour metrics between two runs: each metric's mean on both sides, a paired test over
the questions scored on both, and the questions whose score dropped most.

A question's score on one side is the mean over its trials that have one. The paired test is
the exact sign-flip test of ``sqlbench.rundiff.stats`` over per-question differences (head -
base), each rounded to a hundredth so the exact distribution stays small. The means shown are
each side's own (over the questions it scored); the difference tested is over shared ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from sqlbench.metrics.names import BUILT_IN
from sqlbench.rundiff.stats import PairedTest, paired_rates
from sqlbench.runs.records import TrialResult

DROPPED_SHOWN = 5
"""How many most-dropped questions a metric lists."""
_RESOLUTION = 100


def question_scores(trials: Iterable[TrialResult]) -> tuple[tuple[str, float], ...]:
    """``(metric, mean score)`` over one question's trials, for every metric with a score.

    Example:
        >>> from sqlbench.runs.records import MetricResult
        >>> from sqlbench.verdicts import Verdict
        >>> t = TrialResult(space="s", name="q", verdict=Verdict.PASS, reason="",
        ...                 metrics={"tool_call_success": MetricResult(score=0.5)})
        >>> question_scores([t])
        (('tool_call_success', 0.5),)
    """
    values: dict[str, list[float]] = {}
    for trial in trials:
        for name, result in trial.metrics.items():
            if result.score is not None:
                values.setdefault(name, []).append(result.score)
    return tuple((name, sum(v) / len(v)) for name, v in sorted(values.items()))


@dataclass(frozen=True)
class Dropped:
    """One question whose metric score fell."""

    full_name: str
    base: float
    head: float


@dataclass(frozen=True)
class MetricDelta:
    """One metric compared between base and head."""

    name: str
    base_mean: float | None
    """Mean over the base questions scored; None when none was."""
    head_mean: float | None
    base_scored: int
    head_scored: int
    paired_mean_difference: float | None
    """Mean of head - base over questions scored on both sides; None when none was."""
    test: PairedTest
    dropped: tuple[Dropped, ...]
    """Up to ``DROPPED_SHOWN`` questions whose score fell, largest fall first."""


def metric_deltas(
    base: Mapping[str, Mapping[str, float]],
    head: Mapping[str, Mapping[str, float]],
    alpha: float,
) -> tuple[MetricDelta, ...]:
    """One delta per metric present on either side (built-in names first).

    Args:
        base: ``space/name`` -> metric -> score, for the base run's questions.
        head: The same for the head run.
        alpha: Significance level of the paired tests.
    """
    names = {m for scores in (*base.values(), *head.values()) for m in scores}
    ordered = [n for n in BUILT_IN if n in names] + sorted(n for n in names if n not in BUILT_IN)
    deltas = []
    for name in ordered:
        base_values = {q: s[name] for q, s in base.items() if name in s}
        head_values = {q: s[name] for q, s in head.items() if name in s}
        shared = sorted(base_values.keys() & head_values.keys())
        differences = [head_values[q] - base_values[q] for q in shared]
        test = paired_rates(
            [Fraction(round(d * _RESOLUTION), _RESOLUTION) for d in differences], alpha
        )
        fallen = sorted(
            (Dropped(q, base_values[q], head_values[q]) for q in shared),
            key=lambda d: (d.head - d.base, d.full_name),
        )
        deltas.append(
            MetricDelta(
                name=name,
                base_mean=_mean(base_values.values()),
                head_mean=_mean(head_values.values()),
                base_scored=len(base_values),
                head_scored=len(head_values),
                paired_mean_difference=_mean(differences),
                test=test,
                dropped=tuple(d for d in fallen if d.head < d.base)[:DROPPED_SHOWN],
            )
        )
    return tuple(deltas)


def _mean(values: Iterable[float]) -> float | None:
    listed = list(values)
    return sum(listed) / len(listed) if listed else None
