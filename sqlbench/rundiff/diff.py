"""Pair two runs question by question: regressions, fixes, flaky, added and removed questions.

Questions are paired by ``space/name``. On paired questions (present and not skipped on both
sides):

- regression: passed on base (every trial), does not pass on head (any other verdict, review
  included: an agent that starts declining has regressed);
- fix: did not pass on base, passes on head;
- flaky: pass rate strictly between 0 and 1 on either side (``--repeat``): listed with both
  rates, never counted as a regression or a fix; the paired test over questions still sees it;
- changed: a non-pass verdict became another non-pass verdict (fail -> error): listed only.

Questions on one side only are listed as added or removed, and questions skipped on one side
only as skipped; none of these is counted. The significance of the difference comes from
``sqlbench.rundiff.stats`` (exact McNemar for single runs, exact sign-flip over per-question
rates for repeated runs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from functools import cached_property

from sqlbench.rundiff.answers import AnswerChange, TruthAnswer, changes_between, truth_answer
from sqlbench.rundiff.metrics import MetricDelta, metric_deltas, question_scores
from sqlbench.rundiff.stats import (
    Conclusion,
    Interval,
    PairedTest,
    bootstrap_mean_interval,
    paired_rates,
    paired_single,
)
from sqlbench.runs.accuracy import Accuracy, IntervalMethod, accuracy_of
from sqlbench.runs.records import RunInfo, TrialResult
from sqlbench.runs.scores import DEFAULT_DECLINE_PENALTY, Abstention, abstention_of
from sqlbench.verdicts import Verdict, across_trials


@dataclass(frozen=True)
class QuestionOutcome:
    """One question's results in one run: one verdict and reason per trial (``--repeat K``)."""

    space: str
    name: str
    verdicts: tuple[Verdict, ...]
    """One per trial, in trial order; never empty."""
    reasons: tuple[str, ...]
    """The reason of each trial, aligned with ``verdicts``."""
    tags: tuple[str, ...] = ()
    """The question's tags, when the run recorded them."""
    metrics: tuple[tuple[str, float], ...] = ()
    """``(metric, mean score over trials)`` for each agent-behaviour metric scored."""
    truth: TruthAnswer | None = None
    """The ground-truth result's fingerprint and preview, when the run recorded one."""
    shown: TrialResult | None = field(default=None, compare=False, repr=False)
    """The trial a report details (the first that did not pass), when built from a run."""

    def __post_init__(self) -> None:
        if not self.verdicts or len(self.verdicts) != len(self.reasons):
            raise ValueError(f"{self.full_name}: need one reason per verdict and at least one")

    @property
    def full_name(self) -> str:
        """``space/name``."""
        return f"{self.space}/{self.name}"

    @cached_property
    def skipped(self) -> bool:
        """True when the question was skipped (``skip:``): not in accuracy, not paired."""
        return all(v is Verdict.SKIPPED for v in self.verdicts)

    @cached_property
    def trials(self) -> int:
        """Graded trials (skipped ones excluded)."""
        return sum(1 for v in self.verdicts if v is not Verdict.SKIPPED)

    @cached_property
    def passes(self) -> int:
        """Trials that passed."""
        return sum(1 for v in self.verdicts if v is Verdict.PASS)

    @cached_property
    def rate(self) -> Fraction:
        """Pass rate over graded trials (exact)."""
        return Fraction(self.passes, self.trials) if self.trials else Fraction(0)

    @property
    def flaky(self) -> bool:
        """True when some trials passed and some did not."""
        return 0 < self.rate < 1

    @cached_property
    def verdict(self) -> Verdict:
        """The question's verdict across its trials (``verdicts.across_trials``), as ``sqlbench
        show`` gives it."""
        return across_trials(self.verdicts)

    @property
    def reason(self) -> str:
        """The reason behind ``verdict``: its first trial with that verdict."""
        wanted = self.verdict
        for verdict, reason in zip(self.verdicts, self.reasons, strict=True):
            if verdict is wanted:
                return reason
        return self.reasons[0]

    @property
    def summary(self) -> str:
        """``pass`` / ``fail`` for one trial; ``pass 2/3`` style for repeated ones."""
        if self.trials <= 1:
            return self.verdict.value
        if self.flaky:
            return f"flaky {self.passes}/{self.trials}"
        return f"{self.verdict.value} {self.passes}/{self.trials}"


