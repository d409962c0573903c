"""Ground-truth pre-flight (``sqlbench validate --execute``): every distinct ground truth runs
on the warehouse and is flagged at its file and line when it fails, is empty, is all NULL, or
is non-deterministic."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from sqlbench.engines.preflight import preflight
from sqlbench.errors import Problem, Severity
from sqlbench.testing import write_project
from sqlbench.validation import load_project

SETUP = """
CREATE TABLE people (id INTEGER, name VARCHAR, score INTEGER, joined DATE);
INSERT INTO people VALUES (1, 'ann', 9, DATE '2024-01-01'), (2, 'bob', 7, DATE '2024-02-01'),
  (3, 'cy', 7, DATE '2024-03-01'), (4, 'di', 5, DATE '2024-04-01');
"""

QUESTIONS = """\
eval_questions:
  - name: fine
    question: Who?
    sql: SELECT name FROM people ORDER BY id
  - name: broken
    question: Broken?
    sql: SELECT * FROM missing_table
  - name: empty
    question: Empty?
    sql: SELECT name FROM people WHERE id < 0
  - name: nulls
    question: Nulls?
    sql: SELECT CAST(NULL AS INTEGER) AS x, NULL AS y FROM people
  - name: today
    question: Recent?
    sql: SELECT count(*) FROM people WHERE joined < CURRENT_DATE
  - name: changes
    question: Changes?
    sql: SELECT txid_current() AS t
  - name: tied_limit
    question: Top two?
    sql: SELECT name FROM people ORDER BY score DESC LIMIT 2
  - name: clean_limit
    question: Top three?
    sql: SELECT name FROM people ORDER BY score DESC, id LIMIT 2
  - name: tied_offset
    question: Second page?
    sql: SELECT name, score FROM people ORDER BY score DESC LIMIT 1 OFFSET 2
  - name: unordered_limit
    question: Any two?
    sql: SELECT name FROM people LIMIT 2
  - name: duplicate_of_broken
    question: Broken again?
    sql: SELECT * FROM missing_table
  - name: alternatives
    question: Alternatives?
    sql: SELECT id FROM people ORDER BY id
    also_accept:
      - SELECT id FROM nowhere
  - name: skipped
    question: Skipped?
    sql: SELECT * FROM also_missing
    skip: not ready
  - name: certified
    question: Certified?
    certifiedQuery: bad_certified
"""

CERTIFIED = """\
certified_queries:
  - name: good_certified
    sql: SELECT count(*) FROM people
  - name: bad_certified
    sql: SELECT nope FROM people
"""


def _problems(tmp_path: Path) -> list[Problem]:
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"setup": ["models/*.sql"]},
            "models/people.sql": SETUP,
            "eval_questions/q.yml": QUESTIONS,
            "certified_queries/c.yml": CERTIFIED,
        },
    )
    return preflight(load_project(root))


def test_each_ground_truth_problem_is_flagged_at_its_file_and_line(tmp_path: Path) -> None:
    # DuckDB's "Did you mean ...?" hint depends on its catalog's iteration order.
    shown = sorted(re.sub(r' Did you mean "[^"]*"\?', "", str(p)) for p in _problems(tmp_path))
    assert shown == sorted(
        [
            "certified_queries/c.yml:4: error: certified query 'bad_certified' fails on the "
            'warehouse: Binder Error: Referenced column "nope" not found in FROM clause! '
            'Candidate bindings: "name", "score", "joined"',
            "eval_questions/q.yml:5: error: ground truth fails on the warehouse: Catalog Error: "
            "Table with name missing_table does not exist!",
            "eval_questions/q.yml:8: warning: auto/empty: "
            "ground truth returns no rows, so any empty answer "
            "would pass",
            "eval_questions/q.yml:11: warning: auto/nulls: "
            "ground truth returns only NULLs, so an answer of "
            "NULLs would pass",
            "eval_questions/q.yml:17: warning: auto/changes: "
            "ground truth is non-deterministic: two runs "
            "returned different results",
            "eval_questions/q.yml:20: warning: auto/tied_limit: "
            "ground truth is non-deterministic: its LIMIT 2 cuts "
            "between rows that tie on the ORDER BY keys (7), so more than one answer is correct",
            "eval_questions/q.yml:26: warning: auto/tied_offset: "
            "ground truth is non-deterministic: its OFFSET 2 "
            "cuts between rows that tie on the ORDER BY keys (7), so more than one answer is "
            "correct",
            "eval_questions/q.yml:29: warning: auto/unordered_limit: "
            "ground truth is non-deterministic: its LIMIT 2 has "
            "no ORDER BY, so which rows it keeps is up to the database",
            "eval_questions/q.yml:35: error: also_accept #1 fails on the warehouse: Catalog "
            "Error: Table with name nowhere does not exist!",
        ]
    )


def test_warnings_come_once_per_question_and_name_it(tmp_path: Path) -> None:
    # Regression: one warning per distinct SQL, and a certified query's named no question.
    questions = """\
