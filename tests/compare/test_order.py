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
        # A key maps to an output column only when it provably is that column.
        (
            "SELECT e.name, m.salary FROM e JOIN e AS m ON e.boss = m.id ORDER BY e.salary",
            ["name", "salary"],
            True,
            (),
            False,
        ),
        (
            "SELECT e.name, m.salary FROM e JOIN e AS m ON e.boss = m.id ORDER BY M.salary",
            ["name", "salary"],
            True,
            (1,),
            True,
        ),
        ("SELECT n, y AS x FROM t ORDER BY t.x", ["n", "x"], True, (), False),
        ("SELECT n, y AS x FROM t ORDER BY x", ["n", "x"], True, (1,), True),
        ("SELECT n, y AS x FROM t ORDER BY x + 0", ["n", "x"], True, (), False),
        ("SELECT n, -x AS x FROM t ORDER BY -x", ["n", "x"], True, (), False),
        ("SELECT n, x AS x FROM t ORDER BY x", ["n", "x"], True, (1,), True),
        ("SELECT n, x AS k FROM t ORDER BY t.x", ["n", "k"], True, (1,), True),
        ("SELECT n, t.x AS k FROM t ORDER BY x", ["n", "k"], True, (1,), True),
        ("SELECT n, t.x AS k FROM t JOIN u ON t.n = u.n ORDER BY x", ["n", "k"], True, (), False),
        ("SELECT n, u.x AS k FROM t ORDER BY t.x", ["n", "k"], True, (), False),
        ("SELECT a.n, b.n FROM a JOIN b ON a.id = b.id ORDER BY n", ["n", "n"], True, (), False),
        ("SELECT name, SUM(x) FROM t GROUP BY 1 ORDER BY sum(X)", ["name", "s"], True, (1,), True),
        ("SELECT a, b, c FROM t ORDER BY b", ["a", "b"], True, (), False),
        ("SELECT t.* FROM t ORDER BY t.b", ["a", "b"], True, (1,), True),
        ("SELECT u.* FROM t JOIN u ON t.a = u.a ORDER BY b", ["a", "b"], True, (), False),
        ("SELECT *, y AS b FROM t ORDER BY b", ["a", "b"], True, (), False),
        ("SELECT * FROM t, u ORDER BY b", ["a", "b"], True, (), False),
        ("SELECT t.a FROM t UNION SELECT b FROM u ORDER BY t.a", ["a"], True, (0,), True),
        ("SELECT a FROM t UNION SELECT b FROM u ORDER BY t.a", ["a"], True, (), False),
        ("SELECT a FROM t UNION SELECT b FROM u ORDER BY b", ["a"], True, (), False),
        ("SELECT x AS k FROM t UNION SELECT x FROM u ORDER BY t.x", ["k"], True, (), False),
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


def test_star_with_modifiers_is_not_mapped_by_name() -> None:
    # EXCLUDE keeps the other columns as they are; REPLACE and RENAME give the output column b
    # another value than the input column b.
    sql = "SELECT * EXCLUDE (c) FROM t ORDER BY b"
    excluded = plan_order("auto", sql, "duckdb", ["a", "b"])
    assert excluded.keys == (1,) and excluded.complete
    for sql in (
        "SELECT * REPLACE (y AS b) FROM t ORDER BY b",
        "SELECT * RENAME (a AS b) FROM t ORDER BY b",
    ):
        plan = plan_order("auto", sql, "duckdb", ["a", "b"])
        assert plan.strict and plan.keys == () and not plan.complete


def test_identifiers_follow_the_dialect() -> None:
    # PostgreSQL folds unquoted names to lower case but keeps quoted ones: "Total" is not total.
    names = ["n", "Total"]
    quoted = 'SELECT n, y AS "Total" FROM t ORDER BY '
    assert plan_order("auto", quoted + "total", "postgres", names).keys == ()
    assert plan_order("auto", quoted + '"Total"', "postgres", names).keys == (1,)
    unquoted = "SELECT n, y AS Total FROM t ORDER BY TOTAL"
    assert plan_order("auto", unquoted, "postgres", ["n", "total"]).keys == (1,)


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


def test_a_ground_truth_is_parsed_once_for_all_its_comparisons(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every answer to a question is compared with the same ground truth: its order plan is
    # made once (parsing is most of its cost), and a new SQL, dialect or column list is new.
    import sqlbench.compare.order as order_module

    parses: list[str] = []
    real_parse = order_module.sqlglot.parse

    def counting(sql: str, **kwargs: object) -> object:
        parses.append(sql)
        return real_parse(sql, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(order_module.sqlglot, "parse", counting)
    sql = "SELECT a, b FROM t_parsed_once ORDER BY b"
    first = plan_order("auto", sql, "sqlite", ["a", "b"])
    assert plan_order("auto", sql, "sqlite", ["a", "b"]) is first
    assert first.keys == (1,) and parses == [sql]
    plan_order("auto", sql, "sqlite", ["a", "c"])
    assert plan_order("auto", sql, "duckdb", ["a", "b"]).keys == (1,)
    assert plan_order("strict", sql, "sqlite", ["a", "b"]).source.startswith("order: strict")
    assert parses == [sql] * 4
