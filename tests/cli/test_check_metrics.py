"""Metric deltas in ``sqlbench compare`` and metric gates in ``sqlbench check``, on a real
temporary git repository whose ``dev`` branch makes the agent call extra tools."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]
NAMES = [f"q{i}" for i in range(1, 8)]


def questions() -> str:
    lines = ["eval_questions:"]
    for number, name in enumerate(NAMES, start=1):
        lines += [
            f"  - name: {name}",
            f"    question: Number {number}?",
            f"    sql: SELECT {number} AS n",
            "    expected_tools: [{tool_name: run_sql}]",
        ]
    return "\n".join(lines) + "\n"


def answers(extra_calls: int) -> str:
    rows = []
    for number, name in enumerate(NAMES, start=1):
        calls = [{"name": "list_tables"}] * extra_calls + [{"name": "run_sql"}]
        rows.append(json.dumps({"name": name, "sql": f"SELECT {number}", "tool_calls": calls}))
    return "\n".join(rows) + "\n"


SETTINGS = """check:
  metrics:
    tool_selection_accuracy: {min: 0.9, no_significant_drop: true}
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(
        {
            "sqlbench.yml": SETTINGS,
            "eval_questions/q.yml": questions(),
            "agents/a.yml": "agents:\n  - {name: rec, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": answers(0),
        },
        "base",
    )
    repo.commit({"agents/a.jsonl": answers(1)}, "agent looks tables up first", branch="dev")
    return repo


def test_compare_shows_metric_deltas_with_a_paired_test(repo: GitRepo, invoke: Invoke) -> None:
    result = invoke(
        "compare", "-C", str(repo.root), "--base", "main", "--head", "dev", "--agent", "rec"
    )
    assert "tool_selection_accuracy: base 100% → head 50% (-50.0 points on 7 shared" in (
        result.stdout
    )
    assert ": regressed)" in result.stdout
    assert "dropped most: auto/q1 100% → 50%" in result.stdout
    data = json.loads(
        invoke(
            "compare", "-C", str(repo.root), "--base", "main", "--head", "dev",
            "--agent", "rec", "--format", "json",
        ).stdout
    )  # fmt: skip
    delta = data["metrics"]["tool_selection_accuracy"]
    assert (delta["base_mean"], delta["head_mean"]) == (1.0, 0.5)
    assert delta["paired_test"]["conclusion"] == "regressed"
    assert delta["paired_test"]["p_value"] == pytest.approx(2 / 2**7)
    assert len(delta["dropped"]) == 5


def test_check_fails_on_a_metric_gate_without_any_fail_on_entry(
    repo: GitRepo, invoke: Invoke
) -> None:
    result = invoke(
        "check", "-C", str(repo.root), "--base", "main", "--head", "dev", "--agent", "rec",
        exit_code=1,
    )  # fmt: skip
    assert "sqlbench check failed (metric tool_selection_accuracy)" in result.stdout
    assert "head mean 50.0% is under the minimum 90%" in result.stdout
    assert "significant drop from base 100.0% (p = 0.0156, alpha 0.05)" in result.stdout
    same = invoke(
        "check", "-C", str(repo.root), "--base", "main", "--head", "main", "--agent", "rec"
    )
    assert "head mean 100.0%, min 90%" in same.stdout


def test_an_unknown_gated_metric_is_a_validation_error(repo: GitRepo, invoke: Invoke) -> None:
    (repo.root / "sqlbench.yml").write_text("check:\n  metrics:\n    tool_selection: {min: 1}\n")
    result = invoke("validate", "-C", str(repo.root), exit_code=1)
    assert (
        "sqlbench.yml:3: error: check.metrics: unknown metric 'tool_selection'; did you mean "
        "'tool_selection_accuracy'?"
    ) in result.stdout + result.stderr
