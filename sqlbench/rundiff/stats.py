"""Statistics for runs and run comparisons (docs/commands.md and docs/runs.md).

Everything here is a pure function of counts or rates. Tests that cannot reach significance say
so (``Conclusion.TOO_FEW``) instead of printing a p-value nobody should read.

- One run: accuracy with a Wilson 95% interval (``wilson_interval``).
- Two single runs: exact two-sided McNemar test on the discordant questions (``mcnemar_exact``).
- Repeated runs (``--repeat K``): per-question pass rates; pass@k and pass^k; the run's accuracy
  is the mean rate with an interval bootstrapped over questions (``bootstrap_mean_interval``);
  two repeated runs are compared by an exact sign-flip permutation test over the per-question
  rate differences (``sign_flip_test``), never by a per-question test (no power at small K).
  pass@k, pass^k, Wilson and the bootstrap are implemented once, in ``sqlbench.runs.rates``
  (a run's ``Accuracy`` uses them too, so ``run`` and ``compare`` print the same figures);
  they are re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

import numpy as np

from sqlbench.runs.rates import (
    Interval,
    bootstrap_mean_interval,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)

__all__ = [
    "Conclusion",
    "Interval",
    "PairedTest",
    "bootstrap_mean_interval",
    "format_p",
    "mcnemar_exact",
    "min_questions",
    "paired_rates",
    "paired_single",
    "pass_at_k",
    "pass_hat_k",
    "sign_flip_test",
    "wilson_interval",
]

MONTE_CARLO_SEED = 0
"""Fixed seed of the Monte Carlo fallback: the same comparison always reports the same p."""
_EXACT_BUDGET = 200_000_000
"""Largest (questions x support) the exact sign-flip distribution is computed for."""
_MONTE_CARLO_DRAWS = 100_000


class Conclusion(StrEnum):
    """The one-word verdict of a comparison between a base and a head run."""

    IMPROVED = "improved"
    """Head is better, significantly at the chosen alpha."""
    REGRESSED = "regressed"
    """Head is worse, significantly at the chosen alpha."""
    INCONCLUSIVE = "inconclusive"
    """No significant difference: the data do not show that either side is better."""
    TOO_FEW = "too few questions"
    """So few shared questions that no outcome could have been significant."""


@dataclass(frozen=True)
class PairedTest:
    """The paired significance test of a base/head difference over shared questions."""

    method: str
    """``exact McNemar``, ``exact sign-flip`` or ``Monte Carlo sign-flip`` (with draw count)."""
    questions: int
    """Questions present (and not skipped) in both runs: the pairs."""
    changed: int
    """Pairs whose outcome (single runs) or pass rate (repeat runs) differs."""
    p_value: float | None
    """Two-sided p-value; None when there are too few questions for any test."""
    alpha: float
    """Significance level the conclusion was drawn at."""
    direction: int
    """+1 head better, -1 head worse, 0 no difference (sign of the summed differences)."""
    conclusion: Conclusion

    @property
    def significant(self) -> bool:
        """True when the p-value is below alpha."""
        return self.p_value is not None and self.p_value < self.alpha


def mcnemar_exact(regressions: int, fixes: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts (binomial, p = 1/2).

    ``regressions`` are pairs that passed on base only, ``fixes`` on head only; concordant pairs
    carry no information about the difference and are not arguments.

    Example:
        >>> mcnemar_exact(0, 5)
        0.0625
        >>> round(mcnemar_exact(1, 9), 6)
        0.021484
    """
    if regressions < 0 or fixes < 0:
        raise ValueError("discordant counts cannot be negative")
    n = regressions + fixes
    if n == 0:
        return 1.0
    smaller = min(regressions, fixes)
    term = tail = 1  # C(n, 0); each next term is C(n, i) = C(n, i-1) * (n-i+1) / i, exactly
    for i in range(1, smaller + 1):
        term = term * (n - i + 1) // i
        tail += term
    return min(1.0, float(Fraction(2 * tail, 2**n)))


