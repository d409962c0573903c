"""``sqlbench runs`` and ``sqlbench show RUN [QUESTION]``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

RUN_LOOP = Path(__file__).resolve().parents[1] / "fixtures" / "run_loop"


@pytest.fixture
def project(tmp_path: Path, invoke) -> Path:
    """The run-loop project with one completed run named ``r1``."""
    root = Path(shutil.copytree(RUN_LOOP, tmp_path / "project"))
    invoke("run", "-C", str(root), "--name", "r1")
    return root


def test_runs_lists_name_environment_branch_agent_status_accuracy(invoke, project: Path) -> None:
    invoke("run", "-C", str(project), "--name", "r2", "--select", "count_customers")
    out = invoke("runs", "-C", str(project)).stdout
    lines = out.splitlines()
    assert lines[0].split() == [
        "Name",
        "Environment",
        "Branch",
        "Agent",
        "Status",
        "Accuracy",
        "Created",
        "by",
        "Last",
        "updated",
    ]
    body = [ln for ln in lines[2:] if ln.strip()]
    assert body[0].split()[0] == "r2" and body[1].split()[0] == "r1"  # newest first
    assert "scripted (python)" in body[1] and "Completed" in body[1] and "30% (3/10)" in body[1]
    assert "dev" in body[1] and "working tree" in body[1]
    data = json.loads(invoke("runs", "-C", str(project), "--format", "json").stdout)
    assert [r["name"] for r in data["runs"]] == ["r2", "r1"]
    assert data["runs"][1]["passed"] == 3 and data["runs"][1]["total"] == 10
    assert (
        len(
            json.loads(invoke("runs", "-C", str(project), "-n", "1", "--format", "json").stdout)[
                "runs"
            ]
        )
        == 1
    )


def test_runs_outside_a_project_is_one_sentence(invoke, tmp_path: Path) -> None:
    result = invoke("runs", "-C", str(tmp_path), exit_code=2)
    assert "is not a sqlbench project" in result.stderr


def test_runs_works_while_a_question_file_is_broken(invoke, project: Path) -> None:
    (project / "eval_questions" / "sales.yml").write_text("eval_questions: [")
    assert "r1" in invoke("runs", "-C", str(project)).stdout


def test_runs_with_a_non_utf8_settings_file_is_one_sentence(invoke, project: Path) -> None:
    # Regression: the message was Python's "'utf-8' codec can't decode byte 0xff ...".
    (project / "sqlbench.yml").write_bytes(b"store: \xff\xfe\n")
    result = invoke("runs", "-C", str(project), exit_code=2)
    assert result.stderr == "Error: sqlbench.yml: not UTF-8 text\n"


def test_show_run_prints_the_table(invoke, project: Path) -> None:
    out = invoke("show", "-C", str(project), "r1").stdout
    assert "sales/emea_names" in out and "Accuracy: 30% (3/10)" in out


def test_show_question_in_full(invoke, project: Path) -> None:
    out = invoke("show", "-C", str(project), "r1", "sales/emea_names").stdout
    assert "sales/emea_names  fail" in out
    assert "Reason: " in out
    assert "Ground truth SQL:\n  SELECT name FROM customers WHERE region = 'EMEA'" in out
    assert "Agent SQL:\n  SELECT name FROM customers WHERE region = 'APAC'" in out
    assert "Expected result (2 rows; 2 with no partner, marked ✗):" in out
    assert "Agent result (1 row; 1 with no partner, marked ✗):" in out
    marked = [ln for ln in out.splitlines() if "✗" in ln and ("Ann" in ln or "Bob" in ln)]
    assert len(marked) == 2
    assert "latency" in out


def test_show_question_by_bare_name_and_words_answer(invoke, project: Path) -> None:
    out = invoke("show", "-C", str(project), "r1", "words").stdout
    assert "sales/words  review" in out and "Agent SQL: (no SQL)" in out
    assert "Answer:\n  There are three customers." in out


def test_show_question_json(invoke, project: Path) -> None:
    data = json.loads(
        invoke("show", "-C", str(project), "r1", "sales/top_customer", "--format", "json").stdout
    )
    assert data["run"]["name"] == "r1"
    result = data["result"]
    assert result["verdict"] == "pass" and result["trials"][0]["matched_truth"] == 1


def test_show_unknown_run_or_question(invoke, project: Path) -> None:
    result = invoke("show", "-C", str(project), "r11", exit_code=2)
    assert "no run named 'r11'" in result.stderr and "did you mean 'r1'?" in result.stderr
    result = invoke("show", "-C", str(project), "r1", "sales/emea_name", exit_code=2)
    assert "run r1 has no question 'sales/emea_name'; did you mean 'sales/emea_names'?" in (
        result.stderr
    )
    result = invoke("show", "-C", str(project), "r1", "words", "--trial", "4", exit_code=2)
    assert "has no trial #4" in result.stderr


def test_a_fail_keeps_its_whole_difference_in_json(invoke, project: Path) -> None:
    data = json.loads(invoke("show", "-C", str(project), "r1", "--format", "json").stdout)
    by_name = {r["name"]: r for r in data["results"]}
    difference = by_name["emea_names"]["difference"]
    assert difference["problem"] == "row_count"
    assert difference["expected_rows"] == 2 and difference["actual_rows"] == 1
    assert difference["expected_example"] == "('Ann')"
    assert by_name["count_customers"]["difference"] is None


def test_a_store_on_a_file_is_one_sentence(invoke, project: Path) -> None:
    (project / "afile").write_text("not a folder")
    settings = project / "sqlbench.yml"
    settings.write_text(settings.read_text() + "\nstore: afile/runs.db\n")
    result = invoke("runs", "-C", str(project), exit_code=2)
    assert result.stderr.startswith("Error: cannot create the folder of `store: afile/runs.db`")
    assert "afile is a file, not a folder" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_failed_run_says_why_in_runs_and_show(invoke, project: Path) -> None:
    (project / "models" / "zz_broken.sql").write_text("CREATE VIEW v AS SELECT * FROM nowhere;\n")
    invoke("run", "-C", str(project), "--name", "broken", exit_code=2)
    listing = invoke("runs", "-C", str(project)).stdout
    assert "broken failed: " in listing and "nowhere" in listing
    shown = invoke("show", "-C", str(project), "broken").stdout
    assert "Failed: " in shown and "nowhere" in shown
    data = json.loads(invoke("runs", "-C", str(project), "--format", "json").stdout)
    assert "nowhere" in data["runs"][0]["error"]


def test_partial_runs_are_marked_in_runs_and_show(invoke, project: Path) -> None:
    invoke("run", "-C", str(project), "--name", "part", "--select", "count_customers")
    listing = invoke("runs", "-C", str(project)).stdout
    line = next(ln for ln in listing.splitlines() if ln.startswith("part "))
    assert "100% (1/1) partial" in line
    full = next(ln for ln in listing.splitlines() if ln.startswith("r1 "))
    assert "partial" not in full
    assert "part: --select count_customers" in listing
    assert (
        "Partial run: --select count_customers" in invoke("show", "-C", str(project), "part").stdout
    )
    data = json.loads(invoke("runs", "-C", str(project), "--format", "json").stdout)
    assert [r["partial"] for r in data["runs"]] == [True, False]


def test_show_filters_by_verdict_space_and_select(invoke, project: Path) -> None:
    out = invoke("show", "-C", str(project), "r1", "--verdict", "fail,error").stdout
    rows = [ln.split()[0] for ln in out.splitlines() if ln.startswith(("sales/", "ops/"))]
    assert rows and set(rows) == {
        "sales/emea_names",
        "sales/syntax",
        "sales/drop",
        "ops/region_count",
        "sales/broken_truth",
    }
    assert "Showing 5 of 11 questions" in out and "Accuracy: 30% (3/10)" in out
    out = invoke("show", "-C", str(project), "r1", "--space", "ops").stdout
    table = out.split("Showing")[0]
    assert "ops/region_count" in table and "sales/" not in table
    data = json.loads(
        invoke("show", "-C", str(project), "r1", "--select", "sales/e*", "--format", "json").stdout
    )
    assert [r["name"] for r in data["results"]] == ["emea_names"]
    assert data["by_space"]["ops"] == {"passed": 0, "total": 1, "value": 0.0}
    assert data["latency_ms"]["p95"] >= data["latency_ms"]["p50"] > 0
    bad = invoke("show", "-C", str(project), "r1", "--verdict", "fial", exit_code=2)
    assert "unknown verdict 'fial'; did you mean 'fail'?" in bad.stderr


def test_show_summary_gives_accuracy_per_space_latency_and_tokens(invoke, project: Path) -> None:
    out = invoke("show", "-C", str(project), "r1", "--summary").stdout
    assert "By space:" in out and "  ops " in out and "  sales " in out
    assert "Latency p50 " in out and " · p95 " in out
    assert "sales/emea_names" not in out  # no per-question table


def test_runs_delete_and_prune(invoke, project: Path) -> None:
    invoke("run", "-C", str(project), "--name", "r2", "--select", "count_customers")
    invoke("run", "-C", str(project), "--name", "r3", "--select", "count_customers")
    assert invoke("runs", "-C", str(project), "delete", "r2").stdout == "Removed run r2\n"
    dry = invoke("runs", "-C", str(project), "prune", "--keep-last", "1", "--dry-run").stdout
    assert dry.splitlines() == ["Would remove run r1", "Would remove 1 run."]
    invoke("runs", "-C", str(project), "prune", "--keep-last", "1")
    names = [
        r["name"]
        for r in json.loads(invoke("runs", "-C", str(project), "--format", "json").stdout)["runs"]
    ]
    assert names == ["r3"]
    assert "say what to prune" in invoke("runs", "-C", str(project), "prune", exit_code=2).stderr
    bad = invoke("runs", "-C", str(project), "prune", "--older-than", "3 weeks", exit_code=2)
    assert "is not an age" in bad.stderr
    assert (
        "no run named 'zz'"
        in invoke("runs", "-C", str(project), "delete", "zz", exit_code=2).stderr
    )


def test_tables_fit_an_80_column_terminal(invoke, project: Path, monkeypatch) -> None:
    # Regression: tables were always 120 wide and the terminal wrapped every line in two.
    from sqlbench.cli import runs as runs_module
    from sqlbench.cli import show as show_module

    monkeypatch.setattr(show_module, "terminal_width", lambda: 80)
    monkeypatch.setattr(runs_module, "terminal_width", lambda: 60)
    shown = invoke("show", "-C", str(project), "r1").stdout
    assert max(len(line) for line in shown.splitlines()) <= 80
    assert "sales/emea_names" in shown
    listing = invoke("runs", "-C", str(project)).stdout
    assert max(len(line) for line in listing.splitlines() if not line.startswith("partial")) <= 60
    row = next(line for line in listing.splitlines() if line.startswith("r1 "))
    assert "working tree" in row  # branch@commit is never cut


def test_one_row_previews_say_row_not_rows(invoke, project: Path) -> None:
    out = invoke("show", "-C", str(project), "r1", "sales/emea_names").stdout
    assert "Agent result (1 row; 1 with no partner" in out and "1 rows" not in out


def test_show_prints_an_agents_stderr_with_its_line_breaks(invoke, project: Path) -> None:
    (project / "agents" / "crash.py").write_text(
        "import sys\n"
        "print('loading model', file=sys.stderr)\n"
        "print('Traceback (most recent call last):', file=sys.stderr)\n"
        "print('ValueError: the model returned garbage', file=sys.stderr)\n"
        "sys.exit(1)\n"
    )
    with (project / "agents" / "agents.yml").open("a") as agents:
        agents.write(
            "  - name: crash\n    kind: command\n    command: [python3, agents/crash.py]\n"
        )
    invoke(
        "run", "-C", str(project), "--name", "c", "--agent", "crash", "--select", "count_customers"
    )
    out = invoke("show", "-C", str(project), "c", "sales/count_customers").stdout
    assert (
        "Agent error: the command exited with status 1; stderr:\n"
        "  loading model\n"
        "  Traceback (most recent call last):\n"
        "  ValueError: the model returned garbage\n"
    ) in out
    assert " | " not in out.split("Agent error:")[1]
    # The reason (one line, for tables) keeps the lines apart.
    data = json.loads(invoke("show", "-C", str(project), "c", "--format", "json").stdout)
    assert data["results"][0]["reason"] == (
        "agent error: the command exited with status 1; stderr: loading model | "
        "Traceback (most recent call last): ValueError: the model returned garbage"
    )


def test_no_answers_timings_hold_the_query_process_start(invoke, project: Path) -> None:
    """A run starts sqlbench's query process before its first question (its setup runs again
    in it): no answer's truth or agent_sql time holds that start-up."""
    results = json.loads(invoke("show", "-C", str(project), "r1", "--format", "json").stdout)[
        "results"
    ]
    assert results
    assert not [r for r in results if "query_process_start" in r["timings_ms"]]


def test_show_says_how_much_of_agent_sql_was_starting_the_query_process() -> None:
    """Where an answer did wait for a start (a query process lost and started again mid-run),
    show says so inside agent_sql's own figure."""
    from sqlbench.report.run_text import timing_facts

    text = timing_facts(
        {"truth": 2.0, "agent_sql": 533.0, "compare": 1.0, "query_process_start": 480.0}
    )
    assert "agent_sql 533 ms (checking and running the agent's SQL), of which 480 ms" in text
    assert "query_process_start" not in text
