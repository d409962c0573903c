"""Several warehouses in one project (docs/project-files.md, ``warehouses``): DuckDB, SQLite and
PostgreSQL in one run, each with its own setup, dialect and limits."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from sqlbench.errors import EngineError, ProjectInvalid
from sqlbench.report import run_json, run_markdown, run_text
from sqlbench.runs.plan import RunOptions
from sqlbench.runs.runner import run_benchmark
from sqlbench.testing import write_project
from sqlbench.validation import check_project, load_project
from sqlbench.verdicts import Verdict

OLDEST = "SELECT name FROM singer WHERE age = (SELECT max(age) FROM singer)"
PG_URL = os.environ.get("SQLBENCH_TEST_POSTGRES_URL")


def _sqlite_file(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE singer (name TEXT, age INTEGER);"
        "INSERT INTO singer VALUES ('Ann', 30), ('Bob', 41), ('Cy', 25);"
    )
    conn.commit()
    conn.close()
    return path


def _project(tmp_path: Path, pg_url: str | None) -> Path:
    db = _sqlite_file(tmp_path / "concert.sqlite")
    warehouses: dict[str, object] = {
        "concert": f"sqlite:///{db}",
        "lake": {"setup": ["lake/*.sql"], "run": {"max_rows": 2}},
    }
    files: dict[str, object] = {
        "sqlbench.yml": {"warehouses": warehouses},
        "lake/model.sql": "CREATE VIEW fish AS SELECT * FROM "
        "(VALUES ('cod', 3), ('eel', 5)) t(kind, n);\n",
        "eval_questions/concert.yml": {
            "space": "concert",
            "warehouse": "concert",
            "eval_questions": [
                {
                    "name": "oldest",
                    "question": "?",
                    "sql": "SELECT name FROM singer ORDER BY age DESC LIMIT 1",
                },
                {"name": "count", "question": "?", "sql": "SELECT count(*) FROM singer"},
            ],
        },
        "eval_questions/lake.yml": {
            "space": "lake",
            "eval_questions": [
                {
                    "name": "fish",
                    "question": "?",
                    "warehouse": "lake",
                    "sql": "SELECT sum(n) FROM fish",
                },
                {"name": "mem", "question": "?", "sql": "SELECT 42 AS answer"},
            ],
        },
        "agents/replay.yml": {
            "agents": [{"name": "replay", "kind": "replay", "path": "answers.jsonl"}]
        },
        "agents/answers.jsonl": "".join(
            json.dumps({"space": space, "name": name, "sql": sql}) + "\n"
            for space, name, sql in [
                (
                    "concert",
                    "oldest",
                    "SELECT name FROM singer WHERE age = (SELECT max(age) FROM singer)",
                ),
                ("concert", "count", "SELECT count(*) + 1 FROM singer"),
                ("lake", "fish", "SELECT kind, n FROM fish"),
                ("lake", "mem", "SELECT 42"),
                ("pg", "version", "SELECT split_part(version(), ' ', 1)"),
            ]
        ),
    }
    if pg_url is not None:
        warehouses["pg"] = {"url": pg_url, "dialect": "postgres", "setup": ["pg/*.sql"]}
        files["pg/view.sql"] = (
            "CREATE VIEW engine_name AS SELECT split_part(version(), ' ', 1) AS name;\n"
        )
        files["eval_questions/pg.yml"] = {
            "space": "pg",
            "warehouse": "pg",
            "eval_questions": [
                {"name": "version", "question": "?", "sql": "SELECT name FROM engine_name"}
            ],
        }
    return write_project(tmp_path / "project", files)


@pytest.mark.skipif(PG_URL is None, reason="SQLBENCH_TEST_POSTGRES_URL is not set (PostgreSQL)")
def test_duckdb_sqlite_and_postgres_in_one_run(tmp_path: Path) -> None:
    assert PG_URL is not None
    project = load_project(_project(tmp_path, PG_URL))
    run = run_benchmark(project, "replay", RunOptions(concurrency=2))
    verdicts = {q.full_name: q.verdict for q in run.questions}
    assert verdicts == {
        "concert/oldest": Verdict.PASS,  # SQLite
        "concert/count": Verdict.FAIL,
        "lake/fish": Verdict.FAIL,  # in-memory DuckDB with the lake's own setup ...
        "lake/mem": Verdict.PASS,  # ... and the default warehouse
        "pg/version": Verdict.PASS,  # PostgreSQL, through its own setup view
    }
    fish = run.question("lake/fish")
    assert fish is not None and "max_rows" not in fish.reason  # 2 rows fit max_rows: 2
    assert {q.full_name: q.first.warehouse for q in run.questions} == {
        "concert/oldest": "concert",
        "concert/count": "concert",
        "lake/fish": "lake",
        "lake/mem": "default",
        "pg/version": "pg",
    }
    assert {name: acc.label() for name, acc in run.by_warehouse().items()} == {
        "concert": "50% (1/2)",
        "lake": "0% (0/1)",
        "default": "100% (1/1)",
        "pg": "100% (1/1)",
    }
    assert run.accuracy.label() == "60% (3/5)"
    text = run_text.render_run(run, width=120)
    assert "By warehouse:" in text and "concert  50% (1/2)" in text
    data = run_json.run_to_json(run)
    assert data["warehouses"]["pg"] == {"passed": 1, "total": 1, "value": 1.0}
    assert {r["name"]: r["warehouse"] for r in data["results"]}["fish"] == "lake"
    assert "| `concert` | 50% (1/2) |" in run_markdown.render(run)


def test_per_warehouse_limits_apply(tmp_path: Path) -> None:
    root = _project(tmp_path, None)
    (root / "agents/answers.jsonl").write_text(
        '{"space": "lake", "name": "fish", "sql": "SELECT * FROM range(3)"}\n'
        '{"space": "lake", "name": "mem", "sql": "SELECT * FROM range(3)"}\n'
        '{"space": "concert", "name": "count", "sql": "SELECT 3"}\n'
        '{"space": "concert", "name": "oldest", "sql": "SELECT \'Bob\'"}\n'
    )
    run = run_benchmark(load_project(root), "replay")
    fish, mem = run.question("lake/fish"), run.question("lake/mem")
    assert fish is not None and mem is not None
    assert fish.verdict is Verdict.FAIL and "max_rows=2" in fish.reason  # lake: max_rows 2
    assert "max_rows" not in mem.reason  # default warehouse: max_rows 100000
    assert run.accuracy.label() == "50% (2/4)"


def test_single_warehouse_runs_record_no_breakdown(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        {
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "a", "question": "?", "sql": "SELECT 1"}]
            }
        },
    )
    run = run_benchmark(load_project(root), "auto")
    assert run.questions[0].first.warehouse is None
    assert run.by_warehouse() == {}
    assert "By warehouse" not in run_text.render_run(run)


def test_unknown_warehouse_is_a_located_error(tmp_path: Path) -> None:
    root = _project(tmp_path, None)
    (root / "eval_questions/bad.yml").write_text(
        "warehouse: concrt\neval_questions:\n  - name: x\n    question: '?'\n    sql: SELECT 1\n"
        "  - name: y\n    question: '?'\n    warehouse: lak\n    sql: SELECT 1\n"
    )
    messages = [str(p) for p in check_project(root).problems if p.severity.value == "error"]
    assert any(
        m.startswith("eval_questions/bad.yml:3:")
        and "warehouse 'concrt' (the file's `warehouse:`)" in m
        and "did you mean 'concert'?" in m
        for m in messages
    ), messages
    assert any(
        m.startswith("eval_questions/bad.yml:8:") and "did you mean 'lake'?" in m for m in messages
    ), messages
    with pytest.raises(ProjectInvalid):
        load_project(root)


def test_warehouse_settings_are_checked(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {
                "warehouses": {
                    "default": "x.duckdb",
                    "a": {
                        "url": "postgresql://h/db",
                        "dialect": "postgress",
                        "setup": ["none/*.sql"],
                    },
                }
            },
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "a", "question": "?", "sql": "SELECT 1"}]
            },
        },
    )
    messages = "\n".join(str(p) for p in check_project(root).problems)
    assert "'default' names the top-level `warehouse`" in messages
    assert "warehouses.a: setup: 'none/*.sql' matches no file" in messages
    assert "postgress" in messages
    (root / "sqlbench.yml").write_text("warehouses:\n  b: {url: x.duckdb, colour: red}\n")
    messages = "\n".join(str(p) for p in check_project(root).problems)
    assert "sqlbench.yml:2: error: unknown key 'colour' under 'warehouses.b'" in messages


def test_the_warehouse_is_part_of_the_question_set(tmp_path: Path) -> None:
    root = _project(tmp_path, None)
    before = load_project(root).question_set_hash
    text = (root / "eval_questions/lake.yml").read_text()
    (root / "eval_questions/lake.yml").write_text(
        text.replace("warehouse: lake", "warehouse: default")
    )
    assert load_project(root).question_set_hash != before


def test_a_failing_warehouse_names_itself(tmp_path: Path) -> None:
    root = _project(tmp_path, None)
    (root / "lake/model.sql").write_text("CREATE VIEW fish AS SELECT * FROM nowhere;\n")
    with pytest.raises(EngineError, match=r"^warehouse 'lake': "):
        run_benchmark(load_project(root), "replay")
