"""compare_results as a library function: options, details, inputs, and the hash safety net."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import time

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import sqlbench
import sqlbench.compare.views as views_module
from sqlbench.compare import (
    DEFAULT_BUDGET,
    CompareOptionError,
    Comparison,
    Finding,
    InputError,
    NearMissKind,
    compare_results,
)
from sqlbench.engines.base import ResultSet
from sqlbench.errors import SqlbenchError
from sqlbench.verdicts import Verdict

GOLD = pd.DataFrame({"name": ["alice", "bob", "carol"], "total": [100, 250, 375]})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"order": "sideways"}, "order must be one of ignore, strict, auto, not 'sideways'"),
        ({"rows": "list"}, "rows must be one of bag, set, not 'list'"),
        ({"columns": "strict"}, "columns must be one of superset, exact, not 'strict'"),
        ({"columns": None}, "columns must be one of superset, exact, not None"),
        ({"abs_tol": -1.0}, "abs_tol must be a finite number at least 0, not -1.0"),
        ({"rel_tol": float("nan")}, "rel_tol must be a finite number at least 0 and below 1"),
        ({"abs_tol": float("inf")}, "abs_tol must be a finite number at least 0, not inf"),
        ({"abs_tol": True}, "abs_tol must be a finite number at least 0, not True"),
        ({"rel_tol": "0.1"}, "rel_tol must be a finite number at least 0 and below 1"),
        ({"rel_tol": 1.0}, "rel_tol must be a finite number at least 0 and below 1, not 1.0"),
        ({"budget": 0}, "budget must be a positive integer"),
        ({"budget": True}, "budget must be a positive integer"),
        ({"order": "auto"}, "order='auto' needs expected_sql="),
        ({"dialect": "nosuchdb", "expected_sql": "SELECT 1"}, "unknown SQL dialect 'nosuchdb'"),
    ],
)
def test_bad_options_raise_one_clear_error(options: dict[str, object], message: str) -> None:
    with pytest.raises(CompareOptionError) as caught:
        compare_results(GOLD, GOLD, **options)  # type: ignore[arg-type]
    assert message in str(caught.value)
    assert isinstance(caught.value, SqlbenchError) and isinstance(caught.value, ValueError)


def test_bad_input_type_raises() -> None:
    with pytest.raises(InputError, match="pandas DataFrames or pyarrow Tables, not list"):
        compare_results(GOLD, [[1, 2]])  # type: ignore[arg-type]


def test_reexported_from_sqlbench() -> None:
    assert sqlbench.compare_results is compare_results
    assert sqlbench.Comparison is Comparison


def test_pass_details_give_the_mapping_used() -> None:
    actual = pd.DataFrame(
        {"t": [250, 100, 375], "extra": [0, 0, 0], "n": ["bob", "alice", "carol"]}
    )
    result = compare_results(GOLD, actual)
    assert result.passed and result.verdict is Verdict.PASS
    d = result.details
    assert d.column_mapping == {0: 2, 1: 0}
    assert d.mapping_matches and d.problem is Finding.NONE
    assert (d.expected_rows, d.actual_rows) == (3, 3)
    assert d.expected_unmatched_rows == () and d.actual_unmatched_rows == ()
    assert d.expected_kinds == ("text", "int") and d.actual_kinds == ("int", "int", "text")
    assert d.budget == DEFAULT_BUDGET and d.mappings_tried >= 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.verdict = Verdict.FAIL  # type: ignore[misc]


def test_columns_option_is_recorded_and_exact_names_the_extra_columns() -> None:
    actual = pd.DataFrame(
        {"id": [2, 1, 3], "t": [250, 100, 375], "n": ["bob", "alice", "carol"], "x": [0, 0, 0]}
    )
    loose = compare_results(GOLD, actual)
    assert loose.passed and loose.details.columns == "superset"
    assert loose.details.extra_columns == () and loose.details.superset_problem is None
    strict = compare_results(GOLD, actual, columns="exact")
    d = strict.details
    assert strict.verdict is Verdict.FAIL and d.columns == "exact"
    assert d.problem is Finding.EXTRA_COLUMNS and d.superset_problem is Finding.NONE
    assert d.extra_columns == (0, 3) and d.column_mapping == {0: 2, 1: 1}
    assert d.near_miss(NearMissKind.COLUMNS_SUPERSET) is not None
    assert strict.reason == (
        "the agent returned 4 columns, the ground truth 2 (columns: exact): extra agent "
        "columns 'id', 'x'; near miss: would pass with columns: superset"
    )
    same_width = compare_results(GOLD, actual[["t", "n"]], columns="exact")
    assert same_width.passed and same_width.details.columns == "exact"


def test_exact_extra_columns_drop_near_misses_that_would_not_pass_alone() -> None:
    actual = GOLD.assign(total=[100.001, 250, 375], note=["a", "b", "c"])
    assert compare_results(GOLD, actual).details.near_miss(NearMissKind.LOOSER_TOLERANCE)
    d = compare_results(GOLD, actual, columns="exact").details
    assert d.problem is Finding.EXTRA_COLUMNS and d.superset_problem is Finding.NO_PARTNER
    assert d.near_misses == ()  # rel_tol alone would not pass: the extra column still fails


def test_unmatched_rows_point_at_the_differing_rows() -> None:
    actual = GOLD.copy()
    actual.loc[1, "total"] = 251
    d = compare_results(GOLD, actual.iloc[::-1].reset_index(drop=True)).details
    assert d.expected_unmatched_rows == (1,)
    assert d.actual_unmatched_rows == (1,)  # bob is row 1 of the reversed frame too
    assert d.column_mapping == {0: 0, 1: 1}
    assert d.expected_examples == ("('bob', 250)",) and d.actual_examples == ("('bob', 251)",)


def test_unmatched_rows_are_capped_but_counted() -> None:
    expected = pd.DataFrame({"k": range(100), "v": range(100)})
    actual = expected.assign(v=[v + (1 if k % 2 else 0) for k, v in enumerate(range(100))])
    d = compare_results(expected, actual).details
    assert len(d.expected_unmatched_rows) == 20 and d.expected_unmatched_count == 50
    assert d.expected_unmatched_rows[:3] == (1, 3, 5)


def test_name_consistent_mapping_is_reported() -> None:
    expected = pd.DataFrame({"lo": [5, 7], "hi": [5, 7]})
    actual = pd.DataFrame({"hi": [5, 7], "lo": [5, 7]})
    d = compare_results(expected, actual).details
    assert d.column_mapping == {0: 1, 1: 0}


def test_budget_is_counted_not_timed() -> None:
    size = 10
    grid = [[(i * 3 + j) % 10 for j in range(size)] for i in range(size)]
    expected = pd.DataFrame(grid)
    swapped = [row[:] for row in grid]
    swapped[0][0], swapped[1][0] = swapped[1][0], swapped[0][0]
    actual = pd.DataFrame(swapped)
    first = compare_results(expected, actual, budget=7)
    second = compare_results(expected, actual, budget=7)
    assert first.verdict is Verdict.REVIEW and first.details.problem is Finding.BUDGET
    assert first.details.mappings_tried == second.details.mappings_tried == 7
    assert len(first.details.column_mapping) == 10  # the best mapping found by similarity
    assert compare_results(expected, actual).verdict is Verdict.FAIL


def test_hash_collisions_never_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a hash that collides on everything, verdicts come from the codes themselves."""

    def colliding(codes: np.ndarray, null: np.ndarray | None = None) -> np.ndarray:
        return np.zeros(len(codes), dtype=np.uint64)

    monkeypatch.setattr(views_module, "mix", colliding)
    shuffled = GOLD.iloc[[2, 0, 1]].reset_index(drop=True)
    assert compare_results(GOLD, shuffled).verdict is Verdict.PASS
    wrong = GOLD.assign(total=[100, 375, 250])
    result = compare_results(GOLD, wrong)
    assert result.verdict is Verdict.FAIL
    assert result.details.expected_unmatched_count == 2
    doubled = pd.DataFrame({"n": ["a", "a", "b"]})
    assert compare_results(doubled, doubled.iloc[::-1]).verdict is Verdict.PASS
    assert compare_results(doubled, pd.DataFrame({"n": ["a", "b", "b"]})).verdict is Verdict.FAIL
    assert compare_results(doubled, pd.DataFrame({"n": ["b", "a"]}), rows="set").passed


