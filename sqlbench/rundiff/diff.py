"""Pair two runs question by question: regressions, fixes, flaky, added and removed questions.

Questions are paired by ``space/name``. On paired questions (present and not skipped on both
sides):

- regression: passed on base (every trial), does not pass on head (any other verdict, review
  included: an agent that starts declining has regressed);
- fix: did not pass on base, passes on head;
- flaky: pass rate strictly between 0 and 1 on either side (``--repeat``): listed with both
  rates, never counted as a regression or a fix; the paired test over questions still sees it;
- changed: a non-pass verdict became another non-pass verdict (fail -> error): listed only.

A person's decision (``sqlbench review``, carried while the ground truth and the agent's SQL
hash the same) counts in place of the automatic verdict, as in every accuracy sqlbench shows; a
regression or fix that only a decision made (the automatic verdicts did not flip) is marked
``by_person``. ``diff_runs(..., automatic_only=True)`` counts the automatic verdicts alone.

Questions on one side only are listed as added or removed, questions skipped on one side
only as skipped, and questions not asked on either side (the agent's endpoint was unreachable:
``error_kind: unreachable``) as not asked; none of these is counted, in the flips or in either
side's accuracy. The significance of the difference comes from
``sqlbench.rundiff.stats`` (exact McNemar for single runs, exact sign-flip over per-question
rates for repeated runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from fractions import Fraction
from functools import cached_property

from sqlbench.records.accuracy import Accuracy, IntervalMethod, accuracy_of
from sqlbench.records.hashes import trial_dispute_hash
from sqlbench.records.run import HumanReview, RunInfo, TrialResult
from sqlbench.rundiff.answers import AnswerChange, TruthAnswer, changes_between, truth_answer
from sqlbench.rundiff.economy import EconomyDiff, SideEconomy, economy_diff, side_economy
from sqlbench.rundiff.metrics import MetricDelta, metric_deltas, question_scores
from sqlbench.rundiff.stats import (
    Conclusion,
    Interval,
    PairedTest,
    bootstrap_mean_interval,
    paired_rates,
    paired_single,
)
from sqlbench.runs.scores import (
    DEFAULT_DECLINE_PENALTY,
    Abstention,
    RunResult,
    abstention_of,
)
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
    human: HumanReview | None = None
    """A person's decision on the question (``sqlbench review``), never on a skipped one."""
    automatic: tuple[Verdict, ...] | None = None
    """The automatic verdicts when ``verdicts`` holds the person's decision (``counted``);
    None when ``verdicts`` are the automatic ones."""
    not_asked: int = 0
    """Trials not asked: the agent's endpoint was unreachable (their verdict reads ``error``);
    left out of ``trials``."""

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
        """Graded trials (skipped and not asked ones excluded)."""
        return sum(1 for v in self.verdicts if v is not Verdict.SKIPPED) - self.not_asked

    @property
    def unasked(self) -> bool:
        """True when no trial was asked (the agent's endpoint was unreachable every time): not
        in accuracy, not paired, listed as not asked."""
        return self.not_asked > 0 and self.trials == 0

    @property
    def uncounted(self) -> bool:
        """Skipped or not asked: in no accuracy and no flip."""
        return self.skipped or self.unasked

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
        show`` gives it; ``error`` when no trial was asked, and pass when every asked trial
        passed."""
        if self.unasked:
            return Verdict.ERROR
        if self.not_asked and self.trials and self.passes == self.trials:
            return Verdict.PASS
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
        """``pass`` / ``fail`` for one trial; ``pass 2/3`` style for repeated ones; ``not asked``
        when no trial was; where a person's decision counts, it with the automatic verdict:
        ``pass (person; automatic fail)``."""
        if self.unasked:
            return "not asked"
        if self.automatic is not None and self.human is not None:
            return f"{self.human.verdict.value} (person; automatic {self.machine().summary})"
        if self.trials <= 1:
            return self.verdict.value
        if self.flaky:
            return f"flaky {self.passes}/{self.trials}"
        return f"{self.verdict.value} {self.passes}/{self.trials}"

    @property
    def decided(self) -> bool:
        """True when a person's decision counts in place of the automatic verdicts."""
        return self.automatic is not None

    def counted(self) -> QuestionOutcome:
        """This outcome as accuracy counts it: every graded trial takes the person's decision
        where there is one (the automatic verdicts kept in ``automatic``), as a run's own
        accuracy does (``sqlbench.runs.scores``)."""
        if self.human is None or self.skipped or self.automatic is not None:
            return self
        decided = tuple(v if v is Verdict.SKIPPED else self.human.verdict for v in self.verdicts)
        return replace(self, verdicts=decided, automatic=self.verdicts)

    def machine(self) -> QuestionOutcome:
        """This outcome as the automatic verdicts alone read it."""
        if self.automatic is None:
            return self
        return replace(self, verdicts=self.automatic, automatic=None)


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
    dirty: bool = False
    """True when the run evaluated a working tree with uncommitted edits (``+dirty``)."""
    disputed: frozenset[tuple[str, str]] = frozenset()
    """``(space, name)`` of the questions whose ground truth, as this run graded them, a
    person disputes (``review --dispute``): a comparison leaves them out of both sides."""
    economy: SideEconomy | None = field(default=None, compare=False, repr=False)
    """Its cost and each question's cost, partial credit and work (None without a run)."""
    abstention: Abstention | None = None
    """Answered, declined and reliability of the run (docs/conversations.md); None for a
    side without a run."""

    @property
    def repeated(self) -> bool:
        """True when any question has more than one graded trial."""
        return any(o.trials > 1 for o in self.outcomes)


