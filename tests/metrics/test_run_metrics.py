"""Agent-behaviour metrics through a real run: stored per result, a failing assertion fails the
question, and every output format carries them."""

from __future__ import annotations

import json
from pathlib import Path

from sqlbench.report import run_json, run_junit, run_markdown, run_text
from sqlbench.runs.plan import RunOptions
from sqlbench.runs.runner import run_benchmark
from sqlbench.testing import write_project
from sqlbench.validation import load_project
from sqlbench.verdicts import Verdict

QUESTIONS = """
eval_questions:
  - name: checked
    question: One?
    sql: SELECT 1 AS one
    expected_tools: [{tool_name: list_tables}, {tool_name: run_sql}]
    expected_trajectory: {steps: [list_tables, run_sql], match: exact}
    assertions:
      - {label: quick, actual: $.latency_ms, operator: less_than, expected: 60000, type: numeric}
      - label: reads one
        actual: "$.tool_calls[?(@.name=='run_sql')].arguments.sql"
        operator: contains
        expected: AS one
  - name: too_slow_words
    question: Two?
    sql: SELECT 2 AS two
    assertions:
      - {label: few tokens, actual: $.usage.output_tokens, operator: less_than, expected: 50,
         type: numeric}
  - name: plain
    question: Three?
    sql: SELECT 3
"""

ANSWERS = [
    {
        "name": "checked",
        "sql": "SELECT 1 AS one",
        "tool_calls": [
            {"name": "list_tables", "arguments": {}, "output": "t", "duration_ms": 3.0},
            {"name": "run_sql", "arguments": {"sql": "SELECT 1 AS one"}, "error": "timeout"},
        ],
    },
    {
        "name": "too_slow_words",
        "sql": "SELECT 2",
        "usage": {"input_tokens": 9, "output_tokens": 75},
    },
    {"name": "plain", "sql": "SELECT 3"},
]


def make_project(tmp_path: Path) -> Path:
    return write_project(
        tmp_path,
        {
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - {name: rec, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": "".join(json.dumps(a) + "\n" for a in ANSWERS),
        },
    )


def test_metrics_are_stored_and_an_assertion_fails_a_passing_question(tmp_path: Path) -> None:
    run = run_benchmark(load_project(make_project(tmp_path)), "rec")
    checked = run.question("auto/checked")
    words = run.question("auto/too_slow_words")
    plain = run.question("auto/plain")
    assert checked is not None and words is not None and plain is not None
    assert checked.verdict is Verdict.PASS
    metrics = checked.first.metrics
    assert metrics["tool_selection_accuracy"].score == 1.0
    assert metrics["task_navigation_efficiency"].detail["passed"] is True
    assert metrics["tool_call_success"].score == 0.5
    assert [a.passed for a in checked.first.assertions] == [True, True]
    # The result set matches, but the assertion fails: fail, with label and actual value.
    assert words.verdict is Verdict.FAIL
    assert words.reason.startswith("assertion 'few tokens' failed: 75 is not less than 50")
    assert "the result set matched" in words.reason
    assert plain.verdict is Verdict.PASS and plain.first.metrics == {}
    assert run.accuracy.passed == 2

    text = run_text.render_run(run)
    assert "tool_selection_accuracy: mean 100% · high 1 · medium 0 · low 0 (1 answer)" in text
    assert "tool_call_success: mean 50% · high 0 · medium 1 · low 0 (1 answer)" in text
    assert "assertions: 2/3 passed" in text
    shown = run_text.render_question(run, checked)
    assert "matched list_tables, run_sql" in shown
    assert "exact match passed · precision 1.00 · recall 1.00 · F1 1.00" in shown
    assert "✗ timeout" in shown

    data = json.loads(run_json.render(run))
    entry = next(r for r in data["results"] if r["name"] == "checked")
    assert entry["metrics"]["task_navigation_efficiency"] == {
        "score": 1.0,
        "passed": True,
        "match": "exact",
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "expected": ["list_tables", "run_sql"],
        "actual": ["list_tables", "run_sql"],
    }
    assert entry["assertions"][0] == {
        "label": "quick",
        "passed": True,
        "actual": entry["latency_ms"],
        "reason": "",
    }
    assert data["metrics"]["tool_call_success"]["mean"] == 0.5
    assert "- tool_selection_accuracy: mean 100%" in run_markdown.render(run)
    junit = run_junit.render(run)
    assert "assertion 'few tokens' failed" in junit
    assert "tool_selection_accuracy: 1.00" in junit


def test_stored_metrics_survive_the_store(tmp_path: Path) -> None:
    from sqlbench.runs.runner import open_store

    project = load_project(make_project(tmp_path))
    run = run_benchmark(project, "rec")
    with open_store(project) as store:
        again = store.load_run(run.info.id)
    question = again.question("auto/checked")
    assert question is not None
    assert question.first.metrics["tool_selection_accuracy"].score == 1.0


def test_show_json_of_one_question_has_the_metric_shape(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sqlbench.cli.main import get_cli

    root = make_project(tmp_path)
    run_benchmark(load_project(root), "rec", RunOptions(name="r1"))
    result = CliRunner().invoke(
        get_cli(), ["show", "-C", str(root), "r1", "checked", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    trial = json.loads(result.stdout)["result"]["trials"][0]
    assert trial["truth_sql"] == "SELECT 1 AS one"
    assert trial["metrics"]["tool_selection_accuracy"]["matched"] == ["list_tables", "run_sql"]
    assert trial["metrics"]["tool_selection_accuracy"]["score"] == 1.0
