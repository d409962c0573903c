"""The ORDER BY probe: rows that match only in another order, when the ground truth orders by
keys it does not select, are decided by running the ground truth again with those keys."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from sqlbench import compare_results
from sqlbench.project.load import load_project
from sqlbench.runs.runner import run_benchmarks
from sqlbench.testing import write_project
from sqlbench.verdicts import Verdict

PEOPLE = (
    "CREATE VIEW people AS SELECT * FROM "
    "(VALUES ('a', 30), ('b', 41), ('c', 25), ('d', 30)) t(name, age);\n"
)
TWINS = "CREATE VIEW twins AS SELECT * FROM (VALUES ('x', 1), ('y', 2), ('x', 3)) t(name, age);\n"
GOLD = "SELECT name FROM people ORDER BY age"


def _project(tmp_path: Path, answers: dict[str, dict[str, str]]) -> Path:
    files: dict[str, object] = {
        "sqlbench.yml": {"setup": ["model.sql"], "compare": {"order": "auto"}},
        "model.sql": PEOPLE + TWINS,
        "eval_questions/q.yml": {
            "eval_questions": [
                {"name": "by_age", "question": "Names by age?", "sql": GOLD},
                {"name": "twins", "question": "?", "sql": "SELECT name FROM twins ORDER BY age"},
            ]
        },
    }
    for agent, sqls in answers.items():
        files[f"agents/{agent}.yml"] = {
            "agents": [{"name": agent, "kind": "replay", "path": f"{agent}.jsonl"}]
        }
        files[f"agents/{agent}.jsonl"] = "".join(
            json.dumps({"name": name, "sql": sql}) + "\n" for name, sql in sqls.items()
        )
    return write_project(tmp_path, files)


def test_the_probe_decides_order_reviews(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "reversed": {
                "by_age": "SELECT name FROM people ORDER BY age DESC",
                "twins": "SELECT name FROM twins ORDER BY age DESC",
            },
            "ties_swapped": {
                "by_age": "SELECT name FROM people ORDER BY age, name DESC",
                "twins": "SELECT name FROM twins ORDER BY name DESC",
            },
        },
    )
    # Without the probe, the two results alone cannot tell a tie from a wrong order.
    gold = pd.DataFrame({"name": ["c", "a", "d", "b"]})
    for rows in (["b", "a", "d", "c"], ["c", "d", "a", "b"]):
        alone = compare_results(gold, pd.DataFrame({"n": rows}), order="auto", expected_sql=GOLD)
        assert alone.verdict is Verdict.REVIEW

    wrong, right = run_benchmarks(load_project(root), ["reversed", "ties_swapped"])
    by_age = wrong.question("auto/by_age")
    assert by_age is not None and by_age.verdict is Verdict.FAIL
    assert by_age.reason == (
        "the right rows in a different order: running the ground truth again with its ORDER BY "
        "key as a column shows row 1 of the agent's result has key 41 where the ORDER BY puts 25"
    )
    tie = right.question("auto/by_age")
    assert tie is not None and tie.verdict is Verdict.PASS
    assert "in an order the ground truth's ORDER BY allows" in tie.reason
    # 'x' occurs with keys 1 and 3: its key cannot be told, so the review stands (no guess).
    for run in (wrong, right):
        twins = run.question("auto/twins")
        assert twins is not None
        assert twins.verdict is (Verdict.PASS if run is wrong else Verdict.REVIEW)
