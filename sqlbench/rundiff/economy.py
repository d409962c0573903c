"""Cost, partial credit and warehouse work across a comparison (docs/cost.md): each side's
cost and cost per correct answer with the delta beside the accuracy's, the partial credit of
the questions that fail on both sides (where it is the only progress signal), and the agent's
work ratio on each side, with the questions past ``compare: {max_work_ratio: N}``."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlbench.records.run import TrialResult
from sqlbench.runs.spend import RunCost, run_cost
from sqlbench.verdicts import Verdict, across_trials


@dataclass(frozen=True)
class QuestionEconomy:
    """One question's cost, partial credit and work ratio in one run (means over trials)."""

    usd: float | None = None
    f1: float | None = None
    """Mean partial-credit F1 over trials that have one."""
    work_ratio: float | None = None
    """The largest agent/truth work ratio over trials that have one."""
    work_unit: str | None = None


def question_economy(trials: Sequence[TrialResult]) -> QuestionEconomy:
    """What ``trials`` (one question's) cost, earned and read."""
    credits = [t.partial_credit.f1 for t in trials if t.partial_credit is not None]
    costs = [t.cost.usd for t in trials if t.cost is not None]
    works = [t.work for t in trials if t.work is not None and t.work.ratio is not None]
    return QuestionEconomy(
        usd=sum(c for c in costs if c is not None) if costs and None not in costs else None,
        f1=statistics.fmean(credits) if credits else None,
        work_ratio=max(w.ratio for w in works if w.ratio is not None) if works else None,
        work_unit=works[0].unit if works else None,
    )


@dataclass(frozen=True)
class CreditPair:
    """A question failing on both sides, with its partial-credit F1 on each."""

    full_name: str
    base: float
    head: float


@dataclass(frozen=True)
class WorkOver:
    """A head question whose agent SQL did more than ``max_work_ratio`` times the work."""

    full_name: str
    ratio: float
    unit: str


@dataclass(frozen=True)
class EconomyDiff:
    """Both sides' cost, the partial credit of questions failing on both, the work ratios."""

    base_cost: RunCost | None
    head_cost: RunCost | None
    both_failing: tuple[CreditPair, ...]
    """Questions that do not pass on either side and have partial credit on both."""
    base_work_median: float | None
    head_work_median: float | None
    work_unit: str | None
    max_work_ratio: float | None
    """The limit from ``compare: {max_work_ratio: N}``; None when unset."""
    over_work_ratio: tuple[WorkOver, ...] = ()
    """Head questions past ``max_work_ratio``."""

    @property
    def usd_delta(self) -> float | None:
        """head - base dollars; None unless both sides are priced."""
        if self.base_cost is None or self.head_cost is None:
            return None
        if self.base_cost.usd is None or self.head_cost.usd is None:
            return None
        return self.head_cost.usd - self.base_cost.usd

    @property
    def per_correct_delta(self) -> float | None:
        """head - base dollars per correct answer; None unless both are known."""
        if self.base_cost is None or self.head_cost is None:
            return None
        base, head = self.base_cost.per_correct, self.head_cost.per_correct
        return None if base is None or head is None else head - base

    @property
    def credit_means(self) -> tuple[float, float] | None:
        """Mean F1 over ``both_failing`` on each side; None when there is none."""
        if not self.both_failing:
            return None
        return (
            statistics.fmean(p.base for p in self.both_failing),
            statistics.fmean(p.head for p in self.both_failing),
        )

    @property
    def empty(self) -> bool:
        """Nothing to say: no cost, no credit on shared failures, no work on either side."""
        return (
            self.base_cost is None
            and self.head_cost is None
            and not self.both_failing
            and self.base_work_median is None
            and self.head_work_median is None
        )


@dataclass(frozen=True)
class SideEconomy:
    """What one side of a comparison contributes: its cost and each question's economy."""

    cost: RunCost | None
    questions: dict[str, tuple[Verdict, QuestionEconomy]]
    """By ``space/name``: the question's verdict and economy."""
    max_work_ratio: float | None = None
    """The run's ``compare: {max_work_ratio: N}``, if set."""


def side_economy(
    results: Iterable[TrialResult], passed: int, max_work_ratio: float | None = None
) -> SideEconomy:
    """One side's cost and per-question economy from its trials."""
    trials = list(results)
    grouped: dict[str, list[TrialResult]] = {}
    for trial in trials:
        grouped.setdefault(trial.full_name, []).append(trial)
    questions: dict[str, tuple[Verdict, QuestionEconomy]] = {}
    for name, group in grouped.items():
        verdict = across_trials(t.verdict for t in group)
        if verdict is Verdict.SKIPPED:
            continue
        questions[name] = (verdict, question_economy(group))
    return SideEconomy(run_cost(trials, passed), questions, max_work_ratio)


def economy_diff(
    base: SideEconomy | None, head: SideEconomy | None, max_work_ratio: float | None = None
) -> EconomyDiff | None:
    """The economy of a comparison; None when neither side carries one (a side with no run)."""
    if base is None and head is None:
        return None
    if max_work_ratio is None and head is not None:
        max_work_ratio = head.max_work_ratio  # the head run's own compare: settings
    base_q = base.questions if base is not None else {}
    head_q = head.questions if head is not None else {}
    both = []
    for name in sorted(base_q.keys() & head_q.keys()):
        (v_b, e_b), (v_h, e_h) = base_q[name], head_q[name]
        failing = v_b is not Verdict.PASS and v_h is not Verdict.PASS
        if failing and e_b.f1 is not None and e_h.f1 is not None:
            both.append(CreditPair(name, e_b.f1, e_h.f1))
    over = []
    if max_work_ratio is not None:
        for name, (_, economy) in sorted(head_q.items()):
            if economy.work_ratio is not None and economy.work_ratio > max_work_ratio:
                over.append(WorkOver(name, economy.work_ratio, economy.work_unit or ""))
    units = [e.work_unit for _, e in [*base_q.values(), *head_q.values()] if e.work_unit]
    return EconomyDiff(
        base_cost=base.cost if base is not None else None,
        head_cost=head.cost if head is not None else None,
        both_failing=tuple(both),
        base_work_median=_median_ratio(base_q),
        head_work_median=_median_ratio(head_q),
        work_unit=max(set(units), key=units.count) if units else None,
        max_work_ratio=max_work_ratio,
        over_work_ratio=tuple(over),
    )


def _median_ratio(questions: dict[str, tuple[Verdict, QuestionEconomy]]) -> float | None:
    ratios = [e.work_ratio for _, e in questions.values() if e.work_ratio is not None]
    return statistics.median(ratios) if ratios else None
