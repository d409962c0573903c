"""A blow-up that only data variants reveal (issue 17): agent SQL that is right on the original
data and builds one huge value on a variant (a row subset) gets ``too_large`` on that variant,
the other questions keep their verdicts, the run completes, and sqlbench with its children,
measured in a subprocess, stays under the red-team ceiling. On embedded DuckDB, a DuckDB file
and a SQLite file."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import duckdb
import pytest
from corpus import run_measured

pytestmark = pytest.mark.hostile

CEILING_MB = 1024
"""As the red-team run's: peak RSS of sqlbench and its children with the low limits."""

PEOPLE = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, age INTEGER);
INSERT INTO people VALUES
    (1, 'ann', 25), (2, 'bob', 31), (3, 'cy', 40), (4, 'di', 52), (5, 'ed', 29);
"""
OLDER = "SELECT name FROM people WHERE age >= 30"
CHANGED = "(SELECT CASE WHEN count(*) <> 5 OR sum(age) <> 177 THEN {n} ELSE 1 END FROM people)"
"""1 on the original data (5 people whose ages add up to 177), ``n`` on a variant that changes
them."""
BLOW_UP = {
    # One 1 GB value, built whole inside DuckDB (its memory_limit does not bound it).
    "duckdb": f"{OLDER} AND length(repeat('x', {CHANGED.format(n=1_000_000_000)})) > 0",
    # An 800 MB text value, unless SQLite's longest value is bounded.
    "sqlite": f"{OLDER} AND length(hex(zeroblob({CHANGED.format(n=400_000_000)}))) > 0",
}
REASON = {
    "duckdb": "took sqlbench's DuckDB query process past the memory it may use",
    "sqlite": "string or blob too big",
}


def _project(root: Path, kind: str) -> str:
    """The project (people, four questions, a replay agent); the warehouse's dialect."""
    (root / "eval_questions").mkdir(parents=True)
    (root / "agents").mkdir()
    if kind == "embedded":
        (root / "setup.sql").write_text(PEOPLE)
        where = "setup: [setup.sql]"
    elif kind == "duckdb_file":
        with duckdb.connect(root / "w.duckdb") as con:
            con.execute(PEOPLE)
        where = "warehouse: w.duckdb"
    else:
        con = sqlite3.connect(root / "w.sqlite")
        con.executescript(PEOPLE)
        con.close()
        where = "warehouse: w.sqlite"
    (root / "sqlbench.yml").write_text(
        f"{where}\ncompare:\n  variants: 4\n"
        "run:\n  concurrency: 8\n  query_timeout_s: 60\n  max_result_mb: 1\n  max_sql_kb: 8\n"
    )
    dialect = "sqlite" if kind == "sqlite_file" else "duckdb"
    questions = {
        "older": (OLDER, "SELECT name FROM people WHERE NOT age < 30"),  # passes on variants
        "lucky": (OLDER, "SELECT name FROM people WHERE age > 30"),  # fails on a variant
        "count": ("SELECT count(*) FROM people", "SELECT count(id) FROM people"),
        "blow_up": (OLDER, BLOW_UP[dialect]),
    }
    (root / "eval_questions" / "q.yml").write_text(
        json.dumps(
            {
                "eval_questions": [
                    {"name": n, "question": n, "sql": t} for n, (t, _) in questions.items()
                ]
            }
        )
    )
    (root / "agents" / "answers.jsonl").write_text(
        "".join(json.dumps({"name": n, "sql": a}) + "\n" for n, (_, a) in questions.items())
    )
    (root / "agents" / "a.yml").write_text(
        "agents:\n  - name: a\n    kind: replay\n    path: answers.jsonl\n"
    )
    return dialect


@pytest.mark.parametrize("kind", ["embedded", "duckdb_file", "sqlite_file"])
def test_a_blow_up_only_on_a_data_variant_is_that_answers_too_large(
    kind: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    dialect = _project(project, kind)
    env = {**os.environ, "SQLBENCH_NO_COLOR": "1"}
    done = run_measured(
        ["run", "-C", str(project), "--agent", "a", "--format", "json"], tmp_path, env
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    results = {r["name"]: r for r in json.loads(done.stdout)["results"]}
    verdicts = {name: result["verdict"] for name, result in results.items()}
    assert verdicts == {"older": "pass", "lucky": "fail", "count": "pass", "blow_up": "fail"}
    assert "and on " in results["older"]["reason"]  # graded on variants, not only the original
    assert "not on data variant #" in results["lucky"]["reason"]
    reason = results["blow_up"]["reason"]
    assert reason.startswith("matches on the original data, but on data variant #"), reason
    assert "the agent's SQL result is too large: " in reason and REASON[dialect] in reason
    print(f"{kind}: peak {done.peak_mb:.0f} MB: {done.processes}")
    assert done.peak_mb < CEILING_MB, f"peak RSS {done.peak_mb:.0f} MB: {done.processes}"
