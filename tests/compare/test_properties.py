"""Invariants of compare_results, checked with hypothesis on generated results.

A result compared with itself passes, and stays a pass after shuffling rows, permuting and
renaming columns, adding extra columns, retyping integers as floats or Decimals, or adding noise
below the tolerance. Changing one cell beyond tolerance, dropping a row or duplicating a row
always makes it fail. ``columns="exact"`` fails extra columns and otherwise decides alike.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlbench.compare import Finding, NearMissKind, compare_results
from sqlbench.verdicts import Verdict

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_KINDS = (
    "int",
    "float",
    "text",
    "date",
    "nullable_int",
    "nullable_text",
    "nullable_float",
    "nullable_date",
    "number_text",
)


@st.composite
def columns(draw: st.DrawFn, rows: int) -> tuple[str, list[Any]]:
    kind = draw(st.sampled_from(_KINDS))
    small = st.integers(-3, 3)
    if kind == "int":
        return kind, draw(st.lists(small, min_size=rows, max_size=rows))
    if kind == "nullable_int":
        return kind, draw(st.lists(st.none() | small, min_size=rows, max_size=rows))
    if kind in ("float", "nullable_float"):
        value = st.sampled_from([0.1, 0.25, 1.5, -2.0, 1e9 + 0.5, 3.0])
        if kind == "nullable_float":
            value = st.none() | value
        return kind, draw(st.lists(value, min_size=rows, max_size=rows))
    if kind in ("date", "nullable_date"):
        day = st.integers(0, 3).map(lambda d: dt.date(2024, 1, 1) + dt.timedelta(days=d))
        if kind == "nullable_date":
            day = st.none() | day
        return kind, draw(st.lists(day, min_size=rows, max_size=rows))
    if kind == "number_text":
        return kind, draw(
            st.lists(st.sampled_from(["1", "2.5", "-3", "10"]), min_size=rows, max_size=rows)
        )
    text = st.sampled_from(["a", "b", "c", "ab"])
    if kind == "nullable_text":
        text = st.none() | text
    return kind, draw(st.lists(text, min_size=rows, max_size=rows))


@st.composite
def frames(draw: st.DrawFn, min_rows: int = 0) -> tuple[pd.DataFrame, list[str]]:
    rows = draw(st.integers(min_rows, 12))
    width = draw(st.integers(1, 5))
    cols = [draw(columns(rows)) for _ in range(width)]
    return _frame(
        [values for _, values in cols], [f"c{k}" for k in range(width)], [kind for kind, _ in cols]
    ), [kind for kind, _ in cols]


def _frame(values: list[list[Any]], names: list[str], kinds: list[str]) -> pd.DataFrame:
    series = []
    for vals, kind in zip(values, kinds, strict=True):
        dtype = "float64" if kind == "float" else ("int64" if kind == "int" else object)
        series.append(pd.Series(vals, dtype=dtype))
    if not series[0].size:
        frame = pd.DataFrame({k: s for k, s in enumerate(series)})
    else:
        frame = pd.concat(series, axis=1, ignore_index=True)
    frame.columns = names
    return frame


def _shuffle(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    order = np.random.default_rng(seed).permutation(len(frame))
    return frame.iloc[order].reset_index(drop=True)


def _permute_rename(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    order = list(np.random.default_rng(seed).permutation(frame.shape[1]))
    out = frame.iloc[:, order].copy()
    out.columns = [f"renamed_{k}" for k in range(frame.shape[1])]
    return out


@SETTINGS
@given(frames(), st.integers(0, 2**32 - 1))
def test_shuffle_permute_rename_keep_a_pass(
    data: tuple[pd.DataFrame, list[str]], seed: int
) -> None:
    frame, _ = data
    assert compare_results(frame, frame).verdict is Verdict.PASS
    changed = _permute_rename(_shuffle(frame, seed), seed + 1)
    result = compare_results(frame, changed)
    assert result.verdict is Verdict.PASS, result.reason


@SETTINGS
@given(frames(), frames(), st.integers(0, 2**32 - 1))
def test_extra_columns_keep_a_pass(
    data: tuple[pd.DataFrame, list[str]], extra: tuple[pd.DataFrame, list[str]], seed: int
) -> None:
    frame, _ = data
    other, _ = extra
    rows = len(frame)
    filler = pd.concat([other] * (rows // max(len(other), 1) + 1))[:rows] if len(other) else None
    if filler is None or len(filler) != rows:
        filler = pd.DataFrame({"e": ["x"] * rows})
    filler = filler.reset_index(drop=True)
    filler.columns = [f"extra_{k}" for k in range(filler.shape[1])]
    combined = pd.concat([filler, frame.reset_index(drop=True)], axis=1)
    actual = _permute_rename(_shuffle(combined, seed), seed + 2)
    extra_count = filler.shape[1]
    result = compare_results(frame, actual, max_extra_columns=extra_count)
    assert result.verdict is Verdict.PASS, result.reason
    # By default, more extra columns than expected ones (and at least 3) is an answer that may
    # list candidates: review, never a pass.
    default = compare_results(frame, actual)
    many = extra_count >= 3 and extra_count > frame.shape[1]
    assert default.verdict is (Verdict.REVIEW if many else Verdict.PASS), default.reason
    # columns: exact fails the same pair, naming exactly the extra columns, as a near miss.
    exact = compare_results(frame, actual, columns="exact")
    assert exact.verdict is Verdict.FAIL, exact.reason
    assert exact.details.problem is Finding.EXTRA_COLUMNS
    assert len(exact.details.extra_columns) == filler.shape[1]
    assert exact.details.near_miss(NearMissKind.COLUMNS_SUPERSET) is not None


@SETTINGS
@given(frames(), st.integers(0, 2**32 - 1), st.booleans(), st.data())
def test_exact_decides_like_superset_on_equal_column_counts(
    data: tuple[pd.DataFrame, list[str]], seed: int, change: bool, pick: st.DataObject
) -> None:
    frame, kinds = data
    changed = frame.copy()
    if change and len(frame):
        col = pick.draw(st.integers(0, frame.shape[1] - 1))
        changed.iloc[pick.draw(st.integers(0, len(frame) - 1)), col] = _far_value(kinds[col])
    actual = _permute_rename(_shuffle(changed, seed), seed + 5)
    loose = compare_results(frame, actual)
    exact = compare_results(frame, actual, columns="exact")
    assert (exact.verdict, exact.reason) == (loose.verdict, loose.reason)


@SETTINGS
@given(frames(min_rows=1), st.integers(0, 2**32 - 1), st.data())
def test_changing_one_cell_fails(
    data: tuple[pd.DataFrame, list[str]], seed: int, pick: st.DataObject
) -> None:
    frame, kinds = data
    row = pick.draw(st.integers(0, len(frame) - 1))
    col = pick.draw(st.integers(0, frame.shape[1] - 1))
    changed = frame.copy()
    changed.iloc[row, col] = _far_value(kinds[col])
    result = compare_results(frame, _permute_rename(_shuffle(changed, seed), seed + 3))
    assert result.verdict is Verdict.FAIL, result.reason


@SETTINGS
@given(
    frames(min_rows=1),
    st.lists(st.tuples(st.integers(0, 11), st.integers(0, 4), st.booleans()), max_size=6),
    st.sampled_from(["bag", "set"]),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1),
)
def test_fail_reason_ignores_agent_row_order(
    data: tuple[pd.DataFrame, list[str]],
    edits: list[tuple[int, int, bool]],
    rows: str,
    seed: int,
    other_seed: int,
) -> None:
    # The agent's rows in any order give the same reason, example rows included (order: ignore).
    frame, kinds = data
    changed = frame.copy()
    for row, col, far in edits:
        row, col = row % len(frame), col % frame.shape[1]
        value = _far_value(kinds[col]) if far else frame.iloc[(row + 1) % len(frame), col]
        changed.iloc[row, col] = value
    if edits and edits[0][2]:
        changed = pd.concat([changed, changed.iloc[[0]]]).reset_index(drop=True)
    first = compare_results(frame, _shuffle(changed, seed), rows=rows)
    if first.verdict is not Verdict.FAIL:
        return
    second = compare_results(frame, _shuffle(changed, other_seed), rows=rows)
    assert second.reason == first.reason


_NEAR = st.sampled_from([1.0, 1.0 + 6e-10, 1.0 + 1.3e-9, 2.0, 2.0 + 8e-10])
"""Numbers where closeness within abs_tol=1e-9 chains (1.0 ~ 1.0+6e-10 ~ 1.0+1.3e-9)."""


@pytest.mark.slow
@settings(SETTINGS, max_examples=150)
@given(
    st.lists(st.tuples(st.sampled_from("ab"), _NEAR, _NEAR), min_size=2, max_size=9),
    st.lists(st.tuples(st.sampled_from("ab"), _NEAR, _NEAR), min_size=2, max_size=9),
    st.integers(0, 2**32 - 1),
)
def test_fail_reason_ignores_agent_row_order_within_tolerance(
    expected_rows: list[tuple[str, float, float]],
    actual_rows: list[tuple[str, float, float]],
    seed: int,
) -> None:
    # Two tolerant columns: rows pair by maximum matching, whose left-overs are the examples.
    expected = pd.DataFrame(expected_rows, columns=["g", "x", "y"])
    actual = pd.DataFrame(actual_rows, columns=["g", "x", "y"])
    first = compare_results(expected, actual, abs_tol=1e-9, rel_tol=0.0)
    if first.verdict is not Verdict.FAIL:
        return
    for shuffle in range(4):
        again = compare_results(expected, _shuffle(actual, seed + shuffle), abs_tol=1e-9, rel_tol=0)
        assert again.reason == first.reason


def test_fail_example_pairs_rows_by_values_not_positions() -> None:
    expected = pd.DataFrame({"region": ["APAC", "EMEA", "LATAM", "NA"], "n": [91, 133, 40, 200]})
    actual = pd.DataFrame({"region": ["APAC", "EMEA", "LATAM", "NA"], "n": [120, 177, 55, 260]})
    for order in ([0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]):
        result = compare_results(expected, actual.iloc[order])
        assert "e.g. expected ('APAC', 91), got ('APAC', 120)" in result.reason
        assert result.details.actual_examples == ("('APAC', 120)", "('EMEA', 177)", "('LATAM', 55)")


def _far_value(kind: str) -> Any:
    """A value of the column's type that appears nowhere in generated results."""
    if kind in ("int", "nullable_int"):
        return 1_000_003
    if kind in ("float", "nullable_float"):
        return 7.77e7
    if kind in ("date", "nullable_date"):
        return dt.date(1999, 12, 31)
    if kind == "number_text":
        return "777"
    return "zz-changed"


