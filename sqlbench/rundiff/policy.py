"""The pull-request check policy: which differences between base and head fail the check.

Rules (docs/project-files.md, ``check:``; default ``[regression, must_pass]``):

- ``regression``: any question passing on base that does not pass on head (flaky excluded);
- ``significant_drop``: head is significantly worse (``sqlbench.rundiff.stats`` at ``alpha``);
- ``below_floor``: head accuracy under ``floor``;
- ``must_pass``: a head question tagged ``must_pass_tag`` that does not pass (every trial);
- ``answer_changed``: a question's ground-truth result differs between base and head
  (reported always, failing only when listed).

Every rule is evaluated and reported; only the rules in ``fail_on`` fail the check. Metric
gates (``check: metrics: {name: {min, no_significant_drop}}``) are always enforced when
configured; each is reported as a rule named ``metric <name>``. A gated metric that head did
not score at all fails its gate: a gate that cannot be checked must not pass silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import cast, get_args

from sqlbench.errors import SqlbenchError
from sqlbench.project.files import CheckRule, CheckSettings, MetricGate
from sqlbench.rundiff.diff import RunDiff, RunSide, diff_runs
from sqlbench.rundiff.stats import Conclusion, format_p

RULES: tuple[CheckRule, ...] = get_args(CheckRule)
"""Every rule name, in the order they are reported."""


@dataclass(frozen=True)
class CheckPolicy:
    """What fails the check; built from ``sqlbench.yml`` ``check:`` and command-line flags."""

    fail_on: tuple[CheckRule, ...] = ("regression", "must_pass")
    floor: float | None = None
    """Minimum head accuracy (0-1); needed by ``below_floor``."""
    alpha: float = 0.05
    """Significance level of ``significant_drop`` and of the reported conclusion."""
    must_pass_tag: str = "must-pass"
    metric_gates: tuple[tuple[str, MetricGate], ...] = ()
    """``(metric, gate)`` pairs from ``check: metrics:``."""

    def __post_init__(self) -> None:
        unknown = [r for r in self.fail_on if r not in RULES]
        if unknown:
            raise SqlbenchError(f"unknown check rule {unknown[0]!r}: use one of {', '.join(RULES)}")
        if self.floor is not None and not 0 <= self.floor <= 1:
            raise SqlbenchError(f"the check floor must be between 0 and 1, got {self.floor}")
        if not 0 < self.alpha < 1:
            raise SqlbenchError(f"the check alpha must be between 0 and 1, got {self.alpha}")
        if "below_floor" in self.fail_on and self.floor is None:
            raise SqlbenchError(
                "the check fails on below_floor but no floor is set: add `floor:` under "
                "`check:` in sqlbench.yml or pass --floor"
            )

    @classmethod
    def from_settings(
        cls,
        settings: CheckSettings,
        *,
        fail_on: Sequence[str] | None = None,
        floor: float | None = None,
        alpha: float | None = None,
        must_pass_tag: str | None = None,
    ) -> CheckPolicy:
        """The project's policy with flags applied on top.

        A ``floor`` flag without a ``fail_on`` flag also enforces ``below_floor``: asking for a
        floor on the command line and having it ignored would be a silent fallback.
        """
        rules: list[str] = list(settings.fail_on) if fail_on is None else list(fail_on)
        if floor is not None and fail_on is None and "below_floor" not in rules:
            rules.append("below_floor")
        return cls(
            fail_on=tuple(cast(CheckRule, r) for r in dict.fromkeys(rules)),
            floor=settings.floor if floor is None else floor,
            alpha=settings.alpha if alpha is None else alpha,
            must_pass_tag=settings.must_pass_tag if must_pass_tag is None else must_pass_tag,
            metric_gates=tuple(sorted(settings.metrics.items())),
        )


@dataclass(frozen=True)
class RuleResult:
    """One rule's outcome."""

    rule: str
    """A ``CheckRule``, or ``metric <name>`` for a metric gate."""
    enforced: bool
    """True when the rule is in ``fail_on``."""
    failed: bool
    """True when the rule's condition holds (whether or not it is enforced)."""
    message: str
    """One line saying what was found."""
    questions: tuple[str, ...] = ()
    """``space/name`` of the questions behind a failure."""


@dataclass(frozen=True)
class CheckResult:
    """The policy applied to a comparison."""

    diff: RunDiff
    policy: CheckPolicy
    rules: tuple[RuleResult, ...]
    must_pass: tuple[str, ...]
    """``space/name`` of the head questions tagged must-pass."""

    @property
    def passed(self) -> bool:
        """False when an enforced rule failed."""
        return not any(r.failed and r.enforced for r in self.rules)

    def blocking(self) -> list[RuleResult]:
        """The enforced rules that failed."""
        return [r for r in self.rules if r.failed and r.enforced]

    def question_failures(self) -> dict[str, list[str]]:
        """For each question that fails the check: the enforced rules it breaks."""
        failures: dict[str, list[str]] = {}
        for rule in self.rules:
            if not (rule.failed and rule.enforced) or rule.rule not in ("regression", "must_pass"):
                continue
            for name in rule.questions:
                failures.setdefault(name, []).append(rule.rule)
        return failures