def side_from_run(
    info: RunInfo,
    results: Iterable[TrialResult],
    *,
    reused: bool = False,
    reviews: Mapping[tuple[str, str], HumanReview] | None = None,
    disputes: Mapping[tuple[str, str, str], object] | None = None,
) -> RunSide:
    """A comparison side from a stored run: its trials grouped per question, in run order.

    Args:
        info: The run's metadata (name, branch, commit, agent).
        results: Its trial results, any order.
        reused: True when the run was found in the store rather than made for this comparison.
        reviews: The run's human decisions (its own and carried), by ``(space, name)``.
        disputes: The disputed ground truths (``review --dispute``), by ``(space, name,
            ground-truth hash)``; a question graded against one is marked ``disputed``.
    """
    reviews = reviews or {}
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
            _decision(reviews.get((space, name)), trials),
            not_asked=sum(1 for t in trials if t.not_asked),
        )
        for (space, name), trials in grouped.items()
    )
    disputed: frozenset[tuple[str, str]] = frozenset()
    if disputes:
        disputed = frozenset(
            key
            for key, trials in grouped.items()
            if (*key, trial_dispute_hash(trials[0])) in disputes
        )
    passed = sum(o.counted().passes for o in outcomes)
    penalty = info.compare.get("decline_penalty", DEFAULT_DECLINE_PENALTY)
    return RunSide(
        info.name,
        outcomes,
        info.branch,
        info.commit,
        info.agent_name,
        reused,
        info.id,
        dirty=info.dirty,
        disputed=disputed,
        economy=side_economy(ordered, passed, _max_work_ratio(info)),
        abstention=abstention_of(ordered, float(penalty)),
    )


def _max_work_ratio(info: RunInfo) -> float | None:
    """The run's ``compare: {max_work_ratio: N}`` (None: unset)."""
    value = info.compare.get("max_work_ratio")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def side_from_result(
    result: RunResult,
    *,
    reused: bool = False,
    disputes: Mapping[tuple[str, str, str], object] | None = None,
) -> RunSide:
    """A comparison side from a loaded run (``RunStore.load_run``, ``run_benchmark``), with
    the human decisions it carries (and the disputes given, ``review --dispute``)."""
    trials = [trial for question in result.questions for trial in question.trials]
    reviews = {(q.space, q.name): q.human for q in result.questions if q.human is not None}
    return side_from_run(result.info, trials, reused=reused, reviews=reviews, disputes=disputes)


def _decision(review: HumanReview | None, trials: list[TrialResult]) -> HumanReview | None:
    """A decision applies to a graded question only (a skipped one is not counted)."""
    if review is None or all(t.verdict is Verdict.SKIPPED for t in trials):
        return None
    return review


def _without(side: RunSide, disputed: frozenset[tuple[str, str]]) -> RunSide:
    """``side`` without the disputed questions (both sides of a comparison lose the same)."""
    if not disputed:
        return side
    kept = tuple(o for o in side.outcomes if (o.space, o.name) not in disputed)
    return replace(side, outcomes=kept)


def side_accuracy(side: RunSide, disputed: int = 0) -> Accuracy:
    """Accuracy of one side with its 95% interval: Wilson for single runs, bootstrap over
    questions for repeated ones (the same ``Accuracy`` class ``sqlbench run`` prints).

    Example:
        >>> q = QuestionOutcome("s", "a", (Verdict.PASS,), ("match",))
        >>> side_accuracy(RunSide("r", (q,))).label()
        '100% (1/1)'
    """
    counts = [(o.passes, o.trials) for o in side.outcomes if not o.uncounted]
    method = IntervalMethod.BOOTSTRAP if side.repeated and counts else IntervalMethod.WILSON
    human = sum(1 for o in side.outcomes if o.decided and not o.uncounted)
    not_asked = sum(o.not_asked for o in side.outcomes)
    return accuracy_of(counts, method, human=human, not_asked=not_asked, disputed=disputed)


class ChangeKind(StrEnum):
    """How a question differs between base and head."""

    REGRESSION = "regression"
    FIX = "fix"
    FLAKY = "flaky"
    CHANGED = "changed"
    ADDED = "added"
    REMOVED = "removed"
    SKIPPED = "skipped"
    NOT_ASKED = "not asked"
    """Not asked on base or head: the agent's endpoint was unreachable (never a regression)."""