@SETTINGS
@given(frames(min_rows=1), st.integers(0, 2**32 - 1), st.data())
def test_dropping_or_duplicating_a_row_fails(
    data: tuple[pd.DataFrame, list[str]], seed: int, pick: st.DataObject
) -> None:
    frame, _ = data
    row = pick.draw(st.integers(0, len(frame) - 1))
    dropped = frame.drop(index=row)
    doubled = pd.concat([frame, frame.iloc[[row]]])
    for changed in (dropped, doubled):
        result = compare_results(frame, _permute_rename(_shuffle(changed, seed), seed + 4))
        assert result.verdict is Verdict.FAIL, result.reason


@SETTINGS
@given(
    st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=20),
    st.sampled_from(["float", "decimal", "decimal_scaled", "text"]),
)
def test_integers_equal_across_types(values: list[int], retype: str) -> None:
    expected = pd.DataFrame({"n": pd.Series(values, dtype="int64")})
    if retype == "float":
        converted: list[Any] = [float(v) for v in values]
    elif retype == "decimal":
        converted = [decimal.Decimal(v) for v in values]
    elif retype == "decimal_scaled":
        converted = [decimal.Decimal(v).quantize(decimal.Decimal("0.01")) for v in values]
    else:
        converted = [str(v) for v in values]
    actual = pd.DataFrame({"m": pd.Series(converted[::-1], dtype=object)})
    result = compare_results(expected, actual)
    assert result.verdict is Verdict.PASS, result.reason