@dataclass(frozen=True)
class RunSide:
    """One side of a comparison: which run it is and its per-question outcomes."""

    label: str
    """The run's name (or a ref, for a side that has no run, such as an empty base)."""
    outcomes: tuple[QuestionOutcome, ...]
    branch: str | None = None
    commit: str | None = None
    agent: str | None = None
    reused: bool = False
    """True when a stored run was reused instead of running the agent again."""
    run_id: str | None = None
    """The stored run's id (None for a side without a run)."""
    abstention: Abstention | None = None
    """Answered, declined and reliability of the run (docs/conversations.md); None for a
    side without a run."""

    @property
    def repeated(self) -> bool:
        """True when any question has more than one graded trial."""
        return any(o.trials > 1 for o in self.outcomes)


def side_from_run(
    info: RunInfo, results: Iterable[TrialResult], *, reused: bool = False
) -> RunSide:
    """A comparison side from a stored run: its trials grouped per question, in run order.

    Args:
        info: The run's metadata (name, branch, commit, agent).
        results: Its trial results, any order.
        reused: True when the run was found in the store rather than made for this comparison.
    """
    grouped: dict[tuple[str, str], list[TrialResult]] = {}
    ordered = sorted(results, key=lambda r: (r.position, r.space, r.name, r.trial))
    for result in ordered:
        grouped.setdefault((result.space, result.name), []).append(result)
    outcomes = tuple(
        QuestionOutcome(
            space,
            name,
            tuple(t.verdict for t in trials),
            tuple(t.reason for t in trials),
            tuple(trials[0].tags),
            question_scores(trials),
            truth_answer(trials),
            next((t for t in trials if t.verdict is not Verdict.PASS), trials[0]),
        )
        for (space, name), trials in grouped.items()
    )
    penalty = info.compare.get("decline_penalty", DEFAULT_DECLINE_PENALTY)
    return RunSide(
        info.name,
        outcomes,
        info.branch,
        info.commit,
        info.agent_name,
        reused,
        info.id,
        abstention_of(ordered, float(penalty)),
    )


def side_accuracy(side: RunSide) -> Accuracy:
    """Accuracy of one side with its 95% interval: Wilson for single runs, bootstrap over
    questions for repeated ones (the same ``Accuracy`` class ``sqlbench run`` prints).

    Example:
        >>> q = QuestionOutcome("s", "a", (Verdict.PASS,), ("match",))
        >>> side_accuracy(RunSide("r", (q,))).label()
        '100% (1/1)'
    """
    counts = [(o.passes, o.trials) for o in side.outcomes if not o.skipped]
    method = IntervalMethod.BOOTSTRAP if side.repeated and counts else IntervalMethod.WILSON
    return accuracy_of(counts, method)


class ChangeKind(StrEnum):
    """How a question differs between base and head."""

    REGRESSION = "regression"
    FIX = "fix"
    FLAKY = "flaky"
    CHANGED = "changed"
    ADDED = "added"
    REMOVED = "removed"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Change:
    """One question that differs (or is flaky); either side may be absent."""

    kind: ChangeKind
    space: str
    name: str
    base: QuestionOutcome | None
    head: QuestionOutcome | None

    @property
    def full_name(self) -> str:
        """``space/name``."""
        return f"{self.space}/{self.name}"


@dataclass(frozen=True)
class RunDiff:
    """The question-by-question comparison of two runs and the significance of the change."""

    base: RunSide
    head: RunSide
    base_accuracy: Accuracy
    head_accuracy: Accuracy
    changes: tuple[Change, ...]
    """Ordered by kind (regressions first), then by question."""
    test: PairedTest
    paired: int
    """Questions present and not skipped on both sides."""
    difference_interval: Interval | None = None
    """Repeated runs: 95% paired bootstrap interval of the mean rate difference (head - base)."""
    alpha: float = field(default=0.05)
    metrics: tuple[MetricDelta, ...] = ()
    """Agent-behaviour metrics on both sides with a paired test (``sqlbench.rundiff.metrics``)."""
    shared_difference: float | None = None
    """Mean of head rate minus base rate over the paired questions; None when none."""
    warnings: tuple[str, ...] = ()
    """What makes this comparison weaker than it looks (a repeated run against a single one)."""
    answer_changes: tuple[AnswerChange, ...] = ()
    """Questions whose ground-truth result differs between the sides, whatever the verdicts
    (``sqlbench.rundiff.answers``)."""

    @property
    def difference(self) -> float | None:
        """Head minus base on the questions both sides share (``paired`` of them): the mean
        per-question pass-rate difference. None when they share none (an empty side): two
        accuracies over different question sets are not a difference."""
        return self.shared_difference

    @property
    def conclusion(self) -> Conclusion:
        """improved / regressed / inconclusive / too few questions."""
        return self.test.conclusion

    def of_kind(self, kind: ChangeKind) -> list[Change]:
        """The changes of one kind, in order."""
        return [c for c in self.changes if c.kind is kind]

    @property
    def regressions(self) -> list[Change]:
        """Questions that passed on base and do not on head."""
        return self.of_kind(ChangeKind.REGRESSION)

    @property
    def fixes(self) -> list[Change]:
        """Questions that pass on head and did not on base."""
        return self.of_kind(ChangeKind.FIX)

    @property
    def flaky(self) -> list[Change]:
        """Questions with a pass rate strictly between 0 and 1 on either side."""
        return self.of_kind(ChangeKind.FLAKY)