@dataclass(frozen=True)
class Change:
    """One question that differs (or is flaky); either side may be absent."""

    kind: ChangeKind
    space: str
    name: str
    base: QuestionOutcome | None
    head: QuestionOutcome | None
    by_person: bool = False
    """True when only a person's decision made this change: the automatic verdicts alone do
    not make it a change of this kind."""

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
    automatic_only: bool = False
    """True when the automatic verdicts alone were counted (``--automatic-only``)."""
    decisions_left_out: int = 0
    """With ``automatic_only``: the questions on either side a person decided, not counted."""
    economy: EconomyDiff | None = None
    """Cost, partial credit on shared failures and work ratios (docs/cost.md), with the
    questions' verdicts as accuracy counts them (``automatic_only`` too)."""

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

    @property
    def not_asked(self) -> list[Change]:
        """Questions not asked on either side (an unreachable endpoint): the comparison is
        incomplete until ``run --resume`` asks them."""
        return self.of_kind(ChangeKind.NOT_ASKED)


_ORDER = list(ChangeKind)


def diff_runs(
    base: RunSide,
    head: RunSide,
    alpha: float = 0.05,
    max_work_ratio: float | None = None,
    *,
    automatic_only: bool = False,
) -> RunDiff:
    """Compare two runs question by question (see the module docstring for the rules).

    Args:
        base: The side the change goes into.
        head: The side with the change.
        alpha: Significance level of the paired test.
        automatic_only: Count the automatic verdicts alone, leaving out people's decisions.

    Raises:
        ValueError: when a side lists the same question twice.
    """
    disputed = base.disputed | head.disputed
    base_disputed, head_disputed = (
        sum(1 for o in side.outcomes if (o.space, o.name) in disputed and not o.uncounted)
        for side in (base, head)
    )
    base, head = _without(base, disputed), _without(head, disputed)
    left_out = 0
    if automatic_only:
        left_out = sum(1 for o in (*base.outcomes, *head.outcomes) if o.human is not None)
    base = _counted_side(base, automatic_only)
    head = _counted_side(head, automatic_only)
    base_by = _index(base)
    head_by = _index(head)
    changes: list[Change] = []
    regressions = fixes = 0
    differences: list[Fraction] = []
    for key in sorted(base_by.keys() | head_by.keys()):
        old, new = base_by.get(key), head_by.get(key)
        kind = _classify(old, new)
        if old is not None and new is not None and not old.uncounted and not new.uncounted:
            differences.append(new.rate - old.rate)
            regressions += kind is ChangeKind.REGRESSION
            fixes += kind is ChangeKind.FIX
        if kind is not None:
            by_person = kind in (ChangeKind.REGRESSION, ChangeKind.FIX) and kind is not (
                _classify(
                    old.machine() if old is not None else None,
                    new.machine() if new is not None else None,
                )
            )
            changes.append(Change(kind, key[0], key[1], old, new, by_person))
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
        side_accuracy(base, base_disputed),
        side_accuracy(head, head_disputed),
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
        automatic_only,
        left_out,
        economy_diff(base.economy, head.economy, max_work_ratio),
    )


def _counted_side(side: RunSide, automatic_only: bool) -> RunSide:
    """The side as accuracy counts it: people's decisions in place of the automatic verdicts,
    or (``automatic_only``) the automatic verdicts alone."""
    outcomes = tuple(o.machine() if automatic_only else o.counted() for o in side.outcomes)
    return replace(side, outcomes=outcomes, economy=_counted_economy(side.economy, outcomes))


def _counted_economy(
    economy: SideEconomy | None, outcomes: tuple[QuestionOutcome, ...]
) -> SideEconomy | None:
    """``economy`` with the verdicts ``outcomes`` count (a person's decision, or the automatic
    verdicts alone) for its passes per correct answer and its failures on both sides; questions
    not asked are no failure."""
    if economy is None:
        return None
    verdicts = {o.full_name: o.verdict for o in outcomes if not o.uncounted}
    questions = {
        name: (verdicts[name], found)
        for name, (_, found) in economy.questions.items()
        if name in verdicts
    }
    cost = economy.cost
    if cost is not None:
        cost = replace(cost, passed=sum(o.passes for o in outcomes if not o.uncounted))
    return replace(economy, cost=cost, questions=questions)


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
    return {o.full_name: dict(o.metrics) for o in side.outcomes if not o.uncounted and o.metrics}


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
        if present.unasked:
            return ChangeKind.NOT_ASKED
        return ChangeKind.ADDED if old is None else ChangeKind.REMOVED
    if old.skipped or new.skipped:
        return None if old.skipped and new.skipped else ChangeKind.SKIPPED
    if old.unasked or new.unasked:
        return ChangeKind.NOT_ASKED
    if old.flaky or new.flaky:
        return ChangeKind.FLAKY
    if old.rate == 1 and new.rate == 0:
        return ChangeKind.REGRESSION
    if old.rate == 0 and new.rate == 1:
        return ChangeKind.FIX
    if old.verdict is not new.verdict:
        return ChangeKind.CHANGED
    return None