space: shop
eval_questions:
  - {name: mars_a, question: Mars?, sql: SELECT name FROM people WHERE id < 0}
  - {name: mars_b, question: Mars again?, sql: SELECT name FROM people WHERE id < 0}
  - {name: cert_a, question: Venus?, certifiedQuery: venus}
  - {name: cert_b, question: Venus again?, certifiedQuery: venus}
"""
    certified = """\
certified_queries:
  - {name: venus, sql: SELECT name FROM people WHERE id < -1}
  - {name: unused, sql: SELECT name FROM people WHERE id < -2}
"""
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"setup": ["models/*.sql"]},
            "models/people.sql": SETUP,
            "eval_questions/q.yml": questions,
            "certified_queries/c.yml": certified,
        },
    )
    empty = "returns no rows, so any empty answer would pass"
    assert sorted(str(p) for p in preflight(load_project(root))) == [
        "certified_queries/c.yml:3: warning: certified query 'unused' (used by no question) "
        + empty,
        f"eval_questions/q.yml:3: warning: shop/mars_a: ground truth {empty}",
        f"eval_questions/q.yml:4: warning: shop/mars_b: ground truth {empty}",
        f"eval_questions/q.yml:5: warning: shop/cert_a: certified query 'venus' {empty}",
        f"eval_questions/q.yml:6: warning: shop/cert_b: certified query 'venus' {empty}",
    ]


def test_severities(tmp_path: Path) -> None:
    problems = _problems(tmp_path)
    errors = [p for p in problems if p.severity is Severity.ERROR]
    assert len(errors) == 3 and len(problems) == 9


def test_ground_truth_in_another_dialect_is_transpiled_for_the_warehouse(
    tmp_path: Path,
) -> None:
    with sqlite3.connect(tmp_path / "shop.db") as con:
        con.execute("CREATE TABLE people (id INTEGER, name TEXT)")
        con.execute("INSERT INTO people VALUES (1, 'ann'), (2, 'bob')")
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"warehouse": "shop.db", "dialect": "duckdb"},
            "eval_questions/q.yml": """\
            eval_questions:
              - name: listed
                question: Names?
                sql: SELECT name FROM people WHERE name ILIKE 'A%'
              - name: broken_there
                question: Not in SQLite?
                sql: SELECT list(name) FROM people
              - name: cast
                question: Ids?
                sql: SELECT id::VARCHAR AS id FROM people ORDER BY id
            """,
        },
    )
    problems = preflight(load_project(root))
    assert [(p.line, p.severity) for p in problems] == [(5, Severity.ERROR)]
    assert problems[0].message.startswith("ground truth fails on the warehouse: ")


def test_an_unopenable_warehouse_is_one_error_on_sqlbench_yml(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        {
            "sqlbench.yml": {"setup": ["models/*.sql"]},
            "models/bad.sql": "CREATE VIEW v AS SELECT * FROM nothing_here;",
            "eval_questions/q.yml": {
                "eval_questions": [{"name": "a", "question": "A?", "sql": "SELECT 1"}]
            },
        },
    )
    problems = preflight(load_project(root))
    assert len(problems) == 1
    assert str(problems[0]).startswith(
        "sqlbench.yml: error: cannot run the ground truth: models/bad.sql: setup SQL failed: "
        "Catalog Error: Table with name nothing_here does not exist!"
    )


def test_dates_past_pythons_range_are_checked_like_any_value(tmp_path: Path) -> None:
    root = write_project(
        tmp_path,
        {
            "eval_questions/q.yml": """\
            eval_questions:
              - name: far
                question: When?
                sql: >-
                  SELECT DATE '12024-01-01' AS d, 'infinity'::date AS i,
                  'infinity'::timestamp AS t, '24:00:00'::time AS m
              - name: far_tied
                question: First?
                sql: >-
                  SELECT d FROM (VALUES ('infinity'::date, 1), (DATE '12024-01-01', 1),
                  (DATE '2024-01-01', 2)) v(d, k) ORDER BY k LIMIT 1
            """,
        },
    )
    problems = preflight(load_project(root))
    assert [(p.line, p.severity) for p in problems] == [(7, Severity.WARNING)]
    assert "LIMIT 1 cuts between rows that tie" in problems[0].message
