"""``sqlbench review``: a person's decision beside the automatic verdict (docs/commands.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

RUN_LOOP = Path(__file__).resolve().parents[1] / "fixtures" / "run_loop"


@pytest.fixture
def project(tmp_path: Path, invoke) -> Path:
    """The run-loop project with one completed run named ``r1`` (30% (3/10))."""
    root = Path(shutil.copytree(RUN_LOOP, tmp_path / "project"))
    invoke("run", "-C", str(root), "--name", "r1")
    return root


def _json(invoke, project: Path, run: str) -> dict:
    return json.loads(invoke("show", "-C", str(project), run, "--format", "json").stdout)


def test_a_decision_counts_in_accuracy_and_keeps_the_automatic_verdict(invoke, project) -> None:
    out = invoke(
        "review", "-C", str(project), "r1", "sales/emea_names", "pass", "--note", "APAC is fine"
    ).stdout
    assert "automatic verdict fail, human decision pass, decided by " in out
    assert ": APAC is fine" in out
    assert "Accuracy: 40% (4/10, 1 decided by a person)" in out
    # A decided pass that did not pass on its own: the also_accept YAML to paste.
    assert "also_accept:\n  - |-\n    SELECT name FROM customers WHERE region = 'APAC'\n" in out

    data = _json(invoke, project, "r1")
    assert data["accuracy"]["passed"] == 4 and data["accuracy"]["human"] == 1
    entry = next(r for r in data["results"] if r["name"] == "emea_names")
    assert entry["verdict"] == "fail" and entry["human"]["verdict"] == "pass"
    assert entry["human"]["note"] == "APAC is fine" and entry["human"]["carried_from"] is None
    runs = json.loads(invoke("runs", "-C", str(project), "--format", "json").stdout)["runs"]
    assert (runs[0]["passed"], runs[0]["total"], runs[0]["human"]) == (4, 10, 1)
    table = invoke("show", "-C", str(project), "r1").stdout
    assert "fail → pass (person)" in table and "4/10, 1 decided by a person" in table
    detail = invoke("show", "-C", str(project), "r1", "sales/emea_names").stdout
    assert "Human decision: pass, decided by" in detail

    # Deciding again replaces the decision; a fail on a passing question lowers accuracy.
    out = invoke("review", "-C", str(project), "r1", "sales/emea_names", "fail").stdout
    assert "replacing pass" in out and "Accuracy: 30% (3/10, 1 decided by a person)" in out
    out = invoke("review", "-C", str(project), "r1", "sales/count_customers", "fail").stdout
    assert "Accuracy: 20% (2/10, 2 decided by a person)" in out and "also_accept" not in out


def test_review_refuses_what_cannot_be_decided(invoke, project) -> None:
    result = invoke("review", "-C", str(project), "r1", "sales/later", "pass", exit_code=2)
    assert result.stderr == "Error: sales/later was skipped in run r1: there is nothing to decide\n"
    result = invoke("review", "-C", str(project), "r1", "sales/emea_name", "pass", exit_code=2)
    assert "did you mean 'sales/emea_names'?" in result.stderr
    result = invoke("review", "-C", str(project), "r1", "sales/emea_names", "maybe", exit_code=2)
    assert "'maybe' is not one of 'pass', 'fail'" in result.stderr
    out = invoke("review", "-C", str(project), "r1", "sales/words", "pass").stdout
    assert "also_accept" not in out  # words, no SQL: nothing to propose


def test_a_decision_survives_export_and_import(invoke, project, tmp_path) -> None:
    invoke("review", "-C", str(project), "r1", "sales/no_truth", "pass", "--note", "checked")
    exported = invoke("export", "-C", str(project), "r1").stdout
    document = json.loads(exported)
    assert [(r["space"], r["name"], r["verdict"]) for r in document["reviews"]] == [
        ("sales", "no_truth", "pass")
    ]
    other = Path(shutil.copytree(RUN_LOOP, tmp_path / "other"))
    artifact = tmp_path / "r1.json"
    artifact.write_text(exported, encoding="utf-8")
    invoke("import", "-C", str(other), str(artifact))
    data = _json(invoke, other, "r1")
    assert data["accuracy"]["human"] == 1 and data["accuracy"]["passed"] == 4
    entry = next(r for r in data["results"] if r["name"] == "no_truth")
    assert entry["human"]["note"] == "checked"

    # A review naming a question the run does not hold is refused in one sentence.
    document["reviews"][0]["name"] = "ghost"
    artifact.write_text(json.dumps(document), encoding="utf-8")
    refused = invoke("import", "-C", str(other), str(artifact), "--name", "x", exit_code=2)
    assert "reviews[0] names a question the run does not hold (sales/ghost)" in refused.stderr


def test_a_decision_is_carried_only_while_truth_and_sql_are_unchanged(invoke, project) -> None:
    invoke("review", "-C", str(project), "r1", "sales/emea_names", "pass")
    invoke("review", "-C", str(project), "r1", "sales/no_truth", "pass")
    invoke("review", "-C", str(project), "r1", "sales/count_customers", "fail")
    invoke("run", "-C", str(project), "--name", "r2")
    data = _json(invoke, project, "r2")
    carried = {r["name"]: r["human"] for r in data["results"] if r["human"]}
    assert set(carried) == {"emea_names", "no_truth", "count_customers"}
    assert carried["emea_names"]["carried_from"] == "r1"
    assert data["accuracy"]["human"] == 3 and data["accuracy"]["passed"] == 4
    assert "carried from run r1" in invoke("show", "-C", str(project), "r2", "emea_names").stdout

    # The agent's SQL changes for emea_names, the ground truth for count_customers: only the
    # question whose inputs are unchanged (no_truth) keeps the decision.
    scripted = project / "agents" / "scripted.py"
    scripted.write_text(
        scripted.read_text().replace("region = 'APAC'", "region = 'APAC' "), encoding="utf-8"
    )
    questions = project / "eval_questions" / "sales.yml"
    questions.write_text(
        questions.read_text().replace("count(*) AS n FROM", "count(*) AS n  FROM"),
        encoding="utf-8",
    )
    invoke("run", "-C", str(project), "--name", "r3")
    data = _json(invoke, project, "r3")
    decided = {r["name"]: r["human"]["carried_from"] for r in data["results"] if r["human"]}
    assert decided == {"no_truth": "r1"}
    assert data["accuracy"]["passed"] == 4 and data["accuracy"]["human"] == 1


def test_compare_counts_a_decision_and_says_a_flip_only_it_made(invoke, project) -> None:
    invoke("run", "-C", str(project), "--name", "r2")
    invoke("review", "-C", str(project), "r2", "sales/emea_names", "pass")
    out = invoke("compare", "-C", str(project), "r1", "r2").stdout
    assert "40% (4/10, 1 decided by a person)" in out
    assert "(1, 1 by a person's decision only)" in out
    assert "pass (person; automatic fail)" in out
    machine = invoke("compare", "-C", str(project), "r1", "r2", "--automatic-only").stdout
    assert "40%" not in machine and "1 decision by a person left out" in machine
    document = json.loads(
        invoke("compare", "-C", str(project), "r1", "r2", "--format", "json").stdout
    )
    assert document["head"]["accuracy"]["human"] == 1 and document["counts"]["by_person"] == 1


def test_junit_counts_a_decision_as_the_accuracy_does(invoke, project, tmp_path) -> None:
    invoke("review", "-C", str(project), "r1", "sales/emea_names", "pass")
    invoke("run", "-C", str(project), "--name", "r2")  # carries the decision
    junit = invoke("run", "-C", str(project), "--name", "r3", "--format", "junit").stdout
    case = junit.split('name="emea_names"', 1)[1].split("</testcase>", 1)[0]
    assert "<failure" not in case and "fail → pass (person)" in case


def test_automatic_only_gives_the_machines_figure_in_runs_and_show(invoke, project) -> None:
    invoke("review", "-C", str(project), "r1", "sales/emea_names", "pass")
    assert "40% (4/10, 1 decided by a person)" in invoke("runs", "-C", str(project)).stdout
    machine = invoke("runs", "-C", str(project), "--automatic-only").stdout
    assert "30% (3/10)" in machine and "person" not in machine
    shown = invoke("show", "-C", str(project), "r1", "--summary", "--automatic-only").stdout
    assert shown.startswith("Accuracy: 30% (3/10)\n")


def test_the_reports_comparison_counts_decisions_and_says_so(invoke, project, tmp_path) -> None:
    invoke("run", "-C", str(project), "--name", "r2")
    invoke("review", "-C", str(project), "r2", "sales/emea_names", "pass")
    out = tmp_path / "r.html"
    invoke("report", "-C", str(project), "r2", "--base", "r1", "-o", str(out))
    page = out.read_text(encoding="utf-8")
    assert "Automatic verdicts" not in page
    assert "Accuracy 30% → 40%" in page and "Counted: a person&#39;s decision counts" in page
    assert "sales/emea_names (a person's decision only)" in page


def test_review_turn_decides_one_turn_of_a_conversation(invoke, tmp_path: Path) -> None:
    from sqlbench.testing import write_project

    root = write_project(
        tmp_path / "talk",
        {
            "eval_questions/q.yml": (
                "eval_questions:\n"
                "  - name: talk\n"
                "    turns:\n"
                "      - {question: How many?, sql: SELECT 3 AS n}\n"
                "      - {question: Only the big ones?, sql: SELECT 2 AS n}\n"
            ),
            "agents/a.yml": "agents:\n  - {name: rec, kind: replay, path: a.jsonl}\n",
            "agents/a.jsonl": (
                '{"name": "talk", "turn": 1, "sql": "SELECT 3"}\n'
                '{"name": "talk", "turn": 2, "answer": "Two: orders 7 and 9."}\n'
            ),
        },
    )
    invoke("run", "-C", str(root), "--agent", "rec", "--name", "r1")
    out = invoke("review", "-C", str(root), "r1", "talk", "pass", "--turn", "2").stdout
    assert "automatic verdict review, human decision turn 2 pass (the conversation: pass)" in out
    assert "Accuracy: 100% (1/1, 1 decided by a person)" in out
    refused = invoke("review", "-C", str(root), "r1", "talk", "pass", "--turn", "3", exit_code=2)
    assert "auto/talk asked 2 turns in run r1: there is no turn 3 to decide" in refused.output
    entry = _json(invoke, root, "r1")["results"][0]
    assert entry["human"]["turns"] == {"2": "pass"}
