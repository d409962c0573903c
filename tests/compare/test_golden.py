"""The golden cases of tests/fixtures/compare/*.yml: verdict, reason fragment, near miss."""

from __future__ import annotations

import time

import pytest
from compare_cases import Case, load_cases

from sqlbench.compare import NearMissKind, compare_results

CASES = load_cases()


def test_case_names_are_unique() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 100


@pytest.mark.parametrize("case", CASES, ids=[f"{c.file[:-4]}:{c.name}" for c in CASES])
def test_golden_case(case: Case) -> None:
    start = time.perf_counter()
    result = compare_results(case.expected, case.actual, **case.options)
    elapsed = time.perf_counter() - start
    assert result.verdict.value == case.verdict, f"{case.why} -- reason: {result.reason}"
    assert result.passed == (case.verdict == "pass")
    if case.reason is not None:
        assert case.reason in result.reason
    if case.near_miss is not None:
        assert result.details.near_miss(NearMissKind(case.near_miss)) is not None, result.reason
    if case.max_seconds is not None:
        assert elapsed < case.max_seconds
    assert result.reason and "\n" not in result.reason
