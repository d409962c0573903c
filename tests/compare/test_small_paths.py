"""The small-result paths decide exactly as the general (Arrow compute) paths do.

Small text columns are classified (plain numbers? ISO-8601 instants?) with Python's ``re``
instead of Arrow's regex kernels (``arrowcols.SMALL_TEXT``), and small text/binary columns get
their dictionary codes in Python instead of Arrow's dictionary encoding
(``views.SMALL_DICTIONARY``), and the share of values two small columns hold in common (a
failure's closest columns) is counted in Python (``nearmiss.SMALL_COUNTS``), and the distinct
rows of a small result (``rows: set``) are found with a dict (``rows.SMALL_DISTINCT``) and the
rows without an equal partner with a set (``rows.SMALL_SET``). The general path also finds every
set of distinct rows afresh, where the matchers on one view set share them
(``ViewSet.distinct_rows``). Each test runs the same input through both (the general path by
setting the thresholds below every input) and asserts equal columns, codes and comparisons:
every verdict, reason, near miss, mapping and difference detail.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from compare_cases import load_cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sqlbench.compare.arrowcols as arrowcols
import sqlbench.compare.match as match
import sqlbench.compare.nearmiss as nearmiss
import sqlbench.compare.rows as rows
import sqlbench.compare.views as views
from sqlbench.compare import Comparison, compare_results
from sqlbench.compare.arrowcols import from_arrow
from sqlbench.compare.columns import Column
from sqlbench.compare.normalize import normalize
from sqlbench.compare.views import Domain, ResultRole, View, ViewSet

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@contextmanager
def general_paths() -> Iterator[None]:
    """Every input takes the Arrow compute paths."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrowcols, "SMALL_TEXT", -1)
        patch.setattr(views, "SMALL_DICTIONARY", -1)
        patch.setattr(nearmiss, "SMALL_COUNTS", -1)
        patch.setattr(rows, "SMALL_DISTINCT", -1)
        patch.setattr(rows, "SMALL_SET", -1)
        patch.setattr(match.Matcher, "_distinct_rows", _fresh_distinct_rows)
        yield


def _fresh_distinct_rows(self: match.Matcher, views_: list[View], count: int) -> np.ndarray:
    """A matcher's distinct rows computed afresh for each match, in the views' order."""
    return rows._distinct_rows(views_, count)


# Characters that sit at the edges of the number and ISO-8601 patterns: digits, signs, the
# decimal point, date/time separators, a zone, a final newline (Python's ``$`` would accept
# it, RE2's does not), non-ASCII digits and letters.
_EDGE = st.text(alphabet="0123456789-+.:T Z\n٣é", max_size=12)
_SHAPED = st.sampled_from(
    [
        "0",
        "007",
        "-0",
        "1.5",
        "1.",
        ".5",
        "-12.250",
        "12\n",
        "1e5",
        "٣",
        "9223372036854775808",
        "2024-01-02",
        "2024-01-02 03:04",
        "2024-01-02T03:04:05.123456789Z",
        "2024-01-02T03:04:05+02:00",
        "2024-01-02T03:04:05.1234567",
        "2024-13-40",
        "2024-01-02\n",
        "",
        "x",
    ]
)
_TEXT = st.one_of(_EDGE, _SHAPED)


