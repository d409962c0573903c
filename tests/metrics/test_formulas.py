"""Deterministic metric formulas on the worked examples of the Snowflake and Azure docs, and
their edge cases (no calls, duplicate names, more calls than expected, empty expectations)."""

from __future__ import annotations

import pytest

from sqlbench.metrics.tools import tool_call_success, tool_selection_accuracy
from sqlbench.metrics.trajectory import same_value, task_navigation_efficiency
from sqlbench.project.files import ExpectedTool, ExpectedTrajectory, TrajectoryStep
from sqlbench.records.run import ToolCallRecord


def calls(*names: str) -> list[ToolCallRecord]:
    return [ToolCallRecord(name=name) for name in names]


def tools(*names: str) -> list[ExpectedTool]:
    return [ExpectedTool(tool_name=name) for name in names]


@pytest.mark.parametrize(
    ("expected", "actual", "score"),
    [
        # Snowflake: matched / max(expected entries, actual calls), order ignored.
        (("analyst", "search"), ("search", "analyst"), 1.0),  # any order
        (("analyst", "search"), ("analyst",), 0.5),  # too few calls
        (("analyst",), ("analyst", "search"), 0.5),  # too many calls
        (("analyst",), ("search",), 0.0),  # the wrong tool
        ((), (), 1.0),  # [] expects no tool call, and none was made
        ((), ("search",), 0.0),  # [] expects none, one was made
        (("analyst",), (), 0.0),  # no calls at all
        # Duplicates: each actual call matched at most once.
        (("run_sql", "run_sql"), ("run_sql",), 0.5),
        (("run_sql",), ("run_sql", "run_sql", "run_sql"), 1 / 3),
        (("run_sql", "run_sql", "list_tables"), ("run_sql", "list_tables", "run_sql"), 1.0),
    ],
)
def test_tool_selection_accuracy(
    expected: tuple[str, ...], actual: tuple[str, ...], score: float
) -> None:
    assert tool_selection_accuracy(tools(*expected), calls(*actual)).score == pytest.approx(score)


def test_tool_selection_accuracy_detail_names_matched_missing_and_unexpected() -> None:
    result = tool_selection_accuracy(tools("a", "b", "b"), calls("b", "c"))
    assert result.score == pytest.approx(1 / 3)
    assert result.detail["matched"] == ["b"]
    assert result.detail["missing"] == ["a", "b"]
    assert result.detail["unexpected"] == ["c"]


def test_tool_call_success_is_the_share_without_error_and_absent_without_calls() -> None:
    assert tool_call_success([]) is None
    result = tool_call_success(
        [ToolCallRecord(name="a"), ToolCallRecord(name="b", error="boom"), ToolCallRecord(name="c")]
    )
    assert result is not None
    assert result.score == pytest.approx(2 / 3)
    assert result.detail["failed"] == ["b: boom"]


def tne(steps: list[str | TrajectoryStep], match: str, actual: list[ToolCallRecord]) -> dict:
    result = task_navigation_efficiency(ExpectedTrajectory(steps=steps, match=match), actual)
    return {"score": result.score, **result.detail}


def test_azure_example_identical_path_passes_every_mode() -> None:
    # Azure's sample: ground truth ["search", "analyze", "report"], the agent does the same.
    for match in ("exact", "in_order", "any_order"):
        got = tne(["search", "analyze", "report"], match, calls("search", "analyze", "report"))
        assert (got["passed"], got["precision"], got["recall"], got["f1"]) == (True, 1, 1, 1)


def test_azure_example_extra_step_fails_exact_passes_in_order() -> None:
    actual = calls("search", "validate", "analyze", "report")
    exact = tne(["search", "analyze", "report"], "exact", actual)
    in_order = tne(["search", "analyze", "report"], "in_order", actual)
    assert exact["passed"] is False and exact["score"] == 0.0
    assert in_order["passed"] is True and in_order["score"] == 1.0
    assert in_order["precision"] == pytest.approx(0.75)
    assert in_order["recall"] == pytest.approx(1.0)
    assert in_order["f1"] == pytest.approx(2 * 0.75 / 1.75)


def test_azure_example_reordered_fails_in_order_passes_any_order() -> None:
    actual = calls("report", "search", "analyze")
    assert tne(["search", "analyze", "report"], "in_order", actual)["passed"] is False
    any_order = tne(["search", "analyze", "report"], "any_order", actual)
    assert any_order["passed"] is True
    assert any_order["precision"] == any_order["recall"] == 1.0


def test_any_order_needs_each_step_as_often_as_expected() -> None:
    got = tne(["run_sql", "run_sql"], "any_order", calls("run_sql", "list_tables"))
    assert got["passed"] is False
    assert got["precision"] == pytest.approx(0.5)
    assert got["recall"] == pytest.approx(0.5)


def test_missing_step_lowers_recall_not_precision() -> None:
    got = tne(["search", "analyze", "report"], "in_order", calls("search", "report"))
    assert got["passed"] is False
    assert got["precision"] == 1.0
    assert got["recall"] == pytest.approx(2 / 3)


def test_no_calls_and_empty_expectations() -> None:
    none = tne(["search"], "exact", [])
    assert (none["passed"], none["precision"], none["recall"], none["f1"]) == (False, 0, 0, 0)
    empty = tne([], "exact", [])
    assert (empty["passed"], empty["precision"], empty["recall"]) == (True, 1, 1)
    extra = tne([], "in_order", calls("search"))
    assert extra["passed"] is True  # nothing expected; extras allowed in order
    assert extra["precision"] == 0.0
    assert tne([], "exact", calls("search"))["passed"] is False


def test_steps_with_arguments_compare_as_values() -> None:
    actual = [
        ToolCallRecord(name="run_sql", arguments={"sql": "SELECT 1", "limit": 10}),
        ToolCallRecord(name="run_sql", arguments={"sql": "SELECT 2", "limit": 10}),
    ]
    wanted = TrajectoryStep(name="run_sql", arguments={"limit": 10.0, "sql": "SELECT 2"})
    assert tne([wanted], "in_order", actual)["passed"] is True
    assert tne([wanted, "run_sql"], "any_order", actual)["passed"] is True  # wildcard gets #1
    assert tne(["run_sql", wanted], "in_order", actual)["passed"] is True
    assert tne([wanted, "run_sql"], "in_order", actual)["passed"] is False  # #2 comes last
    other = TrajectoryStep(name="run_sql", arguments={"sql": "SELECT 3", "limit": 10})
    assert tne([other], "any_order", actual)["passed"] is False


def test_same_value() -> None:
    assert same_value([1, {"a": 2}], [1.0, {"a": 2}])
    assert not same_value({"a": 1}, {"a": 1, "b": 2})
    assert not same_value(True, 1)
    assert not same_value("1", 1)
