"""Partial credit (cell precision, recall, F1) beside the verdict: docs/verdicts.md."""

from __future__ import annotations

import pandas as pd
import pytest

from sqlbench.compare import compare_results

GOLD = pd.DataFrame({"region": ["EU", "US", "APAC", "LATAM"], "revenue": [10.0, 20.0, 30.0, 40.0]})


def credit(expected: pd.DataFrame, actual: pd.DataFrame, **options: object) -> tuple[float, ...]:
    comparison = compare_results(expected, actual, **options)  # type: ignore[arg-type]
    found = comparison.details.partial_credit
    assert found is not None
    return (round(found.precision, 6), round(found.recall, 6), round(found.f1, 6))


def test_a_pass_scores_one_in_any_row_order_and_with_extra_columns_ignored() -> None:
    agent = GOLD.iloc[::-1].assign(note="x")
    assert compare_results(GOLD, agent).passed
    assert credit(GOLD, agent) == (1.0, 1.0, 1.0)


def test_extra_rows_lower_precision_only() -> None:
    agent = pd.concat([GOLD, pd.DataFrame({"region": ["MEA"], "revenue": [5.0]})])
    # 8 cells matched of the agent's 10; every one of the 8 expected cells found.
    assert credit(GOLD, agent) == (0.8, 1.0, round(2 * 0.8 / 1.8, 6))


def test_missing_rows_lower_recall_only() -> None:
    agent = GOLD.iloc[:3]
    assert compare_results(GOLD, agent).verdict.value == "fail"
    assert credit(GOLD, agent) == (1.0, 0.75, round(2 * 0.75 / 1.75, 6))


def test_a_missing_column_counts_its_cells_as_missed() -> None:
    agent = GOLD[["region"]]
    # 4 region cells matched; the 4 revenue cells are missed; the agent has no wrong cell.
    assert credit(GOLD, agent) == (1.0, 0.5, round(2 * 0.5 / 1.5, 6))


def test_a_wrong_value_pairs_its_row_with_the_closest_agent_row_whatever_the_order() -> None:
    agent = pd.DataFrame({"r": ["LATAM", "APAC", "US", "EU"], "v": [40.0, 30.0, 99.0, 10.0]})
    # US's revenue is wrong: 7 of 8 cells on each side.
    assert credit(GOLD, agent) == (0.875, 0.875, 0.875)
    shuffled = agent.iloc[[2, 0, 3, 1]]
    assert credit(GOLD, shuffled) == credit(GOLD, agent)


def test_tolerance_is_the_verdicts() -> None:
    agent = GOLD.assign(revenue=GOLD.revenue * (1 + 1e-5))
    assert credit(GOLD, agent) == (0.5, 0.5, 0.5)  # only the regions match at rel_tol 1e-9
    assert credit(GOLD, agent, rel_tol=1e-4) == (1.0, 1.0, 1.0)


def test_under_columns_exact_the_extra_column_costs_precision() -> None:
    agent = GOLD.assign(note="x")
    comparison = compare_results(GOLD, agent, columns="exact")
    assert comparison.verdict.value == "fail"
    assert credit(GOLD, agent, columns="exact") == (round(8 / 12, 6), 1.0, 0.8)


def test_rows_set_counts_distinct_rows_as_bird_does() -> None:
    agent = pd.concat([GOLD, GOLD.iloc[:1]])
    assert credit(GOLD, agent, rows="set") == (1.0, 1.0, 1.0)
    assert credit(GOLD, agent) == (0.8, 1.0, round(2 * 0.8 / 1.8, 6))


def test_strict_order_pairs_rows_by_position() -> None:
    agent = GOLD.iloc[[1, 0, 2, 3]]
    # Rows 0 and 1 swapped: under strict order 4 of 8 cells sit where expected.
    assert credit(GOLD, agent, order="strict") == (0.5, 0.5, 0.5)


def test_the_bird_readme_example() -> None:
    """BIRD's worked example (mini-dev README): its evaluation_f1.py scores it 4/6 as here (the
    README's table says 0.8, leaving the NULL cells out of the counts)."""
    gold = pd.DataFrame({"fruit": ["Apple", "Orange", "Banana"], "n": [325, None, 119]})
    agent = pd.DataFrame({"n": [325, 191, None], "fruit": ["Apple", "Orange", "Banana"]})
    assert credit(gold, agent) == (round(4 / 6, 6), round(4 / 6, 6), round(4 / 6, 6))


def test_empty_results_score_one_and_nothing_against_something_zero() -> None:
    empty = GOLD.iloc[:0]
    assert credit(empty, empty) == (1.0, 1.0, 1.0)
    assert credit(GOLD, empty) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("rows", ["bag", "set"])
def test_credit_never_changes_the_verdict(rows: str) -> None:
    agent = GOLD.iloc[:3]
    with_credit = compare_results(GOLD, agent, rows=rows)
    assert with_credit.verdict.value == "fail"
    assert "row" in with_credit.reason
