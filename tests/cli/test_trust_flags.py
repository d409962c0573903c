"""Flags a run's results carry beside their verdicts (docs/verdicts.md, "Flags"), end to end
through ``sqlbench run``: constant answers, a trace that read the answer key, and passes that
reproduce the certified query."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result

from sqlbench.testing import write_project

Invoke = Callable[..., Result]

FILES = {
    "sqlbench.yml": "dialect: duckdb\nsetup: [models/t.sql]\n",
    "models/t.sql": "CREATE TABLE t AS SELECT * FROM (VALUES (1000.5), (234.0)) v(x);\n",
    "certified_queries/c.yml": """\
        certified_queries:
          - name: total_of_x
            question: Total of x
            sql: SELECT SUM(x) FROM t
        """,
    "eval_questions/q.yml": """\
        space: s
        eval_questions:
          - name: total
            question: Total of x?
            certifiedQuery: total_of_x
          - name: rows
            question: How many rows are there?
            sql: SELECT COUNT(*) FROM t
        """,
    "agents/a.yml": """\
        agents:
          - name: recorded
            kind: replay
            path: answers.jsonl
        """,
}


def _results(invoke: Invoke, root: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(invoke("show", "-C", str(root), "latest", "--format", "json").stdout)
    return {r["name"]: r for r in data["results"]}


def _answers(root: Path, *answers: dict[str, Any]) -> None:
    lines = [json.dumps({"space": "s", **a}) for a in answers]
    (root / "agents" / "answers.jsonl").write_text("\n".join(lines) + "\n")


def test_a_constant_is_review_and_flagged(invoke: Invoke, tmp_path: Path) -> None:
    root = write_project(tmp_path, FILES)
    _answers(root, {"name": "total", "sql": "SELECT 1234.5"}, {"name": "rows", "sql": "VALUES (2)"})
    out = invoke("run", "-C", str(root), "--agent", "recorded").stdout
    assert "Accuracy: 0% (0/2)" in out
    results = _results(invoke, root)
    for name in ("total", "rows"):
        assert results[name]["verdict"] == "review"
        assert results[name]["reason"] == (
            "the agent's SQL does not read the data: its result is a constant"
        )
        assert results[name]["flags"] == ["constant_answer"]


def test_constant_answers_allow_grades_them_as_any_answer(invoke: Invoke, tmp_path: Path) -> None:
    files = {
        **FILES,
        "sqlbench.yml": FILES["sqlbench.yml"] + "compare: {constant_answers: allow}\n",
    }
    root = write_project(tmp_path, files)
    _answers(root, {"name": "total", "sql": "SELECT 1234.5"}, {"name": "rows", "sql": "SELECT 2"})
    assert "Accuracy: 100% (2/2)" in invoke("run", "-C", str(root), "--agent", "recorded").stdout
    assert _results(invoke, root)["total"]["flags"] == ["constant_answer"]


def test_a_trace_that_read_a_question_file_is_review(invoke: Invoke, tmp_path: Path) -> None:
    root = write_project(tmp_path, FILES)
    peek = {"name": "read_file", "arguments": {"path": "../eval_questions/q.yml"}}
    _answers(
        root,
        {"name": "total", "sql": "SELECT SUM(x) FROM t", "tool_calls": [peek]},
        {"name": "rows", "sql": "SELECT COUNT(*) FROM t"},
    )
    invoke("run", "-C", str(root), "--agent", "recorded")
    results = _results(invoke, root)
    assert results["total"]["verdict"] == "review"
    assert "ground_truth_seen" in results["total"]["flags"]
    assert results["rows"]["verdict"] == "pass" and results["rows"]["flags"] == []


def test_accuracy_says_how_many_passes_reproduced_the_certified_query(
    invoke: Invoke, tmp_path: Path
) -> None:
    root = write_project(tmp_path, FILES)
    _answers(
        root,
        {"name": "total", "sql": "select sum(x)\nfrom t;"},
        {"name": "rows", "sql": "SELECT COUNT(*) FROM t"},
    )
    out = invoke("run", "-C", str(root), "--agent", "recorded").stdout
    assert "Accuracy: 100% (2/2); 1 of 2 passes reproduced the certified query" in out
    assert _results(invoke, root)["total"]["flags"] == ["from_certified_query"]
    data = json.loads(invoke("show", "-C", str(root), "latest", "--format", "json").stdout)
    assert data["accuracy"]["from_certified_query"] == 1
