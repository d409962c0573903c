"""``sqlbench run`` from the command line: outputs, exit codes, and the kill -9 / resume story
on a real ``sqlbench`` subprocess."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sqlbench.records.run import RunStatus
from sqlbench.runs.store import RunStore
from sqlbench.testing import GitRepo

RUN_LOOP = Path(__file__).resolve().parents[1] / "fixtures" / "run_loop"
ASKABLE = {
    "ops/region_count",
    "sales/count_customers",
    "sales/revenue_by_region",
    "sales/emea_names",
    "sales/top_customer",
    "sales/no_truth",
    "sales/syntax",
    "sales/drop",
    "sales/words",
}
"""Questions the agent is asked (not the skipped one, not the one with broken ground truth)."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return Path(shutil.copytree(RUN_LOOP, tmp_path / "project"))


def asked(project: Path) -> list[str]:
    log = project / "asked.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def sqlbench(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sqlbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )  # type: ignore[call-overload]


def test_table_progress_and_accuracy(invoke, project: Path) -> None:
    result = invoke("run", "-C", str(project), "--name", "first")
    out = result.stdout
    assert "sales/count_customers" in out and "Accuracy: 30% (3/10)" in out
    assert "pass 3 · fail 3 · review 2 · error 2 · skipped 1" in out
    assert "Run first · dev · working tree · agent scripted (python)" in out
    # Not a terminal: one plain progress line per question on stderr.
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("[")]
    assert len(lines) == 11 and lines[-1].startswith("[11/11]")
    assert any("fail    sales/emea_names" in ln for ln in lines)
    assert result.stderr.splitlines()[0].startswith("Starting run first: 11 of 11 answers")


def test_quiet_prints_the_summary_only(invoke, project: Path) -> None:
    result = invoke("run", "-C", str(project), "--name", "calm", "--quiet")
    assert "sales/count_customers" not in result.stdout  # no per-question table
    assert "Accuracy: 30% (3/10)" in result.stdout
    assert result.stdout.rstrip().endswith("Per question: sqlbench show calm")
    assert not [ln for ln in result.stderr.splitlines() if ln.startswith("[")]
    # The outputs keep every question.
    data = json.loads(invoke("run", "-C", str(project), "-q", "--format", "json").stdout)
    assert len(data["results"]) == 11


def test_several_agents_print_one_summary_line_each(invoke, project: Path) -> None:
    result = invoke("run", "-C", str(project), "--agent", "scripted,slow")
    assert "sales/count_customers" not in result.stdout + result.stderr
    rows = [ln.split()[0] for ln in result.stdout.splitlines()[2:-1]]
    assert rows == ["scripted", "slow"]
    assert result.stdout.splitlines()[-1].startswith("Per question: sqlbench show RUN (")


def test_json_output(invoke, project: Path) -> None:
    data = json.loads(invoke("run", "-C", str(project), "--format", "json").stdout)
    assert data["schema_version"] == 1
    assert data["accuracy"] == {
        "passed": 3,
        "total": 10,
        "human": 0,
        "not_asked": 0,
        "from_certified_query": 0,
        "disputed": 0,
        "value": 0.3,
        "questions": 10,
        "interval": None,
    }
    assert data["run"]["agent"]["name"] == "scripted" and data["run"]["status"] == "completed"
    by_name = {(r["space"], r["name"]): r for r in data["results"]}
    assert by_name[("sales", "emea_names")]["verdict"] == "fail"
    assert by_name[("sales", "later")]["verdict"] == "skipped"
    # A typo in the agent's SQL is a syntax error in DuckDB's words, not "not read-only".
    assert by_name[("sales", "syntax")]["reason"] == (
        'the agent\'s SQL has a syntax error: Parser Error: syntax error at or near "SELEC"'
    )
    assert {r["verdict"] for r in data["results"]} == {"pass", "fail", "review", "error", "skipped"}