_HUGE = st.integers(2**53 - 4, 2**53 + 8) | st.integers(-(2**70), 2**70)


@SETTINGS
@given(st.lists(st.tuples(_HUGE, _HUGE), min_size=1, max_size=8), st.sampled_from(["int", "text"]))
def test_huge_integers_at_zero_tolerance_compare_exactly(
    pairs: list[tuple[int, int]], other: str
) -> None:
    """An integer against a double (or an integer's text) matches exactly when equal by value,
    however close their float64s; each pair's first value shares its row with a label."""
    expected = pd.DataFrame(
        {"k": range(len(pairs)), "n": pd.Series([a for a, _ in pairs], dtype=object)}
    )
    if other == "int":
        values: list[Any] = [float(b) for _, b in pairs]
        equal = all(decimal.Decimal(a) == decimal.Decimal(float(b)) for a, b in pairs)
    else:
        values = [str(b) for _, b in pairs]
        equal = all(a == b for a, b in pairs)
    actual = pd.DataFrame({"k": range(len(pairs)), "n": values})
    result = compare_results(expected, actual, rel_tol=0, abs_tol=0)
    assert result.passed is equal, result.reason


@SETTINGS
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30),
    st.integers(0, 2**32 - 1),
)
def test_noise_below_tolerance_keeps_a_pass(values: list[float], seed: int) -> None:
    rng = np.random.default_rng(seed)
    noisy = [v * (1 + rng.uniform(-1e-12, 1e-12)) for v in values]
    expected = pd.DataFrame({"k": range(len(values)), "v": values})
    actual = _shuffle(pd.DataFrame({"k": range(len(values)), "v": noisy}), seed)
    result = compare_results(expected, actual, abs_tol=1e-9, rel_tol=1e-9)
    assert result.verdict is Verdict.PASS, result.reason


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 2), st.sampled_from("abcd")), min_size=1, max_size=15),
    st.integers(0, 2**32 - 1),
)
def test_strict_order_lets_ties_permute(rows: list[tuple[int, str]], seed: int) -> None:
    ordered = sorted(rows, key=lambda r: r[0])
    expected = pd.DataFrame(ordered, columns=["k", "n"])
    rng = np.random.default_rng(seed)
    shuffled = (
        expected.assign(_r=rng.random(len(expected)))
        .sort_values(["k", "_r"])
        .drop(columns="_r")
        .reset_index(drop=True)
    )
    result = compare_results(
        expected, shuffled, order="auto", expected_sql="SELECT k, n FROM t ORDER BY k"
    )
    assert result.verdict is Verdict.PASS, result.reason
