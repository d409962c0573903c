"""Finding 10 (third pass): an answer that lists candidates is left to a person.

One row of eight candidate aggregates, one of which is the answer, used to pass as "7 extra
agent columns ignored". Beyond a few extra columns (more than the expected columns and at
least 3) it is ``review`` with that reason; ``compare: {max_extra_columns: N}`` moves the line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from secutil import Sqlbench, write_files

QUESTIONS = "eval_questions:\n  - name: total\n    question: Total?\n    sql: SELECT 42 AS total\n"
CANDIDATES = "SELECT " + ", ".join(f"{n} AS c{n}" for n in (1, 7, 9, 12, 30, 41, 42, 99))


def _project(root: Path, settings: str) -> Path:
    return write_files(
        root,
        {
            "sqlbench.yml": settings,
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - {name: lister, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": json.dumps({"name": "total", "sql": CANDIDATES}) + "\n",
        },
    )


@pytest.mark.parametrize(
    ("settings", "verdict", "reason"),
    [
        ("{}\n", "review", "the answer holds many candidate columns: 8 columns for 1 expected"),
        ("compare: {max_extra_columns: 7}\n", "pass", "7 extra agent columns ignored"),
        ("compare: {max_extra_columns: 2}\n", "review", "more than max_extra_columns 2"),
    ],
)
def test_one_row_of_candidate_aggregates_is_review_not_pass(
    tmp_path: Path, sb: Sqlbench, settings: str, verdict: str, reason: str
) -> None:
    root = _project(tmp_path / "p", settings)
    proc = sb("run", "--agent", "lister", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert result["verdict"] == verdict, result["reason"]
    assert reason in result["reason"]