def _same_column(a: Column, b: Column) -> None:
    assert (a.kind, a.name, a.position) == (b.kind, b.name, b.position)
    np.testing.assert_array_equal(a.null, b.null)
    for name in ("ints", "floats_", "other"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype, name
            np.testing.assert_array_equal(x, y)
    assert (a.instants is None) == (b.instants is None)
    if a.instants is not None and b.instants is not None:
        np.testing.assert_array_equal(a.instants.us, b.instants.us)
        assert (a.instants.ns is None) == (b.instants.ns is None)
        if a.instants.ns is not None:
            np.testing.assert_array_equal(a.instants.ns, b.instants.ns)
    assert a.exact_ == b.exact_


@SETTINGS
@given(st.lists(st.none() | _TEXT, min_size=1, max_size=40))
def test_text_columns_are_classified_alike(values: list[str | None]) -> None:
    arr = pa.array(values, pa.string())
    fast = from_arrow(0, "c", arr)
    with general_paths():
        general = from_arrow(0, "c", arr)
    _same_column(fast, general)


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (["1", "22", None], "int"),
        (["1", "2.5"], "text"),  # numeric view (floats), kind stays text
        (["12\n"], "text"),
        (["2024-01-02", "2024-01-03T04:05"], "text"),
        (["007"], "text"),
    ],
)
def test_shaped_text_columns(values: list[str | None], kind: str) -> None:
    fast = from_arrow(0, "c", pa.array(values, pa.string()))
    with general_paths():
        general = from_arrow(0, "c", pa.array(values, pa.string()))
    _same_column(fast, general)
    if values == ["1", "22", None]:
        assert fast.ints is not None
    if values == ["12\n"]:
        assert fast.ints is None and fast.floats_ is None  # RE2's $ is the end of the text


def _codes(tables: tuple[pa.Table, pa.Table], domain: Domain) -> dict[Any, np.ndarray]:
    e, a = tables
    return ViewSet(normalize(e), normalize(a), (e.num_rows, a.num_rows))._dictionary(domain)


def _chunked(values: list[Any], typ: pa.DataType, cut: int) -> pa.ChunkedArray:
    cut = min(cut, len(values))
    return pa.chunked_array([pa.array(values[:cut], typ), pa.array(values[cut:], typ)], typ)


@SETTINGS
@given(
    st.lists(
        st.lists(st.none() | st.sampled_from(["a", "b", "ab", "é", ""]), min_size=3, max_size=3),
        min_size=1,
        max_size=3,
    ),
    st.lists(
        st.lists(st.none() | st.sampled_from(["b", "c", "a", ""]), min_size=5, max_size=5),
        min_size=1,
        max_size=3,
    ),
    st.integers(0, 5),
)
def test_dictionary_codes_are_alike(
    expected: list[list[str | None]], actual: list[list[str | None]], cut: int
) -> None:
    e = pa.table({f"e{k}": pa.array(col, pa.string()) for k, col in enumerate(expected)})
    a = pa.table({f"a{k}": _chunked(col, pa.string(), cut) for k, col in enumerate(actual)})
    b_e = pa.table({"b": pa.array([None if v is None else v.encode() for v in expected[0]])})
    b_a = pa.table({"b": pa.array([None if v is None else v.encode() for v in actual[0]])})
    cases = [
        ((e, a), Domain.TEXT, [*expected, *actual]),
        ((b_e, b_a), Domain.BYTES, [expected[0], actual[0]]),
    ]
    for tables, domain, cols in cases:
        if all(v is None for col in cols for v in col):
            continue  # no text column (all-NULL columns are of kind null)
        fast = _codes(tables, domain)
        with general_paths():
            general = _codes(tables, domain)
        assert fast.keys() == general.keys()
        for key, codes in fast.items():
            assert codes.dtype == general[key].dtype
            np.testing.assert_array_equal(codes, general[key])


def _both(expected: Any, actual: Any, **options: Any) -> tuple[Comparison, Comparison]:
    fast = compare_results(expected, actual, **options)
    with general_paths():
        general = compare_results(expected, actual, **options)
    return fast, general


@pytest.mark.parametrize("case", load_cases(), ids=lambda c: f"{c.file[:-4]}:{c.name}")
def test_golden_cases_decide_alike(case: Any) -> None:
    fast, general = _both(case.expected, case.actual, **case.options)
    assert repr(fast) == repr(general)


