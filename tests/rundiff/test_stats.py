"""Statistics against values worked out by hand (and by brute-force enumeration)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench.rundiff import stats
from sqlbench.rundiff.stats import (
    Conclusion,
    bootstrap_mean_interval,
    format_p,
    mcnemar_exact,
    min_questions,
    paired_rates,
    paired_single,
    pass_at_k,
    pass_hat_k,
    sign_flip_test,
    wilson_interval,
)

Z = 1.959963984540054  # the 97.5% normal quantile


def test_wilson_seven_of_ten_by_hand() -> None:
    # centre = (0.7 + z²/20) / (1 + z²/10); half = z·sqrt(0.21/10 + z²/400) / (1 + z²/10)
    denominator = 1 + Z * Z / 10
    centre = (0.7 + Z * Z / 20) / denominator
    half = Z * math.sqrt(0.021 + Z * Z / 400) / denominator
    low, high = wilson_interval(7, 10)
    assert low == pytest.approx(centre - half, abs=1e-12)
    assert high == pytest.approx(centre + half, abs=1e-12)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)


def test_wilson_extremes_are_exact_at_the_bounds() -> None:
    assert wilson_interval(0, 10) == (0.0, pytest.approx(Z * Z / (10 + Z * Z)))
    assert wilson_interval(10, 10) == (pytest.approx(10 / (10 + Z * Z)), 1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


@pytest.mark.parametrize(
    ("regressions", "fixes", "expected"),
    [
        (0, 5, 2 / 32),  # 2 * (1/2)^5
        (5, 0, 2 / 32),
        (1, 9, 2 * (1 + 10) / 1024),  # 2 * (C(10,0) + C(10,1)) / 2^10 = 0.021484375
        (0, 6, 2 / 64),
        (2, 2, 1.0),  # capped at 1
        (3, 0, 2 / 8),
        (0, 0, 1.0),  # nothing discordant: no evidence
        (2, 8, 2 * (1 + 10 + 45) / 1024),
    ],
)
def test_mcnemar_exact_small_tables(regressions: int, fixes: int, expected: float) -> None:
    assert mcnemar_exact(regressions, fixes) == pytest.approx(expected, abs=1e-15)


def test_mcnemar_matches_scipy_binomtest() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    for b, c in [(0, 5), (1, 9), (3, 11), (7, 12), (20, 35)]:
        assert mcnemar_exact(b, c) == pytest.approx(scipy_stats.binomtest(b, b + c).pvalue)


def _pass_at_k_by_enumeration(trials: int, passes: int, k: int) -> float:
    outcomes = [True] * passes + [False] * (trials - passes)
    subsets = list(itertools.combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets)


def _pass_hat_k_by_enumeration(trials: int, passes: int, k: int) -> float:
    outcomes = [True] * passes + [False] * (trials - passes)
    subsets = list(itertools.combinations(outcomes, k))
    return sum(all(s) for s in subsets) / len(subsets)


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    assert pass_at_k(5, 1, 2) == pytest.approx(1 - 6 / 10)
    assert pass_hat_k(5, 4, 2) == pytest.approx(6 / 10)
    assert pass_at_k(3, 0, 3) == 0.0
    assert pass_at_k(3, 1, 3) == 1.0
    assert pass_hat_k(3, 3, 3) == 1.0
    assert pass_at_k(4, 2, 1) == pass_hat_k(4, 2, 1) == 0.5


@given(
    st.integers(1, 7).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n)))
)
def test_pass_k_estimators_equal_enumeration(case: tuple[int, int, int]) -> None:
    trials, passes, k = case
    assert pass_at_k(trials, passes, k) == pytest.approx(_pass_at_k_by_enumeration(*case))
    assert pass_hat_k(trials, passes, k) == pytest.approx(_pass_hat_k_by_enumeration(*case))


def test_pass_at_k_rejects_k_above_trials() -> None:
    with pytest.raises(ValueError, match="k=4"):
        pass_at_k(3, 1, 4)


def test_bootstrap_is_reproducible_and_sane() -> None:
    rates = [1.0, 0.0, 1.0, 2 / 3, 1 / 3] * 8
    first = bootstrap_mean_interval(rates)
    assert first == bootstrap_mean_interval(rates)
    mean = sum(rates) / len(rates)
    assert first.low < mean < first.high
    # Normal approximation: mean ± 1.96·sd/√n; the percentile bootstrap lands close to it.
    sd = math.sqrt(sum((r - mean) ** 2 for r in rates) / len(rates))
    assert first.low == pytest.approx(mean - Z * sd / math.sqrt(len(rates)), abs=0.03)
    assert first.high == pytest.approx(mean + Z * sd / math.sqrt(len(rates)), abs=0.03)
    assert bootstrap_mean_interval([0.5] * 10) == (0.5, 0.5)
    assert bootstrap_mean_interval([]) is None


def test_sign_flip_by_hand() -> None:
    # Scaled by 6: steps 3, 6, 2, observed |3 + 6 - 2| = 7. Of the 8 sign assignments,
    # sums 11, 7, -7, -11 reach 7 in absolute value: p = 4/8.
    assert sign_flip_test([Fraction(1, 2), Fraction(1), Fraction(-1, 3)]) == (
        0.5,
        "exact sign-flip",
    )
    assert sign_flip_test([Fraction(0)] * 4) == (1.0, "exact sign-flip")


@settings(max_examples=60)
@given(st.lists(st.fractions(min_value=-1, max_value=1, max_denominator=4), max_size=9))
def test_sign_flip_equals_brute_force(differences: list[Fraction]) -> None:
    observed = abs(sum(differences))
    hits = sum(
        abs(sum(s * d for s, d in zip(signs, differences, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(differences))
    )
    p_value, _ = sign_flip_test(differences)
    assert p_value == pytest.approx(hits / 2 ** len(differences))


@given(st.integers(0, 30), st.integers(0, 30))
def test_sign_flip_on_single_runs_is_mcnemar(regressions: int, fixes: int) -> None:
    differences = [Fraction(-1)] * regressions + [Fraction(1)] * fixes + [Fraction(0)] * 3
    p_value, _ = sign_flip_test(differences)
    assert p_value == pytest.approx(mcnemar_exact(regressions, fixes))


def test_sign_flip_monte_carlo_fallback_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    differences = [Fraction(1, 3)] * 12 + [Fraction(-1, 2)] * 3
    exact, method = sign_flip_test(differences)
    assert method == "exact sign-flip"
    monkeypatch.setattr(stats, "_EXACT_BUDGET", 10)
    estimate, method = sign_flip_test(differences)
    assert method.startswith("Monte Carlo sign-flip")
    assert estimate == pytest.approx(exact, abs=0.01)


def test_min_questions_is_where_significance_becomes_possible() -> None:
    assert min_questions(0.05) == 6  # 2/2^5 = 0.0625 >= 0.05; 2/2^6 = 0.03125 < 0.05
    assert min_questions(0.01) == 8  # 2/2^7 = 0.0156; 2/2^8 = 0.0078


def test_paired_single_conclusions() -> None:
    assert paired_single(0, 5, 5, 0.05).conclusion is Conclusion.TOO_FEW
    assert paired_single(0, 5, 5, 0.05).p_value is None
    improved = paired_single(0, 6, 6, 0.05)
    assert improved.conclusion is Conclusion.IMPROVED
    assert improved.p_value == pytest.approx(0.03125)
    regressed = paired_single(9, 1, 40, 0.05)
    assert regressed.conclusion is Conclusion.REGRESSED
    assert regressed.p_value == pytest.approx(22 / 1024)
    assert paired_single(0, 5, 40, 0.05).conclusion is Conclusion.INCONCLUSIVE  # p = 0.0625
    assert paired_single(0, 0, 40, 0.05).conclusion is Conclusion.INCONCLUSIVE


def test_paired_rates_conclusions() -> None:
    drops = [Fraction(-1, 3)] * 8 + [Fraction(0)] * 10
    result = paired_rates(drops, 0.05)
    assert result.conclusion is Conclusion.REGRESSED
    assert result.p_value == pytest.approx(2 / 2**8)
    assert result.changed == 8 and result.questions == 18
    assert paired_rates(drops[:5], 0.05).conclusion is Conclusion.TOO_FEW
    mixed = [Fraction(1, 3), Fraction(-1, 3)] * 5
    assert paired_rates(mixed, 0.05).conclusion is Conclusion.INCONCLUSIVE


def test_format_p() -> None:
    assert format_p(0.021484375) == "p = 0.0215"
    assert format_p(1.0) == "p = 1"
    assert format_p(0.0004) == "p < 0.001"
