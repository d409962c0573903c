"""What a run's answers cost, how close its failures came, what its SQL read: the sums and
means of each answer's ``cost``, ``partial_credit`` and ``work`` (docs/cost.md)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from sqlbench.records.run import TrialResult
from sqlbench.verdicts import Verdict


@dataclass(frozen=True)
class RunCost:
    """The run's cost: agent and judge usage priced with ``pricing:``."""

    usd: float | None
    """The sum over answers; None when some answer's usage has no price (``unpriced``)."""
    tokens: int | None
    """Tokens over answers that reported them; None when none did."""
    answers: int
    """Answers counted (skipped questions and answers not asked aside)."""
    passed: int
    """Passing answers (a person's decisions counted), the denominator of ``per_correct``."""
    unpriced: tuple[str, ...] = ()
    """Models with usage but no price, which leave ``usd`` None."""
    judge_usd: float | None = None

    @property
    def per_correct(self) -> float | None:
        """Dollars per passing answer; None without a price or without a pass."""
        if self.usd is None or not self.passed:
            return None
        return self.usd / self.passed

    @property
    def per_answer(self) -> float | None:
        """Dollars per answer; None without a price."""
        if self.usd is None or not self.answers:
            return None
        return self.usd / self.answers


def run_cost(trials: Iterable[TrialResult], passed: int) -> RunCost | None:
    """The sums of ``trials``' costs, or None when no trial recorded one."""
    counted = [t for t in trials if t.verdict is not Verdict.SKIPPED]
    costs = [t.cost for t in counted if t.cost is not None]
    if not costs:
        return None
    unpriced = sorted({name for c in costs for name in c.unpriced})
    priced = [c.usd for c in costs if c.usd is not None]
    tokens = [c.tokens for c in costs if c.tokens is not None]
    judged = [c.judge_usd for c in costs if c.judge_usd is not None]
    usd = None if unpriced or not priced else round(sum(priced), 10)
    return RunCost(
        usd=usd,
        tokens=sum(tokens) if tokens else None,
        answers=sum(1 for t in counted if not t.not_asked),
        passed=passed,
        unpriced=tuple(unpriced),
        judge_usd=round(sum(judged), 10) if judged and usd is not None else None,
    )


@dataclass(frozen=True)
class CreditMean:
    """The mean partial credit over a run's answers that had a ground-truth result to hold."""

    precision: float
    recall: float
    f1: float
    answers: int


def credit_mean(trials: Iterable[TrialResult]) -> CreditMean | None:
    """The mean of ``trials``' partial credit (those with one), or None when none has one."""
    credits = [t.partial_credit for t in trials if t.partial_credit is not None]
    if not credits:
        return None
    return CreditMean(
        precision=statistics.fmean(c.precision for c in credits),
        recall=statistics.fmean(c.recall for c in credits),
        f1=statistics.fmean(c.f1 for c in credits),
        answers=len(credits),
    )


@dataclass(frozen=True)
class WorkSummary:
    """How the agent's SQL's work compares with the ground truth's over a run."""

    unit: str
    """What the numbers count; the commonest unit where a run's warehouses differ."""
    ratios: tuple[float, ...]
    """agent / truth per answer where both were reported, ascending."""
    not_reported: int
    """Answers with agent SQL that ran but no ratio (the engine reports nothing, or the
    ground truth read nothing)."""

    @property
    def median(self) -> float:
        """The median ratio."""
        return statistics.median(self.ratios)

    def above(self, limit: float) -> int:
        """Answers whose agent SQL did more than ``limit`` times the ground truth's work."""
        return sum(1 for r in self.ratios if r > limit)


def work_summary(trials: Iterable[TrialResult]) -> WorkSummary | None:
    """The work ratios of ``trials``, or None when no trial recorded any work."""
    works = [t.work for t in trials if t.work is not None]
    if not works:
        return None
    ratios = sorted(w.ratio for w in works if w.ratio is not None)
    units = [w.unit for w in works if w.unit is not None]
    unit = max(set(units), key=units.count) if units else "not reported"
    missing = sum(1 for w in works if w.ratio is None and w.agent is None)
    return WorkSummary(unit=unit, ratios=tuple(ratios), not_reported=missing)