_CELL = st.none() | st.sampled_from(["1", "2", "2.5", "-3", "a", "b", "2024-01-02", "2024-01-03"])


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[pa.Table, pa.Table]:
    rows = draw(st.integers(0, 8))
    width = draw(st.integers(1, 3))
    cols = [draw(st.lists(_CELL, min_size=rows, max_size=rows)) for _ in range(width)]
    expected = pa.table({f"c{k}": pa.array(col, pa.string()) for k, col in enumerate(cols)})
    actual_cols = [list(col) for col in cols]
    if draw(st.booleans()) and rows:  # change one cell
        k, r = draw(st.integers(0, width - 1)), draw(st.integers(0, rows - 1))
        actual_cols[k][r] = draw(_CELL)
    perm = draw(st.permutations(range(rows)))
    actual_cols = [[col[r] for r in perm] for col in actual_cols]
    order = draw(st.permutations(range(width)))
    names = [f"c{k}" if draw(st.booleans()) else f"x{k}" for k in order]
    arrays = [pa.array(actual_cols[k], pa.string()) for k in order]
    if draw(st.booleans()):  # an agent column of numbers instead of numeric text
        arrays.append(pa.array(list(range(rows)), pa.int64()))
        names.append("extra")
    if draw(st.booleans()):  # a float column on both sides, within or past tolerance
        floats = draw(
            st.lists(
                st.none() | st.sampled_from([0.1, 1.5, 2e6, -3.25]), min_size=rows, max_size=rows
            )
        )
        scale = draw(st.sampled_from([1.0, 1 + 1e-12, 1.001, 100.0]))
        expected = expected.append_column("f", pa.array(floats, pa.float64()))
        moved = [None if floats[r] is None else floats[r] * scale for r in perm]
        arrays.append(pa.array(moved, pa.float64()))
        names.append("g")
    return expected, pa.Table.from_arrays(arrays, names=names)


@SETTINGS
@given(_pairs(), st.sampled_from(["ignore", "strict"]), st.sampled_from(["bag", "set"]))
def test_generated_comparisons_decide_alike(
    pair: tuple[pa.Table, pa.Table], order: str, rows: str
) -> None:
    expected, actual = pair
    for columns in ("superset", "exact"):
        fast, general = _both(expected, actual, order=order, rows=rows, columns=columns)
        assert repr(fast) == repr(general)


def test_a_few_huge_values_stay_in_arrow() -> None:
    """Few values but many bytes: the Python shortcuts would copy them (up to 4 bytes a
    character), so they take the Arrow path, which reads them in place."""
    huge = pa.array(["x" * 50_000, "y" * 50_000], pa.large_string())
    assert arrowcols._small_texts(huge) is None
    assert arrowcols._small_texts(huge.slice(0, 1)) is None  # its buffers are still large
    assert arrowcols._small_texts(pa.array(["1", None, "2"], pa.large_string())) == ["1", "2"]
    columns = normalize(pa.table({"t": huge}))
    viewset = ViewSet(columns, columns, (2, 2))
    assert viewset._small_dictionary([((ResultRole.EXPECTED, 0), huge)]) is None
    few = pa.array(["a", "b"], pa.large_string())
    assert viewset._small_dictionary([((ResultRole.EXPECTED, 0), few)]) is not None
    fast = from_arrow(0, "t", huge)
    with general_paths():
        general = from_arrow(0, "t", huge)
    _same_column(fast, general)


_CODE = st.sampled_from([0, 1, 2, -1, 2**62, -(2**63)])


@SETTINGS
@given(
    st.integers(0, 3).flatmap(
        lambda width: st.integers(0, 12).flatmap(
            lambda count: st.lists(
                st.tuples(
                    st.lists(_CODE, min_size=count, max_size=count),
                    st.lists(st.booleans(), min_size=count, max_size=count),
                ),
                min_size=width,
                max_size=width,
            ).map(lambda columns: (count, columns))
        )
    ),
    st.sampled_from([np.int64, np.int32, np.uint64]),
)
def test_distinct_rows_are_alike(drawn: tuple[int, list[Any]], dtype: Any) -> None:
    # Rows equal in codes and NULL flags; codes under NULL count (as the exact ids compare
    # them); no column at all (every row the same); int32 codes (dictionaries).
    count, columns = drawn
    views_ = [
        View(np.array(codes, dtype=np.int64).astype(dtype), np.array(null, dtype=bool))
        for codes, null in columns
    ]
    fast = rows._distinct_rows(views_, count)
    with general_paths():
        general = rows._distinct_rows(views_, count)
    assert fast.dtype == general.dtype
    np.testing.assert_array_equal(fast, general)


