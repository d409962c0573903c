"""A run's accuracy, one class for every command (``run``, ``show``, ``runs``, ``compare``,
``check``, ``merge``), and its one human-readable form.

Accuracy counts every verdict except ``skipped``. Each question has a pass rate (passing
trials / trials; 0 or 1 with one trial); the accuracy is the mean of those rates, so with one
trial per question it is ``passed / total``. ``label()`` never rounds a miss up to 100%
(``99.5% (199/200)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from sqlbench.records.rates import Interval, bootstrap_mean_interval, wilson_interval
from sqlbench.text import percent


class IntervalMethod(StrEnum):
    """How an accuracy's 95% interval was computed."""

    WILSON = "Wilson"
    """Wilson score interval of ``passed / total`` (one trial per question)."""
    BOOTSTRAP = "bootstrap over questions"
    """Percentile bootstrap of the mean pass rate, resampling questions (``--repeat``)."""


class Accuracy(BaseModel):
    """A run's accuracy: ``NN% (passed/total)``, with a 95% interval where one was asked for."""

    model_config = ConfigDict(frozen=True)

    passed: int
    """Passing trials (passing questions, with one trial each)."""
    total: int
    """Trials counted (skipped excluded)."""
    questions: int | None = None
    """Questions counted (skipped excluded); None where only trial counts are known (the run
    list of a run still in progress)."""
    value: float | None
    """Mean of per-question pass rates (= passed/total with one trial each); None if empty."""
    interval: Interval | None = None
    """95% interval of ``value``; None when not computed (a single run's own report)."""
    method: IntervalMethod | None = None
    """How ``interval`` was computed."""
    human: int = 0
    """Questions a person decided (``sqlbench review``); ``passed`` counts their decisions."""
    not_asked: int = 0
    """Answers not obtained because the agent's endpoint was unreachable (``error_kind:
    unreachable``): outside ``total``, counted apart."""
    from_certified_query: int = 0
    """Of the passes, how many reproduced the certified query that is their question's ground
    truth (``from_certified_query``)."""
    disputed: int = 0
    """Questions left out because a person disputes their ground truth (``review --dispute``)."""

    def label(self) -> str:
        """``NN% (passed/total)``, or ``n/a (0/0)`` when nothing counted, the number of
        questions a person decided following when there are any: the one way a person reads an
        accuracy.

        Example:
            >>> Accuracy(passed=2, total=3, questions=3, value=2 / 3).label()
            '67% (2/3)'
            >>> Accuracy(passed=199, total=200, questions=200, value=199 / 200).label()
            '99.5% (199/200)'
            >>> Accuracy(passed=2, total=3, questions=3, value=2 / 3, human=1).label()
            '67% (2/3, 1 decided by a person)'
            >>> Accuracy(passed=1, total=1, questions=1, value=1.0, not_asked=2).label()
            '100% (1/1, 2 not asked)'
            >>> Accuracy(passed=2, total=3, questions=3, value=2 / 3, human=1, disputed=2).label()
            '67% (2/3, 1 decided by a person, 2 disputed, not counted)'
        """
        counts = f"{self.passed}/{self.total}"
        if self.human:
            counts += f", {self.human} decided by a person"
        if self.not_asked:
            counts += f", {self.not_asked} not asked"
        if self.disputed:
            counts += f", {self.disputed} disputed, not counted"
        if self.value is None:
            return f"n/a ({counts})"
        return f"{percent(self.value)} ({counts})"

    @classmethod
    def of_trials(
        cls, passed: int, total: int, *, human: int = 0, not_asked: int = 0, disputed: int = 0
    ) -> Accuracy:
        """From trial counts alone (``passed / total``), without an interval.

        Example:
            >>> Accuracy.of_trials(0, 0).label()
            'n/a (0/0)'
        """
        value = passed / total if total else None
        return cls(
            passed=passed,
            total=total,
            value=value,
            human=human,
            not_asked=not_asked,
            disputed=disputed,
        )

    def certified_label(self) -> str | None:
        """``12 of 28 passes reproduced the certified query``; None when none did.

        Example:
            >>> Accuracy(passed=28, total=30, value=0.9, from_certified_query=12).certified_label()
            '12 of 28 passes reproduced the certified query'
        """
        if not self.from_certified_query:
            return None
        return (
            f"{self.from_certified_query} of {self.passed} pass{'' if self.passed == 1 else 'es'} "
            "reproduced the certified query"
        )


def accuracy_of(
    counts: Sequence[tuple[int, int]],
    method: IntervalMethod | None,
    *,
    human: int = 0,
    not_asked: int = 0,
    from_certified_query: int = 0,
    disputed: int = 0,
) -> Accuracy:
    """The accuracy of questions given as ``(passing trials, trials)`` pairs, skipped questions
    left out, with an interval computed by ``method`` (none when None); ``human`` questions
    were decided by a person.

    Example:
        >>> accuracy_of([(1, 1), (0, 1), (1, 1)], IntervalMethod.WILSON).label()
        '67% (2/3)'
        >>> round(accuracy_of([(2, 3), (3, 3)], None).value, 4)
        0.8333
    """
    rates = [passed / trials for passed, trials in counts if trials]
    passed = sum(p for p, trials in counts if trials)
    total = sum(trials for _, trials in counts)
    value = sum(rates) / len(rates) if rates else None
    interval: Interval | None = None
    if method is IntervalMethod.WILSON:
        interval = wilson_interval(passed, total)
    elif method is IntervalMethod.BOOTSTRAP:
        interval = bootstrap_mean_interval(rates)
    return Accuracy(
        passed=passed,
        total=total,
        questions=len(rates),
        value=value,
        interval=interval,
        method=method if interval is not None else None,
        human=human,
        not_asked=not_asked,
        from_certified_query=from_certified_query,
        disputed=disputed,
    )