def run_check(
    base: RunSide, head: RunSide, policy: CheckPolicy, must_pass: Iterable[str] | None = None
) -> CheckResult:
    """Compare ``base`` and ``head`` at the policy's alpha and apply the policy.

    Args:
        base: The base side (may have no outcomes: a base without a project counts as empty).
        head: The head side.
        policy: What fails the check.
        must_pass: ``space/name`` of the must-pass questions; by default the head outcomes
            tagged ``policy.must_pass_tag``.
    """
    diff = diff_runs(base, head, alpha=policy.alpha)
    if must_pass is None:
        names = tuple(o.full_name for o in head.outcomes if policy.must_pass_tag in o.tags)
    else:
        names = tuple(must_pass)
    return CheckResult(diff, policy, _evaluate(diff, policy, names), names)


def _evaluate(
    diff: RunDiff, policy: CheckPolicy, must_pass: tuple[str, ...]
) -> tuple[RuleResult, ...]:
    enforced = set(policy.fail_on)
    regressions = tuple(c.full_name for c in diff.regressions)
    results = [
        RuleResult(
            "regression",
            "regression" in enforced,
            bool(regressions),
            f"{len(regressions)} regression{'s' if len(regressions) != 1 else ''}"
            + (f": {', '.join(regressions)}" if regressions else ""),
            regressions,
        )
    ]
    test = diff.test
    drop = test.conclusion is Conclusion.REGRESSED
    if test.p_value is None:
        detail = f"{test.conclusion.value}: {test.questions} shared questions cannot show it"
    else:
        detail = f"{test.conclusion.value} ({format_p(test.p_value)}, alpha {policy.alpha:g})"
    results.append(
        RuleResult(
            "significant_drop",
            "significant_drop" in enforced,
            drop,
            detail,
            regressions if drop else (),
        )
    )
    head = diff.head_accuracy
    if policy.floor is None:
        results.append(RuleResult("below_floor", False, False, "no floor set"))
    else:
        value = head.value or 0.0  # a head with no graded question is at 0
        below = value < policy.floor
        relation = "under" if below else "at or over"
        results.append(
            RuleResult(
                "below_floor",
                "below_floor" in enforced,
                below,
                f"head accuracy {value:.1%} is {relation} the floor {policy.floor:.0%}",
            )
        )
    by_name = {o.full_name: o for o in diff.head.outcomes}
    failing = tuple(
        n
        for n in must_pass
        if n in by_name and not by_name[n].skipped and by_name[n].passes < by_name[n].trials
    )
    message = (
        f"{len(failing)} of {len(must_pass)} must-pass question"
        f"{'s' if len(must_pass) != 1 else ''} failing"
    )
    results.append(
        RuleResult(
            "must_pass",
            "must_pass" in enforced,
            bool(failing),
            message + (f": {', '.join(failing)}" if failing else ""),
            failing,
        )
    )
    changed = tuple(c.full_name for c in diff.answer_changes)
    results.append(
        RuleResult(
            "answer_changed",
            "answer_changed" in enforced,
            bool(changed),
            f"{len(changed)} expected answer{'s' if len(changed) != 1 else ''} changed"
            + (f": {', '.join(changed)}" if changed else ""),
            changed,
        )
    )
    results += [_metric_gate(diff, name, gate, policy.alpha) for name, gate in policy.metric_gates]
    return tuple(results)


def _metric_gate(diff: RunDiff, name: str, gate: MetricGate, alpha: float) -> RuleResult:
    delta = next((d for d in diff.metrics if d.name == name), None)
    rule = f"metric {name}"
    if delta is None or delta.head_mean is None:
        return RuleResult(rule, True, True, f"head has no {name} scores to check")
    problems: list[str] = []
    facts = [f"head mean {delta.head_mean:.1%}"]
    if gate.min is not None:
        facts.append(f"min {gate.min:.0%}")
        if delta.head_mean < gate.min:
            problems.append(f"head mean {delta.head_mean:.1%} is under the minimum {gate.min:.0%}")
    dropped = tuple(d.full_name for d in delta.dropped)
    if gate.no_significant_drop:
        test = delta.test
        if test.conclusion is Conclusion.REGRESSED:
            assert test.p_value is not None
            problems.append(
                f"significant drop from base {_percent(delta.base_mean)} "
                f"({format_p(test.p_value)}, alpha {alpha:g})"
            )
        elif test.p_value is None:
            facts.append(f"drop test: {test.questions} shared questions cannot show one")
        else:
            facts.append(f"no significant drop ({format_p(test.p_value)})")
    if problems:
        worst = f"; dropped most: {', '.join(dropped)}" if dropped else ""
        return RuleResult(rule, True, True, "; ".join(problems) + worst)
    return RuleResult(rule, True, False, ", ".join(facts))


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"