def test_wide_results_are_fast() -> None:
    rng = np.random.default_rng(7)
    expected = pd.DataFrame(rng.integers(0, 3, size=(2000, 40)))
    order = rng.permutation(40)
    actual = expected.iloc[rng.permutation(2000), order].reset_index(drop=True)
    actual.columns = [f"x{k}" for k in range(40)]
    start = time.perf_counter()
    result = compare_results(expected, actual)
    assert result.passed
    assert result.details.column_mapping == {int(c): k for k, c in enumerate(order)}
    assert time.perf_counter() - start < 3.0


def test_arrow_tables_and_record_batches() -> None:
    table = pa.table({"name": ["alice", "bob"], "total": [1.5, 2.5]})
    batch = pa.record_batch([pa.array([2.5, 1.5]), pa.array(["bob", "alice"])], ["t", "n"])
    assert compare_results(table, batch).passed
    assert compare_results(table.to_pandas(), table).passed


def _duckdb(sql: str) -> pa.Table:
    con = duckdb.connect()
    try:
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


def test_duckdb_results_keep_their_types() -> None:
    expected = _duckdb(
        "SELECT 'x' AS name, 'y' AS name, 1.50::DECIMAL(10,2) AS amount, DATE '2024-01-01' AS d,"
        " TIMESTAMPTZ '2024-01-01 10:00:00+05' AS ts, 3::HUGEINT AS h"
    )
    actual = _duckdb(
        "SELECT 3 AS h, TIMESTAMP '2024-01-01 05:00:00' AS ts, '2024-01-01' AS d, 1.5::DOUBLE AS"
        " amount, 'y' AS b, 'x' AS a"
    )
    assert expected.column_names[:2] == ["name", "name"]
    result = compare_results(expected, actual)
    assert result.passed, result.reason
    assert result.details.column_mapping == {0: 5, 1: 4, 2: 3, 3: 2, 4: 1, 5: 0}
    assert compare_results(ResultSet(expected).to_pandas(), ResultSet(actual).to_pandas()).passed