def test_a_printing_python_agent_does_not_corrupt_json_on_stdout(invoke, project: Path) -> None:
    # Regression: an in-process python agent's print() went to stdout, before the JSON report.
    (project / "agents" / "noisy.py").write_text(
        'print("loading the model...")\n\ndef answer(request):\n'
        '    print("thinking about", request["name"])\n    return "SELECT 1"\n'
    )
    (project / "agents" / "noisy.yml").write_text(
        "agents:\n  - name: noisy\n    kind: python\n    function: agents.noisy:answer\n"
    )
    result = invoke("run", "-C", str(project), "--agent", "noisy", "--format", "json")
    data = json.loads(result.stdout)
    assert data["run"]["agent"]["name"] == "noisy"
    assert "loading the model..." in result.stderr and "thinking about" in result.stderr


@pytest.mark.slow
def test_json_on_stdout_with_live_progress_on_a_terminal(project: Path) -> None:
    # stderr a terminal: the live progress bar redirects stdout while it runs; the report must
    # still reach stdout afterwards (a wrong nesting once left stdout pointing at stderr).
    pty = pytest.importorskip("pty")
    (project / "agents" / "noisy.py").write_text(
        'def answer(request):\n    print("thinking")\n    return "SELECT 1"\n'
    )
    (project / "agents" / "noisy.yml").write_text(
        "agents:\n  - name: noisy\n    kind: python\n    function: agents.noisy:answer\n"
    )
    leader, follower = pty.openpty()
    try:
        args = ["run", "-C", str(project), "--agent", "noisy", "--format", "json"]
        run = subprocess.Popen(
            [sys.executable, "-m", "sqlbench", *args],
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
        )
        os.close(follower)
        out, _ = run.communicate(timeout=120)
        terminal = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            terminal += chunk
    finally:
        os.close(leader)
    assert run.returncode == 0
    assert json.loads(out)["run"]["agent"]["name"] == "noisy"
    assert b"thinking" in terminal


def test_options_from_the_environment_follow_the_flag_names(invoke, project: Path) -> None:
    # Regression: README's SQLBENCH_<COMMAND>_<OPTION> did not work where the parameter is
    # named otherwise (--format is `fmt`, --name `run_name`, --agent `agent_name`).
    env = {"SQLBENCH_RUN_FORMAT": "json", "SQLBENCH_RUN_NAME": "from-env"}
    data = json.loads(invoke("run", "-C", str(project), env=env).stdout)
    assert data["run"]["name"] == "from-env" and data["run"]["agent"]["name"] == "scripted"
    listed = invoke("runs", "-C", str(project), env={"SQLBENCH_RUNS_FMT": "json"}).stdout
    assert json.loads(listed)["runs"][0]["name"] == "from-env"  # click's own name still works


def test_junit_and_markdown_files(invoke, project: Path, tmp_path: Path) -> None:
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    result = invoke("run", "-C", str(project), "--format", "junit", "--output", str(junit))
    assert result.stdout == ""
    assert "Accuracy: 30% (3/10); wrote" in result.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (
        suite.get("tests"),
        suite.get("failures"),
        suite.get("errors"),
        suite.get("skipped"),
    ) == ("11", "3", "2", "3")
    markdown = invoke("run", "-C", str(project), "--format", "markdown").stdout
    assert "**Accuracy: 30% (3/10)**" in markdown and "| ❌ | `sales/emea_names` | fail |" in (
        markdown
    )


def test_output_into_a_missing_folder_is_refused_before_running(
    invoke, project: Path, tmp_path: Path
) -> None:
    # Regression: the folder was found missing only after the whole run, at the last step.
    target = tmp_path / "missing" / "run.json"
    result = invoke("run", "-C", str(project), "--format", "json", "-o", str(target), exit_code=2)
    assert f"the folder {target.parent} does not exist" in result.stderr
    assert asked(project) == [] and not (project / ".sqlbench").exists()


def test_fail_under(invoke, project: Path) -> None:
    result = invoke("run", "-C", str(project), "--fail-under", "50%", exit_code=1)
    assert "Accuracy: 30% (3/10)" in result.stdout
    assert "Failed: accuracy 30.0% is under --fail-under 50.0%." in result.stderr
    invoke("run", "-C", str(project), "--fail-under", "30%")
    invoke("run", "-C", str(project), "--fail-under", "0.3")