def sign_flip_test(differences: Sequence[Fraction]) -> tuple[float, str]:
    """Two-sided exact sign-flip permutation test that the mean paired difference is zero.

    Under the null each question's difference is as likely positive as negative. The statistic
    is the sum of differences; the p-value is the share of the ``2**m`` sign assignments whose
    absolute sum reaches the observed one. Differences are exact fractions (pass rates), scaled
    to integers so the distribution is computed exactly by convolution. When that would be too
    large (very many questions with unusual trial counts) it falls back to a seeded Monte Carlo
    estimate, and the returned method says so. With every difference in {-1, 0, 1} (single
    runs) this is exactly the two-sided McNemar test.

    Returns:
        ``(p_value, method)``.
    """
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return 1.0, "exact sign-flip"
    scale = math.lcm(*(d.denominator for d in nonzero))
    steps = [abs(int(d * scale)) for d in nonzero]
    observed = abs(sum(int(d * scale) for d in nonzero))
    support = sum(steps)
    if len(steps) * (2 * support + 1) <= _EXACT_BUDGET:
        probabilities = np.zeros(2 * support + 1)
        probabilities[support] = 1.0
        for step in steps:
            shifted = np.zeros_like(probabilities)
            shifted[step:] += probabilities[:-step] * 0.5
            shifted[:-step] += probabilities[step:] * 0.5
            probabilities = shifted
        sums = np.arange(-support, support + 1)
        p_value = float(probabilities[np.abs(sums) >= observed].sum())
        return min(1.0, p_value), "exact sign-flip"
    rng = np.random.default_rng(MONTE_CARLO_SEED)
    values = np.asarray(steps, dtype=float)
    hits = 0
    for start in range(0, _MONTE_CARLO_DRAWS, 1000):
        signs = rng.choice([-1.0, 1.0], size=(min(1000, _MONTE_CARLO_DRAWS - start), len(steps)))
        hits += int((np.abs(signs @ values) >= observed).sum())
    p_value = (hits + 1) / (_MONTE_CARLO_DRAWS + 1)
    return p_value, f"Monte Carlo sign-flip ({_MONTE_CARLO_DRAWS} draws)"


def min_questions(alpha: float) -> int:
    """Fewest paired questions with which a two-sided exact paired test can reach ``alpha``.

    The smallest p-value either test can give with m changed questions is ``2 / 2**m`` (all
    changes in one direction), so fewer than this many questions cannot show anything.

    Example:
        >>> min_questions(0.05)
        6
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    m = 1
    while 2.0 / 2**m >= alpha:
        m += 1
    return m


def paired_single(regressions: int, fixes: int, questions: int, alpha: float) -> PairedTest:
    """Compare two single runs over their ``questions`` shared questions (exact McNemar).

    ``regressions``: pairs passing on base only; ``fixes``: on head only.
    """
    if regressions + fixes > questions:
        raise ValueError("more changed questions than shared questions")
    direction = (fixes > regressions) - (fixes < regressions)
    if questions < min_questions(alpha):
        return PairedTest(
            "exact McNemar",
            questions,
            regressions + fixes,
            None,
            alpha,
            direction,
            Conclusion.TOO_FEW,
        )
    p_value = mcnemar_exact(regressions, fixes)
    conclusion = _conclude(p_value, alpha, direction)
    return PairedTest(
        "exact McNemar", questions, regressions + fixes, p_value, alpha, direction, conclusion
    )


def paired_rates(differences: Sequence[Fraction], alpha: float) -> PairedTest:
    """Compare two repeated runs by the per-question pass-rate differences (head - base)."""
    changed = sum(1 for d in differences if d != 0)
    total = sum(differences, Fraction(0))
    direction = (total > 0) - (total < 0)
    if len(differences) < min_questions(alpha):
        return PairedTest(
            "exact sign-flip", len(differences), changed, None, alpha, direction, Conclusion.TOO_FEW
        )
    p_value, method = sign_flip_test(differences)
    return PairedTest(
        method,
        len(differences),
        changed,
        p_value,
        alpha,
        direction,
        _conclude(p_value, alpha, direction),
    )


def _conclude(p_value: float, alpha: float, direction: int) -> Conclusion:
    if p_value >= alpha or direction == 0:
        return Conclusion.INCONCLUSIVE
    return Conclusion.IMPROVED if direction > 0 else Conclusion.REGRESSED


def format_p(p_value: float) -> str:
    """A p-value for people, with its ``p``: three significant digits, ``p < 0.001`` below that
    (never ``p = < 0.001``).

    Example:
        >>> format_p(0.021484375), format_p(1.0), format_p(0.00001)
        ('p = 0.0215', 'p = 1', 'p < 0.001')
    """
    if p_value < 0.001:
        return "p < 0.001"
    return f"p = {p_value:.3g}"