def test_duplicate_names_from_duckdb_swapped_values_fail_when_rows_differ() -> None:
    expected = _duckdb("SELECT * FROM (VALUES ('a', 'b'), ('c', 'd')) t(name, name2)")
    actual = _duckdb("SELECT * FROM (VALUES ('a', 'd'), ('c', 'b')) t(name, name2)")
    assert compare_results(expected, actual).verdict is Verdict.FAIL


def test_decimal_objects_and_dates_from_to_pandas() -> None:
    expected = pd.DataFrame(
        {
            "amt": [decimal.Decimal("1.10"), decimal.Decimal("2.00")],
            "day": [dt.date(2024, 1, 1), dt.date(2024, 1, 2)],
        }
    )
    actual = pd.DataFrame({"day": ["2024-01-02", "2024-01-01"], "amt": [2, 1.1]})
    assert compare_results(expected, actual).passed


def test_reason_is_one_line_and_names_the_problem() -> None:
    result = compare_results(GOLD, GOLD.iloc[:2])
    assert (
        result.reason == "3 rows expected, 2 returned, e.g. expected row ('carol', 375) is missing"
    )
    assert result.details.problem is Finding.ROW_COUNT


def test_chunked_arrow_text_with_nulls() -> None:
    first = pa.table({"t": ["a", None, "b"], "n": [1, 2, 3]})
    second = pa.table({"t": ["c", "a", None], "n": [4, 5, 6]})
    expected = pa.concat_tables([first, second])
    assert expected.column("t").num_chunks == 2
    actual = pd.DataFrame({"n": [6, 5, 4, 3, 2, 1], "t": [None, "a", "c", "b", None, "a"]})
    assert compare_results(expected, actual).passed
    wrong = actual.assign(t=[None, "a", "c", "b", "x", "a"])
    assert compare_results(expected, wrong).verdict is Verdict.FAIL