def test_fail_under_as_a_fraction_can_fail(invoke, project: Path) -> None:
    # It used to read 0.9 as 0.9%, so a 30% run passed a gate meant as 90%.
    result = invoke("run", "-C", str(project), "--fail-under", "0.9", exit_code=1)
    assert "Failed: accuracy 30.0% is under --fail-under 90.0%." in result.stderr


def test_a_bare_threshold_above_one_is_refused_before_running(invoke, project: Path) -> None:
    result = invoke("run", "-C", str(project), "--fail-under", "90", exit_code=2)
    assert (
        "--fail-under 90 is a bare number above 1: write a fraction of 1 (0.9) or a percentage "
        "with its sign (90%)" in result.stderr
    )
    assert "Traceback" not in result.output and asked(project) == []
    bad = invoke("run", "-C", str(project), "--fail-under", "ninety", exit_code=2)
    assert "is not a threshold" in bad.stderr


def test_invalid_project_runs_nothing(invoke, project: Path) -> None:
    (project / "eval_questions" / "broken.yml").write_text("eval_questions:\n  - name: x\n")
    result = invoke("run", "-C", str(project), exit_code=2)
    assert result.stderr.startswith(
        "Error: the project does not validate: eval_questions/broken.yml:2"
    )
    assert asked(project) == []
    assert not (project / ".sqlbench" / "runs.db").exists()


def test_setup_error_exits_2_and_the_run_shows_failed(invoke, project: Path) -> None:
    (project / "models" / "zz_broken.sql").write_text("CREATE VIEW v AS SELECT * FROM nowhere;")
    result = invoke("run", "-C", str(project), "--name", "bad-setup", exit_code=2)
    assert "models/zz_broken.sql: setup SQL failed" in result.stderr
    assert "Traceback" not in result.output
    runs = invoke("runs", "-C", str(project)).stdout
    assert "bad-setup" in runs and "Failed" in runs


def test_unknown_agent_and_bad_options_exit_2(invoke, project: Path) -> None:
    result = invoke("run", "-C", str(project), "--agent", "scripte", exit_code=2)
    assert "unknown agent 'scripte'; did you mean 'scripted'?" in result.stderr
    result = invoke("run", "-C", str(project), "--shard", "3/2", exit_code=2)
    assert "--shard must be I/N" in result.stderr
    result = invoke("run", "-C", str(project), "--select", "nope", exit_code=2)
    assert "no question matches 'nope'" in result.stderr
    result = invoke("run", "-C", str(project), "--resume", "nothing", exit_code=2)
    assert "no run named 'nothing'" in result.stderr


def test_branch_dev_without_a_dev_ref_is_dev_mode(invoke, project: Path) -> None:
    repo = GitRepo.init(project)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "project")
    (project / ".gitignore").write_text("asked.log\n")
    result = invoke("run", "-C", str(project), "--branch", "dev", "--select", "count_customers")
    assert "no git ref named 'dev': using dev mode" in result.stderr
    assert f"main@{repo.head()[:7]}+dirty" in result.stdout


