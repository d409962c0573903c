"""Deciding row order from the ground truth's parsed outermost ORDER BY."""

from __future__ import annotations

import pytest

from sqlbench.compare.order import plan_order


@pytest.mark.parametrize(
    ("sql", "names", "strict", "keys", "complete"),
    [
        ("SELECT a, b FROM t", ["a", "b"], False, (), True),
        ("SELECT a, b FROM t ORDER BY b DESC, a", ["a", "b"], True, (1, 0), True),
        ("SELECT a, b FROM t ORDER BY 2", ["a", "b"], True, (1,), True),
        ("SELECT a, b FROM t ORDER BY 3", ["a", "b"], True, (), False),
        ("SELECT x AS a, y AS b FROM t ORDER BY b", ["a", "b"], True, (1,), True),
        (
            "SELECT t.x, count(*) FROM t GROUP BY 1 ORDER BY COUNT(*) DESC",
            ["x", "c"],
            True,
            (1,),
            True,
        ),
        ("SELECT T1.x FROM t AS T1 ORDER BY t1.x", ["x"], True, (0,), True),
        ("SELECT * FROM t ORDER BY b", ["a", "b"], True, (1,), True),
        ("SELECT * FROM t ORDER BY z", ["a", "b"], True, (), False),
        ("SELECT a FROM t ORDER BY score, a", ["a"], True, (), False),
        ("SELECT a, b FROM t ORDER BY a, score", ["a", "b"], True, (0,), False),
        ("SELECT a FROM (SELECT a FROM t ORDER BY a) s", ["a"], False, (), True),
        ("SELECT a, ROW_NUMBER() OVER (ORDER BY a) FROM t", ["a", "r"], False, (), True),
        ("SELECT a FROM t UNION ALL SELECT a FROM u ORDER BY a", ["a"], True, (0,), True),
        ("(SELECT a FROM t ORDER BY a)", ["a"], True, (0,), True),
        ("WITH c AS (SELECT a FROM t ORDER BY a) SELECT a FROM c", ["a"], False, (), True),
        ("SELECT a FROM t ORDER BY a LIMIT 3", ["a"], True, (0,), True),
        ("SELECT a FROM t ORDER BY a; -- sorted", ["a"], True, (0,), True),
        ("SELECT a FROM t; /* unordered */", ["a"], False, (), True),
    ],
)
def test_auto_order_plan(
    sql: str, names: list[str], strict: bool, keys: tuple[int, ...], complete: bool
) -> None:
    plan = plan_order("auto", sql, "sqlite", names)
    assert plan.strict is strict
    assert plan.keys == keys
    assert plan.complete is complete
    assert plan.parse_error is None


def test_order_by_text_is_not_searched() -> None:
    plan = plan_order("auto", "SELECT 'ORDER BY x' AS note FROM t", None, ["note"])
    assert not plan.strict


def test_limit_is_noted() -> None:
    assert plan_order("auto", "SELECT a FROM t ORDER BY a LIMIT 3", None, ["a"]).has_limit
    assert not plan_order("auto", "SELECT a FROM t ORDER BY a", None, ["a"]).has_limit


def test_unparseable_sql_is_strict_with_unknown_ties() -> None:
    plan = plan_order("auto", "SELEC a FRM", None, ["a"])
    assert plan.strict and not plan.complete and plan.parse_error
    two = plan_order("auto", "SELECT 1; SELECT 2", None, ["a"])
    assert two.parse_error == "expected one statement, found 2"
    commented = plan_order("auto", "SELECT 1; SELECT 2; -- two", None, ["a"])
    assert commented.parse_error == "expected one statement, found 2"


def test_strict_without_sql_is_positional() -> None:
    plan = plan_order("strict", None, None, ["a"])
    assert plan.strict and plan.complete and plan.keys == ()


def test_ignore_never_parses() -> None:
    assert not plan_order("ignore", "SELEC garbage", None, ["a"]).strict
