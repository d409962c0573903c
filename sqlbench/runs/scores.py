"""A run's results gathered per question, with the run's accuracy (docs/verdicts.md and
docs/runs.md).

Accuracy counts every verdict except ``skipped``. Under ``--repeat K`` each question has a pass
rate; the run's accuracy is the mean of those rates, with a bootstrap interval over questions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from sqlbench.errors import SqlbenchError
from sqlbench.records.accuracy import Accuracy, IntervalMethod, accuracy_of
from sqlbench.records.hashes import trial_dispute_hash
from sqlbench.records.rates import is_flaky, pass_at_k, pass_hat_k
from sqlbench.records.run import Dispute, HumanReview, RunInfo, RunStatus, TrialResult
from sqlbench.runs.spend import (
    CreditMean,
    RunCost,
    WorkSummary,
    credit_mean,
    run_cost,
    work_summary,
)
from sqlbench.text import suggest
from sqlbench.verdicts import ResultFlag, Verdict, across_trials

DEFAULT_DECLINE_PENALTY = 1.0
"""``compare: decline_penalty`` of runs stored before it was recorded."""


class QuestionResult(BaseModel):
    """One question of a run: its trials and what they add up to."""

    model_config = ConfigDict(frozen=True)

    space: str
    name: str
    verdict: Verdict
    """With one trial, that trial's verdict. With several: pass when every trial passed, else
    the most frequent non-pass verdict (ties go to the worse: error, fail, review), the rule
    ``sqlbench compare`` uses too."""
    reason: str
    """The reason of the first trial with ``verdict``."""
    trials: list[TrialResult]
    passed: int
    """Passing trials; where a person decided, every counted trial takes their decision."""
    pass_rate: float | None
    """passed / trials; None for a skipped question."""
    human: HumanReview | None = None
    """A person's decision (``sqlbench review``), kept beside the automatic ``verdict``."""
    disputed: Dispute | None = None
    """A person's dispute of the ground truth it was graded against: out of accuracy."""
    pass_at_k: float | None
    """At least one of k trials passes (k = trials), unbiased estimator."""
    pass_hat_k: float | None
    """All k trials pass."""
    flaky: bool
    """Some but not all trials pass."""

    @property
    def full_name(self) -> str:
        """``space/name``."""
        return f"{self.space}/{self.name}"

    @property
    def tags(self) -> list[str]:
        """The question's tags (as the run asked it)."""
        return self.trials[0].tags if self.trials else []

    @property
    def decided_verdict(self) -> Verdict:
        """The verdict that counts: the person's decision if any, else the automatic one."""
        return self.human.verdict if self.human is not None else self.verdict

    @property
    def first(self) -> TrialResult:
        """The first trial (the only one without ``--repeat``)."""
        return self.trials[0]


class Abstention(BaseModel):
    """How a run's answers and declines add up, counted per question or conversation turn
    (every trial; skipped ones left out), and the reliability score in which a wrong answer
    costs ``penalty`` and a decline nothing (docs/conversations.md)."""

    model_config = ConfigDict(frozen=True)

    answered: int
    """Answers with SQL."""
    declined: int
    """Answers without SQL (a decline, or words), the agent not having failed."""
    expected_declines: int
    """Questions or turns marked ``expect: decline``."""
    correct_declines: int
    """Of those, the ones that passed (the agent gave no SQL)."""
    wrong_answers: int
    """Answers with SQL graded fail (a wrong result, or SQL where a decline was expected)."""
    correct: int
    """Answers graded pass (correct declines included)."""
    total: int
    penalty: float

    @property
    def reliability(self) -> float | None:
        """(correct - penalty * wrong) / total; None when nothing was graded."""
        if self.total == 0:
            return None
        return (self.correct - self.penalty * self.wrong_answers) / self.total


def abstention_of(trials: Iterable[TrialResult], penalty: float) -> Abstention:
    """The answered/declined counts and reliability of ``trials`` (each conversation turn
    counts on its own)."""
    counts = Counter[str]()
    for trial in trials:
        if trial.not_asked:  # the endpoint was unreachable: neither an answer nor a decline
            continue
        units: list[tuple[Verdict, str | None, str | None, str | None]]
        if trial.turns is not None:
            units = [(t.verdict, t.sql, t.expect, t.agent_error) for t in trial.turns]
        else:
            units = [(trial.verdict, trial.agent_sql, trial.expect, trial.agent_error)]
        for verdict, sql, expect, agent_error in units:
            if verdict is Verdict.SKIPPED:
                continue
            counts["total"] += 1
            answered = bool(sql and sql.strip())
            if answered:
                counts["answered"] += 1
            elif agent_error is None and verdict is not Verdict.ERROR:
                counts["declined"] += 1
            if expect == "decline":
                counts["expected_declines"] += 1
                if verdict is Verdict.PASS:
                    counts["correct_declines"] += 1
            if verdict is Verdict.PASS:
                counts["correct"] += 1
            if answered and verdict is Verdict.FAIL:
                counts["wrong_answers"] += 1
    return Abstention(
        answered=counts["answered"],
        declined=counts["declined"],
        expected_declines=counts["expected_declines"],
        correct_declines=counts["correct_declines"],
        wrong_answers=counts["wrong_answers"],
        correct=counts["correct"],
        total=counts["total"],
        penalty=penalty,
    )


