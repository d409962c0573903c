"""Small statistics of one run (docs/runs.md): pass@k, pass^k, the Wilson interval and the
bootstrap interval over questions.

These live with the runs (``sqlbench.rundiff.stats`` holds the comparison statistics: McNemar,
the sign-flip test); a run's ``Accuracy`` (``runs/accuracy.py``) is built from them, so
``sqlbench run`` and ``sqlbench compare`` print the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import comb
from statistics import NormalDist
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np


class Interval(NamedTuple):
    """A confidence interval for a proportion-like value in [0, 1]."""

    low: float
    high: float


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of ``k`` trials drawn from ``n`` (``c`` passing) passes.

    The unbiased estimator of Chen et al. (2021): ``1 - C(n-c, k) / C(n, k)``.

    Example:
        >>> pass_at_k(5, 0, 3), pass_at_k(5, 5, 1), round(pass_at_k(5, 1, 3), 4)
        (0.0, 1.0, 0.6)
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Chance that all ``k`` trials drawn from ``n`` (``c`` passing) pass (pass^k).

    The unbiased estimator ``C(c, k) / C(n, k)`` (Yao et al., tau-bench).

    Example:
        >>> pass_hat_k(5, 5, 3), pass_hat_k(5, 2, 3), pass_hat_k(4, 3, 2)
        (1.0, 0.0, 0.5)
    """
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def is_flaky(rate: float | None) -> bool:
    """A question is flaky when some but not all of its trials pass.

    Example:
        >>> is_flaky(0.4), is_flaky(1.0), is_flaky(0.0), is_flaky(None)
        (True, False, False, False)
    """
    return rate is not None and 0.0 < rate < 1.0


def bootstrap_mean_interval(
    values: Sequence[float], *, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> Interval | None:
    """Percentile bootstrap interval of the mean of per-question values, resampling questions.

    Trials of one question are not independent, so the unit resampled is the question (its pass
    rate), never the trial. The seed is fixed so that a run's interval is reproducible.
    None when there are no values.

    Example:
        >>> bootstrap_mean_interval([1.0, 1.0, 1.0])
        Interval(low=1.0, high=1.0)
        >>> low, high = bootstrap_mean_interval([0.0, 1.0] * 20)
        >>> 0.3 < low < 0.5 < high < 0.7
        True
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    import numpy as np  # here, not with the module: `runs` and `show` read records without it

    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    rng = np.random.default_rng(seed)
    # Resample in blocks so that memory stays bounded for large question sets.
    means: list[np.ndarray] = []
    block = max(1, min(resamples, 2_000_000 // data.size))
    left = resamples
    while left > 0:
        size = min(block, left)
        picks = rng.integers(0, data.size, size=(size, data.size))
        means.append(data[picks].mean(axis=1))
        left -= size
    all_means = np.concatenate(means)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(all_means, [tail, 1.0 - tail])
    return Interval(float(low), float(high))


def wilson_interval(passed: int, total: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a proportion ``passed / total``.

    With ``total == 0`` nothing is known and the interval is the whole ``[0, 1]``.

    Example:
        >>> low, high = wilson_interval(7, 10)
        >>> round(low, 4), round(high, 4)
        (0.3968, 0.8922)
    """
    if total < 0 or passed < 0 or passed > total:
        raise ValueError(f"need 0 <= passed <= total, got {passed}/{total}")
    if total == 0:
        return Interval(0.0, 1.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = passed / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == total else min(1.0, centre + half)
    return Interval(low, high)


def _check(n: int, c: int, k: int) -> None:
    if n < 1 or not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n (got n={n}, c={c}, k={k})")