def test_results_without_columns_compare_row_counts() -> None:
    empty_two = pd.DataFrame(index=range(2))
    assert compare_results(empty_two, pd.DataFrame({"x": [1, 2]})).passed
    assert compare_results(empty_two, pd.DataFrame({"x": [1, 2, 3]})).verdict is Verdict.FAIL


def test_hash_collisions_never_decide_with_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Group hashes that collide (every text value hashes alike) never pair different groups."""

    def colliding(codes: np.ndarray, null: np.ndarray | None = None) -> np.ndarray:
        return np.zeros(len(codes), dtype=np.uint64)

    monkeypatch.setattr(views_module, "mix", colliding)
    expected = pd.DataFrame({"k": ["a", "b", "a", "b"], "v": [1.0, 2.0, 3.0, 4.0]})
    noisy = expected.assign(v=expected["v"] * (1 + 1e-12)).iloc[::-1]
    assert compare_results(expected, noisy).passed
    swapped = noisy.assign(k=["a", "b", "a", "b"])  # k no longer travels with v
    result = compare_results(expected, swapped)
    assert result.verdict is Verdict.FAIL
    assert result.details.expected_unmatched_count == 4


_STAFF = "(VALUES (1, 'ann', 100, NULL), (2, 'bob', 50, 1), (3, 'cat', 70, 1), (4, 'dan', 60, 1))"
_LETTERS = "(VALUES ('a', 1, 10), ('b', 2, 10), ('c', 3, 20), ('d', 4, 5)) t(n, x, y)"


@pytest.mark.parametrize(
    ("gold", "agent", "verdict"),
    [
        # ORDER BY e.salary, output m.salary (all 100): the rows are not tied, a reversed
        # answer is not a pass.
        (
            f"SELECT e.name, m.salary FROM {_STAFF} e(id, name, salary, manager) JOIN {_STAFF} "
            "m(id, name, salary, manager) ON e.manager = m.id ORDER BY e.salary",
            "ORDER BY e.salary DESC",
            Verdict.REVIEW,
        ),
        # ORDER BY t.x sorts by the input x, not by the output alias x (y).
        (
            f"SELECT n, y AS x FROM {_LETTERS} ORDER BY t.x",
            "ORDER BY CASE n WHEN 'b' THEN 0 WHEN 'a' THEN 1 ELSE 2 + t.x END",
            Verdict.REVIEW,
        ),
        # ORDER BY x is the output alias: a and b tie on it and may permute.
        (
            f"SELECT n, y AS x FROM {_LETTERS} ORDER BY x",
            "ORDER BY x, n DESC",
            Verdict.PASS,
        ),
    ],
)
def test_duckdb_order_by_keys_map_only_to_the_column_they_are(
    gold: str, agent: str, verdict: Verdict
) -> None:
    prefix = gold[: gold.rindex("ORDER BY")]
    result = compare_results(
        _duckdb(gold), _duckdb(prefix + agent), order="auto", expected_sql=gold, dialect="duckdb"
    )
    assert result.verdict is verdict, result.reason


def test_no_tolerance_hint_for_plainly_different_numbers() -> None:
    # 0.5% off is another answer, not float noise: no "would pass with rel_tol=0.01".
    expected = pd.DataFrame({"v": [100.0, 200.0]})
    result = compare_results(expected, pd.DataFrame({"v": [100.5, 200.0]}))
    assert not result.passed
    assert result.details.near_miss(NearMissKind.LOOSER_TOLERANCE) is None
    assert "rel_tol" not in result.reason
    close = compare_results(expected, pd.DataFrame({"v": [100.05, 200.0]}))
    assert "would pass with rel_tol=0.001" in close.reason