class RunResult(BaseModel):
    """A run with its results: what ``run_benchmark`` returns and ``sqlbench show`` prints."""

    model_config = ConfigDict(frozen=True)

    info: RunInfo
    status: RunStatus
    """Effective status (a Running run whose process died reads Interrupted)."""
    questions: list[QuestionResult]
    accuracy: Accuracy

    def counts(self) -> dict[Verdict, int]:
        """Questions per verdict, every verdict present (zero when none)."""
        tally = Counter(q.verdict for q in self.questions)
        return {verdict: tally.get(verdict, 0) for verdict in Verdict}

    def abstention(self) -> Abstention:
        """Answered, declined and reliability, under the run's ``compare: decline_penalty``."""
        penalty = self.info.compare.get("decline_penalty", DEFAULT_DECLINE_PENALTY)
        if not isinstance(penalty, int | float) or isinstance(penalty, bool):
            penalty = DEFAULT_DECLINE_PENALTY
        return abstention_of((t for q in self.questions for t in q.trials), float(penalty))

    def by_warehouse(self) -> dict[str, Accuracy]:
        """Accuracy per warehouse (``warehouses:``), in the run's question order; empty when
        the run's questions recorded no warehouse (a project with a single one)."""
        groups: dict[str, list[QuestionResult]] = {}
        for question in self.questions:
            name = question.first.warehouse
            if name is not None:
                groups.setdefault(name, []).append(question)
        return {name: _accuracy(group, self.info.repeat) for name, group in groups.items()}

    def by_space(self) -> dict[str, Accuracy]:
        """Accuracy per space, in the run's question order."""
        groups: dict[str, list[QuestionResult]] = {}
        for question in self.questions:
            groups.setdefault(question.space, []).append(question)
        return {name: _accuracy(group, self.info.repeat) for name, group in groups.items()}

    def by_tag(self) -> dict[str, Accuracy]:
        """Accuracy per tag (a question counts under each of its tags), tags sorted."""
        groups: dict[str, list[QuestionResult]] = {}
        for question in self.questions:
            for tag in question.tags:
                groups.setdefault(tag, []).append(question)
        return {name: _accuracy(groups[name], self.info.repeat) for name in sorted(groups)}

    def latency_percentiles(self) -> tuple[float, float] | None:
        """The agent's latency p50 and p95 over every answer (milliseconds), or None."""
        values = sorted(
            t.latency_ms for q in self.questions for t in q.trials if t.latency_ms is not None
        )
        if not values:
            return None
        return _percentile(values, 0.5), _percentile(values, 0.95)

    def tokens(self) -> tuple[int, int] | None:
        """Input and output tokens over every answer that reported them, or None."""
        trials = [t for q in self.questions for t in q.trials]
        if all(t.input_tokens is None and t.output_tokens is None for t in trials):
            return None
        return (
            sum(t.input_tokens or 0 for t in trials),
            sum(t.output_tokens or 0 for t in trials),
        )

    def cost(self) -> RunCost | None:
        """What the run's answers cost (``pricing:``), or None when none recorded a cost."""
        trials = [t for q in self.questions for t in q.trials]
        return run_cost(trials, sum(q.passed for q in self.questions))

    def partial_credit(self) -> CreditMean | None:
        """The mean partial credit of the run's answers, or None when none has one."""
        return credit_mean(t for q in self.questions for t in q.trials)

    def work(self) -> WorkSummary | None:
        """The agent-to-ground-truth work ratios, or None when no answer recorded work."""
        return work_summary(t for q in self.questions for t in q.trials)

    def question(self, full_name: str) -> QuestionResult | None:
        """The question named ``space/name`` (or a bare name when unique), or None."""
        if "/" in full_name:
            return next((q for q in self.questions if q.full_name == full_name), None)
        found = [q for q in self.questions if q.name == full_name]
        return found[0] if len(found) == 1 else None


def gather(
    info: RunInfo,
    status: RunStatus,
    trials: Iterable[TrialResult],
    reviews: Mapping[tuple[str, str], HumanReview] | None = None,
    disputes: Mapping[tuple[str, str, str], Dispute] | None = None,
) -> RunResult:
    """Group a run's trials per question and compute its accuracy, counting the decisions of
    ``reviews`` (keyed by ``(space, name)``) in place of the automatic verdicts, and leaving
    out the questions whose ground truth ``disputes`` holds (keyed by ``(space, name,
    records.hashes.dispute_hash)``)."""
    grouped: dict[tuple[str, str], list[TrialResult]] = defaultdict(list)
    for trial in trials:
        grouped[(trial.space, trial.name)].append(trial)
    reviews = reviews or {}
    questions = [
        _question(
            group if len(group) == 1 else sorted(group, key=lambda t: t.trial),
            reviews.get(key),
            _disputed(group[0], disputes) if disputes else None,
        )
        for key, group in sorted(grouped.items(), key=lambda kv: (kv[1][0].position, kv[0]))
    ]
    return RunResult(
        info=info, status=status, questions=questions, accuracy=_accuracy(questions, info.repeat)
    )