_ORDER = list(ChangeKind)


def diff_runs(base: RunSide, head: RunSide, alpha: float = 0.05) -> RunDiff:
    """Compare two runs question by question (see the module docstring for the rules).

    Raises:
        ValueError: when a side lists the same question twice.
    """
    base_by = _index(base)
    head_by = _index(head)
    changes: list[Change] = []
    regressions = fixes = 0
    differences: list[Fraction] = []
    for key in sorted(base_by.keys() | head_by.keys()):
        old, new = base_by.get(key), head_by.get(key)
        kind = _classify(old, new)
        if old is not None and new is not None and not old.skipped and not new.skipped:
            differences.append(new.rate - old.rate)
            regressions += kind is ChangeKind.REGRESSION
            fixes += kind is ChangeKind.FIX
        if kind is not None:
            changes.append(Change(kind, key[0], key[1], old, new))
    changes.sort(key=lambda c: (_ORDER.index(c.kind), c.space, c.name))
    interval = None
    if base.repeated or head.repeated:
        test = paired_rates(differences, alpha)
        if differences:
            interval = bootstrap_mean_interval([float(d) for d in differences])
    else:
        test = paired_single(regressions, fixes, len(differences), alpha)
    return RunDiff(
        base,
        head,
        side_accuracy(base),
        side_accuracy(head),
        tuple(changes),
        test,
        len(differences),
        interval,
        alpha,
        metric_deltas(_scores(base), _scores(head), alpha),
        float(sum(differences) / len(differences)) if differences else None,
        _warnings(base, head),
        tuple(
            changes_between(
                {(o.space, o.name): o.truth for o in base.outcomes},
                {(o.space, o.name): o.truth for o in head.outcomes},
            )
        ),
    )


def _warnings(base: RunSide, head: RunSide) -> tuple[str, ...]:
    if base.repeated == head.repeated or not base.outcomes or not head.outcomes:
        return ()
    repeated, single = ("base", "head") if base.repeated else ("head", "base")
    return (
        f"the {repeated} run asked each question several times (--repeat) and the {single} "
        "run once: pass rates are compared with single verdicts, so a flaky question can "
        "read as a change; compare runs made with the same --repeat",
    )


def _scores(side: RunSide) -> dict[str, dict[str, float]]:
    return {o.full_name: dict(o.metrics) for o in side.outcomes if not o.skipped and o.metrics}


def _index(side: RunSide) -> dict[tuple[str, str], QuestionOutcome]:
    index: dict[tuple[str, str], QuestionOutcome] = {}
    for outcome in side.outcomes:
        key = (outcome.space, outcome.name)
        if key in index:
            raise ValueError(f"run {side.label} lists {outcome.full_name} twice")
        index[key] = outcome
    return index


def _classify(old: QuestionOutcome | None, new: QuestionOutcome | None) -> ChangeKind | None:
    if old is None or new is None:
        present = new if old is None else old
        if present is None or present.skipped:
            return None
        return ChangeKind.ADDED if old is None else ChangeKind.REMOVED
    if old.skipped or new.skipped:
        return None if old.skipped and new.skipped else ChangeKind.SKIPPED
    if old.flaky or new.flaky:
        return ChangeKind.FLAKY
    if old.rate == 1 and new.rate == 0:
        return ChangeKind.REGRESSION
    if old.rate == 0 and new.rate == 1:
        return ChangeKind.FIX
    if old.verdict is not new.verdict:
        return ChangeKind.CHANGED
    return None