def test_distinct_rows_of_a_small_result_take_the_python_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    view = View(np.array([3, 3, 1, 3]), np.array([False, False, False, True]))
    monkeypatch.setattr(rows, "row_hashes", None)  # the general path would call it
    assert rows._distinct_rows([view], 4).tolist() == [0, 2, 3]
    floats = View(np.array([0.0, -0.0]), np.array([False, False]))  # float codes: general path
    with pytest.raises(TypeError):
        rows._distinct_rows([floats], 2)


def test_mappings_of_one_view_set_share_their_distinct_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # rows: set finds each side's distinct rows for every mapping it matches; the same columns
    # in another order (another mapping, another matcher) have the same distinct rows.
    found: list[int] = []
    original = match.distinct_rows

    def counted(views_: list[View], count: int) -> np.ndarray:
        found.append(count)
        return original(views_, count)

    monkeypatch.setattr(match, "distinct_rows", counted)
    expected = normalize(pa.table({"a": [1, 1, 2, 3], "b": [4, 4, 5, 6]}))
    actual = normalize(pa.table({"x": [6, 5, 4], "y": [3, 2, 1]}))
    viewset = ViewSet(expected, actual, (4, 3))
    tol = views.Tolerance(1e-9, 1e-9)
    first = match.Matcher(viewset, match.Criteria(distinct=True, tol=tol))
    straight, crossed = first.rows((0, 1)), first.rows((1, 0))
    again = match.Matcher(viewset, match.Criteria(distinct=True, tol=tol)).rows((1, 0))
    assert found == [4, 3]
    assert not straight.ok and crossed.ok and again.ok
    with general_paths():
        assert repr(match.Matcher(viewset, first.criteria).rows((1, 0))) == repr(crossed)


_SMALL_CODE = st.sampled_from([0, 1, 2, -(2**63)])


@SETTINGS
@given(
    st.integers(0, 3).flatmap(
        lambda width: st.tuples(st.integers(0, 8), st.integers(0, 8)).flatmap(
            lambda counts: st.tuples(
                st.just(counts),
                st.lists(
                    st.tuples(
                        *[
                            st.tuples(
                                st.lists(_SMALL_CODE, min_size=n, max_size=n),
                                st.lists(st.booleans(), min_size=n, max_size=n),
                            )
                            for n in counts
                        ]
                    ),
                    min_size=width,
                    max_size=width,
                ),
            )
        )
    ),
)
def test_set_matches_are_alike(drawn: tuple[tuple[int, int], list[Any]]) -> None:
    # rows: set on exactly compared columns: duplicate rows on a side, rows equal but for a
    # NULL flag or a code under NULL, no column at all, an empty side.
    (n_e, n_a), columns = drawn
    pairs = [
        rows.Pair(View(np.array(ce, dtype=np.int64), np.array(ne, dtype=bool)),
                  View(np.array(ca, dtype=np.int64), np.array(na, dtype=bool)), False)
        for (ce, ne), (ca, na) in columns
    ]  # fmt: skip
    tol = views.Tolerance(1e-9, 1e-9)
    fast = rows.match_rows(pairs, n_e, n_a, distinct=True, tol=tol)
    with general_paths():
        general = rows.match_rows(pairs, n_e, n_a, distinct=True, tol=tol)
    assert repr(fast) == repr(general)
    assert fast.expected_unmatched.dtype == general.expected_unmatched.dtype


def test_a_small_set_match_takes_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows, "exact_unmatched", None)  # the general path would call it
    pair = rows.Pair(
        View(np.array([1, 2, 2]), np.zeros(3, dtype=bool)),
        View(np.array([2, 3]), np.zeros(2, dtype=bool)),
        False,
    )
    match_ = rows.match_rows([pair], 3, 2, distinct=True, tol=views.Tolerance(0, 0))
    assert (match_.expected_unmatched.tolist(), match_.actual_unmatched.tolist()) == ([0], [1])