def _disputed(
    trial: TrialResult, disputes: Mapping[tuple[str, str, str], Dispute]
) -> Dispute | None:
    return disputes.get((trial.space, trial.name, trial_dispute_hash(trial)))


def _question(
    trials: list[TrialResult],
    human: HumanReview | None = None,
    disputed: Dispute | None = None,
) -> QuestionResult:
    if len(trials) == 1:  # without --repeat: the one trial's verdict and reason
        verdict, reason = trials[0].verdict, trials[0].reason
    else:
        verdict = across_trials(t.verdict for t in trials)
        reason = next(t.reason for t in trials if t.verdict == verdict)
    counted = [t for t in trials if t.verdict != Verdict.SKIPPED and not t.not_asked]
    if human is not None and verdict is Verdict.SKIPPED:
        human = None
    if human is not None:
        passed = len(counted) if human.verdict is Verdict.PASS else 0
    else:
        passed = sum(1 for t in counted if t.verdict == Verdict.PASS)
    n = len(counted)
    rate = passed / n if n else None
    # Built without validation: every field is computed here with its declared type (a run of
    # thousands of questions is gathered each time it is loaded back).
    return QuestionResult.model_construct(
        space=trials[0].space,
        name=trials[0].name,
        verdict=verdict,
        reason=reason,
        trials=trials,
        passed=passed,
        pass_rate=rate,
        pass_at_k=pass_at_k(n, passed, n) if n else None,
        pass_hat_k=pass_hat_k(n, passed, n) if n else None,
        flaky=is_flaky(rate),
        human=human,
        disputed=disputed,
    )


def _percentile(values: list[float], fraction: float) -> float:
    """Linear-interpolated percentile of sorted ``values``.

    Example:
        >>> _percentile([10.0, 20.0, 30.0, 40.0], 0.5), _percentile([10.0], 0.95)
        (25.0, 10.0)
    """
    position = (len(values) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def _accuracy(questions: list[QuestionResult], repeat: int) -> Accuracy:
    counts = [
        (q.passed, sum(1 for t in q.trials if t.verdict != Verdict.SKIPPED and not t.not_asked))
        for q in questions
        if q.pass_rate is not None and q.disputed is None
    ]
    counted = [q for q in questions if q.pass_rate is not None and q.disputed is None]
    human = sum(1 for q in counted if q.human is not None)
    disputed = sum(1 for q in questions if q.pass_rate is not None and q.disputed is not None)
    not_asked = sum(1 for q in questions if q.disputed is None for t in q.trials if t.not_asked)
    recalled = sum(
        1
        for q in counted
        if q.human is None
        for t in q.trials
        if t.verdict is Verdict.PASS and ResultFlag.FROM_CERTIFIED_QUERY in t.flags
    )
    return accuracy_of(
        counts,
        IntervalMethod.BOOTSTRAP if repeat > 1 else None,
        human=human,
        not_asked=not_asked,
        from_certified_query=recalled,
        disputed=disputed,
    )


def not_asked_summary(run: RunResult) -> str | None:
    """``2 not asked: the agent's endpoint answered 429`` (what it did, most frequent first);
    None when every question was asked."""
    faults = Counter(
        t.endpoint_fault for q in run.questions for t in q.trials if t.endpoint_fault is not None
    )
    if not faults:
        return None
    total = sum(faults.values())
    did = ", ".join(fault for fault, _ in faults.most_common())
    return f"{total} not asked: the agent's endpoint {did}"


def not_asked_questions(run: RunResult) -> list[str]:
    """``space/name`` of every question with an answer not asked (its endpoint unreachable)."""
    return [q.full_name for q in run.questions if any(t.not_asked for t in q.trials)]


def find_question(run: RunResult, name: str) -> QuestionResult:
    """The run's question ``space/name`` (or a bare name, when unique).

    Raises:
        SqlbenchError: Not in the run (the closest name is suggested) or ambiguous.
    """
    found = run.question(name)
    if found is not None:
        return found
    same = [q.full_name for q in run.questions if q.name == name]
    if len(same) > 1:
        raise SqlbenchError(
            f"question {name!r} is in several spaces of run {run.info.name} "
            f"({', '.join(same)}); write space/name"
        )
    names = [q.full_name for q in run.questions] + [q.name for q in run.questions]
    raise SqlbenchError(f"run {run.info.name} has no question {name!r}{suggest(name, names)}")


def pick_trial(run: RunResult, question: QuestionResult, trial: int | None = None) -> TrialResult:
    """The trial of ``question`` to show: trial number ``trial``, else the first that did not
    pass (else the first).

    Raises:
        SqlbenchError: The question has no trial by that number.
    """
    if trial is None:
        return next(
            (t for t in question.trials if t.verdict is not Verdict.PASS), question.trials[0]
        )
    for candidate in question.trials:
        if candidate.trial == trial:
            return candidate
    raise SqlbenchError(
        f"{question.full_name} has no trial #{trial} in run "
        f"{run.info.name} (trials 0-{len(question.trials) - 1})"
    )
