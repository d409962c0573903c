"""PR checks that cannot mislead (issue 11), on real temporary git repositories.

The warehouse tests use the real PostgreSQL: two databases behind one URL template whose
``${PGDB}`` differs, the way a team points CI and a laptop at two copies of a warehouse.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import Result

from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]

PG_AGENT = """\
SQL = {
    "order_count": "SELECT COUNT(*) FROM orders",
    "revenue": "SELECT SUM(amount) FROM orders",
    "largest": "SELECT MAX(amount) FROM orders",
    # Wrong at exactly 100: passes on a warehouse without such an order only.
    "big_orders": "SELECT COUNT(*) FROM orders WHERE amount > 100",
}


def answer(request):
    return SQL[request["name"]]
"""
PG_QUESTIONS = """\
space: sales
eval_questions:
  - name: order_count
    question: How many orders are there?
    sql: SELECT COUNT(*) FROM orders
  - name: revenue
    question: What is the total revenue?
    sql: SELECT SUM(amount) FROM orders
  - name: largest
    question: What is the largest order?
    sql: SELECT MAX(amount) FROM orders
  - name: big_orders
    question: How many orders are of 100 or more?
    sql: SELECT COUNT(*) FROM orders WHERE amount >= 100
"""


@pytest.fixture
def two_databases() -> Iterator[tuple[str, str]]:
    """Two fresh PostgreSQL databases: in the first no order is exactly 100, in the second one
    is (so the agent's ``> 100`` passes on the first only). Dropped afterwards."""
    base = os.environ.get("SQLBENCH_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("SQLBENCH_TEST_POSTGRES_URL is not set (PostgreSQL warehouse tests)")
    names = [f"sqlbench_i11_{uuid.uuid4().hex[:8]}_{side}" for side in ("a", "b")]
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for name in names:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(base)
    amounts = {names[0]: (120, 80, 200, 50), names[1]: (120, 100, 200, 50)}
    try:
        for name, values in amounts.items():
            engine = sa.create_engine(url.set(database=name))
            with engine.begin() as conn:
                conn.execute(sa.text("CREATE TABLE orders (id int, amount numeric)"))
                for i, amount in enumerate(values):
                    conn.execute(
                        sa.text("INSERT INTO orders VALUES (:i, :a)"), {"i": i, "a": amount}
                    )
            engine.dispose()
        yield names[0], names[1]
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def pg_repo(tmp_path: Path) -> GitRepo:
    base = os.environ.get("SQLBENCH_TEST_POSTGRES_URL", "")
    template = sa.engine.make_url(base).set(database="PGDB").render_as_string(False)
    warehouse = template.replace("/PGDB", "/${PGDB}")
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(
        {
            "sqlbench.yml": f"warehouse: {warehouse}\ndefault_agent: analyst\n",
            "eval_questions/sales.yml": PG_QUESTIONS,
            "agents/analyst.yml": (
                "agents:\n  - name: analyst\n    kind: python\n    function: analyst_agent:answer\n"
            ),
            "analyst_agent.py": PG_AGENT,
        },
        "sqlbench project on a server warehouse",
    )
    return repo


def completed_runs(invoke: Invoke, repo: GitRepo) -> int:
    return invoke("runs", "-C", str(repo.root)).stdout.count("Completed")


@pytest.mark.postgres
def test_a_run_against_another_database_is_never_reused(
    two_databases: tuple[str, str], pg_repo: GitRepo, invoke: Invoke
) -> None:
    first, second = two_databases
    root = str(pg_repo.root)
    on_first = invoke("check", "-C", root, "--base", "main", env={"PGDB": first})
    assert "100% (4/4)" in on_first.stdout
    assert completed_runs(invoke, pg_repo) == 1  # the head (same commit) reused the base run
    # Same commit, same URL template, another database: nothing may be reused.
    on_second = invoke("check", "-C", root, "--base", "main", env={"PGDB": second})
    assert "75% (3/4)" in on_second.stdout and "100%" not in on_second.stdout
    assert "base: reusing" not in on_second.stderr
    assert completed_runs(invoke, pg_repo) == 2
    # Within check.reuse_max_age the run on the same database is reused, and the output says
    # why that is allowed for a server warehouse.
    again = invoke("check", "-C", root, "--base", "main", env={"PGDB": second})
    assert "75% (3/4)" in again.stdout
    assert "base: reusing run" in again.stderr
    assert "within check.reuse_max_age 24h" in again.stderr
    assert "${PGDB}" in again.stderr and first not in again.stderr + again.stdout
    assert completed_runs(invoke, pg_repo) == 2
    # --fresh never reuses: both sides are run again.
    fresh = invoke("check", "-C", root, "--base", "main", "--fresh", env={"PGDB": second})
    assert "reusing" not in fresh.stderr and "75% (3/4)" in fresh.stdout
    assert completed_runs(invoke, pg_repo) == 4


@pytest.mark.postgres
def test_a_server_run_older_than_reuse_max_age_is_run_again(
    two_databases: tuple[str, str], pg_repo: GitRepo, invoke: Invoke
) -> None:
    first, _ = two_databases
    root = str(pg_repo.root)
    invoke("check", "-C", root, "--base", "main", env={"PGDB": first})
    store = sqlite3.connect(pg_repo.root / ".sqlbench" / "runs.db")
    with store:
        store.execute("UPDATE sqlbench_runs SET finished_at = '2020-01-01 00:00:00'")
    store.close()
    old = invoke("check", "-C", root, "--base", "main", env={"PGDB": first})
    assert "base: not reusing run" in old.stderr
    assert "over check.reuse_max_age 24h" in old.stderr
    assert completed_runs(invoke, pg_repo) == 2


VIEW_MODEL = """\
CREATE TABLE orders AS SELECT * FROM (VALUES
  (1, 'EU', 120.0), (2, 'EU', 180.0), (3, 'US', 200.0), (4, 'US', 110.0),
  (5, 'APAC', 175.0), (6, 'APAC', 105.0), (7, 'EU', 40.0)
) AS t(id, region, amount);
CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount >= {limit};
"""
VIEW_QUESTIONS = """\
space: sales
eval_questions:
  - name: big_order_count
    question: How many big orders are there?
    sql: SELECT COUNT(*) FROM big_orders
  - name: big_orders_by_region
    question: How many big orders does each region have?
    sql: SELECT region, COUNT(*) FROM big_orders GROUP BY region
  - name: order_count
    question: How many orders are there?
    sql: SELECT COUNT(*) FROM orders
"""
VIEW_AGENT = """\
SQL = {
    "big_order_count": "SELECT COUNT(*) AS n FROM big_orders",
    "big_orders_by_region": "SELECT region, COUNT(*) AS n FROM big_orders GROUP BY 1",
    "order_count": "SELECT COUNT(*) FROM orders",
}


def answer(request):
    return SQL[request["name"]]
"""


def view_project(*, limit: int, fail_on: str = "") -> dict[str, str]:
    settings = "setup:\n  - models/*.sql\ndefault_agent: analyst\n"
    if fail_on:
        settings += f"check:\n  fail_on: [{fail_on}]\n"
    return {
        "sqlbench.yml": settings,
        "models/orders.sql": VIEW_MODEL.format(limit=limit),
        "eval_questions/sales.yml": VIEW_QUESTIONS,
        "agents/analyst.yml": (
            "agents:\n  - name: analyst\n    kind: python\n    function: analyst_agent:answer\n"
        ),
        "analyst_agent.py": VIEW_AGENT,
    }


@pytest.fixture
def view_repo(tmp_path: Path) -> GitRepo:
    """``main``: big orders are >= 100 (6 of them); ``dev``: >= 150 (3), the agent still
    passes everything; ``strict``: dev's change with ``fail_on: [regression, answer_changed]``."""
    repo = GitRepo.init(tmp_path / "views")
    repo.commit(view_project(limit=100), "model")
    repo.commit({"models/orders.sql": VIEW_MODEL.format(limit=150)}, "big means 150", branch="dev")
    repo.commit(
        view_project(limit=150, fail_on="regression, answer_changed"), "strict", branch="strict"
    )
    return repo


def test_a_view_change_lists_answer_changes_where_no_verdict_moved(
    view_repo: GitRepo, invoke: Invoke
) -> None:
    root = str(view_repo.root)
    text = invoke("compare", "-C", root, "--base", "main", "--head", "dev").stdout
    assert "Regressions: passed on base, not on head: none" in text
    assert "Answer changes: the expected result differs, whatever the verdicts: 2" in text
    assert "  sales/big_order_count  pass → pass\n      expected: 1 row → 1 row; " in text
    assert "base only: [6]; head only: [3]" in text
    assert "sales/order_count" not in text.split("Answer changes", 1)[1]
    data = json.loads(
        invoke("compare", "-C", root, "--base", "main", "--head", "dev", "--format", "json").stdout
    )
    assert [(c["space"], c["name"]) for c in data["answer_changes"]] == [
        ("sales", "big_order_count"),
        ("sales", "big_orders_by_region"),
    ]
    first = data["answer_changes"][0]
    assert first["base"]["preview"]["rows"] == [[6]] and first["head"]["preview"]["rows"] == [[3]]
    assert first["base"]["rows_only_here"] == [[6]] and data["counts"]["answer_changes"] == 2
    markdown = invoke(
        "compare", "-C", root, "--base", "main", "--head", "dev", "--format", "markdown"
    ).stdout
    assert "#### Answer changes: the expected result differs, whatever the verdicts (2)" in markdown
    assert "| `sales/big_order_count` | pass → pass | 1 row → 1 row; base only: \\[6\\]" in (
        markdown
    )


def test_answer_changes_are_reported_by_check_and_fail_it_when_asked(
    view_repo: GitRepo, tmp_path: Path, invoke: Invoke
) -> None:
    root = str(view_repo.root)
    summary = tmp_path / "summary.md"
    passed = invoke(
        "check", "-C", root, "--base", "main", "--head", "dev", "--markdown", str(summary)
    )
    assert "Check passed" in passed.stdout
    assert "warn  answer_changed (not enforced): 2 expected answers changed" in passed.stdout
    assert "| answer_changed | no | ⚠️ 2 expected answers changed" in summary.read_text()
    # The reused runs still carry their ground-truth fingerprints: reuse hides nothing.
    failed = invoke(
        "check", "-C", root, "--base", "main", "--head", "strict", "--markdown", str(summary),
        exit_code=1,
    )  # fmt: skip
    assert "base: reusing run" in failed.stderr
    assert "FAIL  answer_changed: 2 expected answers changed: sales/big_order_count, " in (
        failed.stdout
    )
    flag = invoke(
        "check", "-C", root, "--base", "main", "--head", "dev", "--fail-on", "answer_changed",
        exit_code=1,
    )  # fmt: skip
    assert "reusing run" in flag.stderr and "sqlbench check failed (answer_changed)" in flag.stdout


def test_check_floor_takes_the_same_units_as_fail_under(view_repo: GitRepo, invoke: Invoke) -> None:
    root = view_repo.root
    (root / "sqlbench.yml").write_text("setup: [models/*.sql]\ncheck:\n  floor: 90\n")
    result = invoke("validate", "-C", str(root), exit_code=1)
    assert "sqlbench.yml:3: error: check.floor" in result.stdout
    assert "check.floor 90 is a bare number above 1: write a fraction of 1 (0.9) or a " in (
        result.stdout
    )
    flag = invoke("check", "-C", str(root), "--base", "main", "--floor", "95", exit_code=2)
    assert "--floor 95 is a bare number above 1" in flag.stderr
    (root / "sqlbench.yml").write_text(
        "setup: [models/*.sql]\ndefault_agent: analyst\ncheck:\n  floor: 99%\n"
        "  fail_on: [below_floor]\n"
    )
    ok = invoke("check", "-C", str(root), "--base", "main", "--floor", "0.5")
    assert "head accuracy 100.0% is at or over the floor 50%" in ok.stdout


def test_an_empty_shard_is_an_empty_run_that_merge_accepts(
    view_repo: GitRepo, invoke: Invoke
) -> None:
    root = str(view_repo.root)
    outs = [
        invoke("run", "-C", root, "--shard", f"{i}/5", "--name", f"part-{i}") for i in range(1, 6)
    ]
    empty = [o for o in outs if "Accuracy: n/a (0/0)" in o.stdout]
    assert empty, "with 3 questions in 5 shards some shard is empty"
    assert "holds none of the selected questions: an empty run (merge accepts it)" in (
        empty[0].stderr
    )
    merged = invoke("merge", "-C", root, *[f"part-{i}" for i in range(1, 6)], "--name", "whole")
    assert "Merged 5 shard runs into run whole: 3 questions" in merged.stdout


def test_compare_against_an_empty_side_says_n_a_and_warns_on_repeat_mixes(
    view_repo: GitRepo, invoke: Invoke
) -> None:
    root = str(view_repo.root)
    outs = {
        i: invoke("run", "-C", root, "--shard", f"{i}/5", "--name", f"part-{i}")
        for i in range(1, 6)
    }
    empty = next(i for i, o in outs.items() if "Accuracy: n/a (0/0)" in o.stdout)
    invoke("run", "-C", root, "--name", "single")
    invoke("run", "-C", root, "--name", "thrice", "--repeat", "3")
    against_empty = invoke("compare", "-C", root, f"part-{empty}", "single").stdout
    assert "Difference (head - base): n/a: the two sides share no question" in against_empty
    mixed = invoke("compare", "-C", root, "single", "thrice").stdout
    assert "Difference (head - base): 0.0 points on 3 shared questions" in mixed
    assert "Warning: the head run asked each question several times (--repeat) and the base" in (
        mixed
    )


REGRADE_AGENT = """\
from pathlib import Path

LOG = Path({log!r})
SQL = {{
    "revenue": "SELECT 100.04 AS revenue",  # off by 0.04%
    "margin": "SELECT 0.25 AS margin",  # off by 25%
    "orders": "SELECT 7 AS n",
    "avg_order": "SELECT 14.3 AS avg",  # off by 0.07%
}}


def answer(request):
    with LOG.open("a") as log:
        log.write(request["name"] + "\\n")
    return SQL[request["name"]]
"""
REGRADE_QUESTIONS = """\
eval_questions:
  - name: revenue
    question: Revenue?
    sql: SELECT 100.0
  - name: margin
    question: Margin?
    sql: SELECT 0.2
  - name: orders
    question: Orders?
    sql: SELECT 7
  - name: avg_order
    question: Average order?
    sql: SELECT 14.29
"""


def agent_calls(root: Path) -> int:
    log = root.parent / "agent_calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_regrade_after_a_tolerance_change_flips_exactly_the_near_misses_without_the_agent(
    tmp_path: Path, invoke: Invoke
) -> None:
    repo = GitRepo.init(tmp_path / "regrade")
    repo.commit(
        {
            "sqlbench.yml": "default_agent: analyst\n",
            "eval_questions/q.yml": REGRADE_QUESTIONS,
            "agents/analyst.yml": (
                "agents:\n  - name: analyst\n    kind: python\n    function: agent:answer\n"
            ),
            "agent.py": REGRADE_AGENT.format(log=str(tmp_path / "agent_calls.log")),
        },
        "project",
    )
    repo.commit(
        {"sqlbench.yml": "default_agent: analyst\ncompare:\n  rel_tol: 0.001\n"},
        "tolerate 0.1%",
        branch="tolerant",
    )
    root = repo.root
    before = invoke("run", "-C", str(root), "--name", "before")
    assert "Accuracy: 25% (1/4)" in before.stdout and agent_calls(root) == 4
    after = invoke("regrade", "-C", str(root), "before", "--branch", "tolerant", "--name", "after")
    assert agent_calls(root) == 4  # the agent was not asked again
    assert "Accuracy: 75% (3/4)" in after.stdout
    assert "regrading run before: its stored answers, no agent call" in after.stderr
    assert "· regraded from before" in after.stdout
    assert "· regraded from before" in invoke("show", "-C", str(root), "after").stdout
    diff = json.loads(
        invoke("compare", "-C", str(root), "before", "after", "--format", "json").stdout
    )
    assert sorted(c["name"] for c in diff["changes"] if c["kind"] == "fix") == [
        "avg_order",
        "revenue",
    ]
    assert [c for c in diff["changes"] if c["kind"] != "fix"] == []
    exported = json.loads(invoke("export", "-C", str(root), "after").stdout)
    assert exported["run"]["regraded_from"] == "before"
    assert (
        json.loads(invoke("export", "-C", str(root), "before").stdout)["run"]["regraded_from"]
        is None
    )
    # A regraded run is never reused as a run of the agent by compare/check.
    check = invoke("check", "-C", str(root), "--base", "tolerant", "--head", "tolerant")
    assert "reusing run after" not in check.stderr and agent_calls(root) == 8
    missing = invoke("regrade", "-C", str(root), "nope", exit_code=2)
    assert "no run named 'nope'" in missing.stderr