def test_branch_runs_the_committed_project(invoke, tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    files = {
        str(p.relative_to(RUN_LOOP)): p.read_bytes() for p in RUN_LOOP.rglob("*") if p.is_file()
    }
    repo.commit(files)
    sha = repo.commit({"eval_questions/ops.yml": None}, branch="smaller")
    result = invoke("run", "-C", str(repo.root), "--branch", "smaller", "--format", "json")
    data = json.loads(result.stdout)
    assert data["run"]["branch"] == "smaller" and data["run"]["commit"] == sha
    assert len(data["results"]) == 10  # ops/region_count is not on that branch
    assert (repo.root / ".sqlbench" / "runs.db").is_file()  # the store is in the checkout


def _wait_for_graded(project: Path, count: int, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if (project / ".sqlbench" / "runs.db").exists():
            with RunStore.for_project(project, None) as store:
                runs = store.list_runs()
            if runs and runs[0].graded >= count:
                return
        time.sleep(0.05)
    raise AssertionError(f"no {count} graded results within {deadline_s} s")


@pytest.mark.slow
def test_kill_9_then_resume_without_asking_again(project: Path) -> None:
    # Answers after the 6th wait, so the run is still going when it is killed.
    (project / "hold_after").write_text("6", encoding="utf-8")
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sqlbench",
            "run",
            "-C",
            str(project),
            "--agent",
            "slow",
            "--name",
            "killed",
            "--concurrency",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_graded(project, 5)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    (project / "hold_after").unlink()
    with RunStore.for_project(project, None) as store:
        info = store.find_run("killed")
        graded_before = {f"{space}/{name}" for space, name, _ in store.done_keys(info.id)}
        assert info.status is RunStatus.RUNNING  # as written; nobody could mark it
        assert store.effective_status(info) is RunStatus.INTERRUPTED  # its process is gone
    listing = sqlbench("runs", "-C", str(project))
    assert listing.returncode == 0 and "Interrupted" in listing.stdout
    asked_before = asked(project)

    resumed = sqlbench("run", "-C", str(project), "--resume", "killed")
    assert resumed.returncode == 0, resumed.stderr
    assert "Resuming run killed" in resumed.stderr
    assert "Accuracy:" in resumed.stdout
    asked_after = asked(project)[len(asked_before) :]
    assert not set(asked_after) & graded_before  # nothing graded was asked again
    assert set(asked_after) == ASKABLE - graded_before
    with RunStore.for_project(project, None) as store:
        run_result = store.load_run("killed")
    assert run_result.status is RunStatus.COMPLETED and len(run_result.questions) == 11
    assert "Completed" in sqlbench("runs", "-C", str(project)).stdout


def _sigint_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# SIGTERM (a cancelled CI job) is handled like Ctrl-C; it used to kill sqlbench outright,
# orphaning command agents and leaving the run Running until its heartbeat went stale.
@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["ctrl_c", "sigterm"])
def test_ctrl_c_marks_the_run_interrupted(project: Path, sent: signal.Signals) -> None:
    # Answers after the 3rd wait until the signal is sent, so the run cannot finish first.
    (project / "hold_after").write_text("3", encoding="utf-8")
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sqlbench",
            "run",
            "-C",
            str(project),
            "--agent",
            "slow",
            "--name",
            "stopped",
            "--concurrency",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal: a test runner started in the background (`cmd &`, nohup) has
        # SIGINT ignored, and a process keeps an ignored SIGINT ignored (Python too).
        preexec_fn=_sigint_as_in_a_terminal,
    )
    try:
        _wait_for_graded(project, 3)
        run.send_signal(sent)
        (project / "hold_after").unlink()
        _, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130
    assert (
        "Interrupted: run stopped keeps what was graded; finish it with "
        "`sqlbench run --resume stopped`."
    ) in err
    # Regression: interpreter teardown around workers still holding the DuckDB connection
    # printed pages of "nanobind: leaked instance ..." under that message.
    assert err.rstrip().endswith("`sqlbench run --resume stopped`.")
    assert "leaked" not in err and "Traceback" not in err
    with RunStore.for_project(project, None) as store:
        info = store.find_run("stopped")
        assert info.status is RunStatus.INTERRUPTED  # written by the run itself
        assert len(store.done_keys(info.id)) >= 3
    assert os.path.exists(project / ".sqlbench" / "runs.db")


def test_ctrl_c_during_setup_still_gives_the_resume_hint(project: Path, invoke) -> None:
    # Regression: Ctrl-C before the first question (while the agent or warehouse was being set
    # up) left an Interrupted run under the chosen name but printed only "Interrupted.".
    (project / "agents" / "stuck.py").write_text("raise KeyboardInterrupt\n")
    agents = project / "agents" / "agents.yml"
    agents.write_text(
        agents.read_text() + "  - name: stuck\n    kind: python\n    function: agents.stuck:f\n"
    )
    result = invoke("run", "-C", str(project), "--agent", "stuck", "--name", "early", exit_code=130)
    assert result.stderr.rstrip().endswith(
        "Interrupted: run early keeps what was graded; finish it with "
        "`sqlbench run --resume early`."
    )
    with RunStore.for_project(project, None) as store:
        assert store.find_run("early").status is RunStatus.INTERRUPTED
