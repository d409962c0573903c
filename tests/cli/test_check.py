"""``sqlbench check`` on a real git repository whose ``dev`` branch breaks a view."""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from branch_project import BROKEN_QUESTIONS, project_files
from click.testing import Result

from sqlbench.testing import GitRepo

Invoke = Callable[..., Result]


def regressions_in_markdown(markdown: str) -> list[str]:
    """The questions of the Markdown's regressions table."""
    section = markdown.split("#### Regressions", 1)[1].split("####", 1)[0]
    return [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")]


def junit_failures(path: Path) -> list[str]:
    root = ET.parse(path).getroot()
    return [
        f"{case.get('classname')}/{case.get('name')}"
        for case in root.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]


def test_broken_view_fails_the_check_and_names_exactly_the_broken_questions(
    repo: GitRepo, tmp_path: Path, invoke: Invoke
) -> None:
    junit, markdown = tmp_path / "junit.xml", tmp_path / "summary.md"
    result = invoke(
        "check",
        "-C",
        str(repo.root),
        "--base",
        "main",
        "--head",
        "dev",
        "--junit",
        str(junit),
        "--markdown",
        str(markdown),
        exit_code=1,
    )
    text = markdown.read_text(encoding="utf-8")
    assert text.startswith("## ❌ sqlbench check failed (regression, must_pass)")
    assert regressions_in_markdown(text) == list(BROKEN_QUESTIONS)
    assert (
        "| must_pass | yes | ❌ 1 of 1 must-pass question failing: sales/revenue_by_region |"
        in text
    )
    assert "- `sales/smallest_order` (pass)" in text  # added: listed, not counted
    assert sorted(junit_failures(junit)) == sorted(BROKEN_QUESTIONS)
    failure = ET.parse(junit).getroot().find(".//testcase[@name='top_region']/failure")
    assert failure is not None and failure.text is not None
    assert failure.text.startswith("base: pass: ")
    assert "\nhead: fail: " in failure.text
    # With --markdown, stdout carries the text report and the verdict.
    assert "Check failed: regression, must_pass" in result.stdout
    assert "sales/top_region" in result.stdout


def test_check_of_a_branch_against_itself_passes_and_runs_once(
    repo: GitRepo, tmp_path: Path, invoke: Invoke
) -> None:
    result = invoke("check", "-C", str(repo.root), "--base", "main", "--head", "main")
    assert result.stdout.startswith("## ✅ sqlbench check passed")  # no file, no summary var
    assert "head: reusing run" in result.stderr
    again = invoke("check", "-C", str(repo.root), "--base", "main")  # head: the clean checkout
    assert "base: reusing run" in again.stderr and "head: reusing run" in again.stderr
    runs = invoke("runs", "-C", str(repo.root))
    assert runs.stdout.count("Completed") == 1


def test_check_in_a_terminal_prints_the_text_view_and_markdown_where_asked(
    repo: GitRepo, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlbench.cli import check as check_module

    monkeypatch.setattr(check_module, "stdout_is_terminal", lambda: True)
    text = invoke("check", "-C", str(repo.root), "--base", "main", "--head", "main").stdout
    assert not text.startswith("##") and "| " not in text and "passed" in text.lower()
    asked = invoke(
        "check", "-C", str(repo.root), "--base", "main", "--head", "main", "--markdown", "-"
    ).stdout
    assert asked.startswith("## ✅ sqlbench check passed")


@pytest.mark.slow
def test_check_in_a_real_terminal_prints_the_readable_view(repo: GitRepo, tmp_path: Path) -> None:
    """In a pseudo-terminal (stdout a tty, as a person runs it), with the step summary set:
    the readable view on the terminal, the Markdown in the summary file."""
    import pty
    import sys

    summary = tmp_path / "summary.md"
    main_fd, terminal_fd = pty.openpty()
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "COLUMNS": "200"}
    process = subprocess.Popen(
        [sys.executable, "-m", "sqlbench", "check", "-C", str(repo.root), "--base", "main",
         "--head", "main"],
        stdout=terminal_fd,
        stderr=subprocess.DEVNULL,
        env=env,
    )  # fmt: skip
    os.close(terminal_fd)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main_fd)
    assert process.wait(timeout=120) == 0
    shown = b"".join(chunks).decode("utf-8")
    assert "Check rules:" in shown and "Check passed" in shown
    assert "## " not in shown and "|---" not in shown
    assert summary.read_text(encoding="utf-8").startswith("## ✅ sqlbench check passed")


def test_markdown_goes_to_the_github_step_summary(
    repo: GitRepo, tmp_path: Path, invoke: Invoke
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    invoke(
        "check",
        "-C",
        str(repo.root),
        "--base",
        "main",
        "--head",
        "dev",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
        exit_code=1,
    )
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## ❌ sqlbench check failed")


def test_flaky_question_under_repeat_is_flaky_not_a_regression(
    repo: GitRepo, tmp_path: Path, invoke: Invoke
) -> None:
    markdown = tmp_path / "summary.md"
    invoke(
        "check",
        "-C",
        str(repo.root),
        "--base",
        "main",
        "--head",
        "flaky",
        "--trust-ref",  # flaky's agent differs from the working tree's and is not in its history
        "flaky",
        "--repeat",
        "3",
        "--markdown",
        str(markdown),
    )
    text = markdown.read_text(encoding="utf-8")
    assert text.startswith("## ✅ sqlbench check passed")
    assert "#### Regressions" not in text
    assert "| `sales/wobbly` | pass 3/3 → flaky 2/3 |" in text
    assert "exact sign-flip on 9 shared questions, 1 changed: p = 1" in text
    assert "mean pass rate" in text


def test_significant_drop_policy_tolerates_two_regressions(repo: GitRepo, invoke: Invoke) -> None:
    result = invoke(
        "check",
        "-C",
        str(repo.root),
        "--base",
        "main",
        "--head",
        "dev",
        "--fail-on",
        "significant_drop",
    )
    assert "| significant_drop | yes | ✅ inconclusive (p = 0.5, alpha 0.05) |" in result.stdout
    assert "| regression | no | ⚠️ 2 regressions" in result.stdout


def test_policy_from_sqlbench_yml(repo: GitRepo, tmp_path: Path, invoke: Invoke) -> None:
    repo.commit(
        {
            "sqlbench.yml": project_files()["sqlbench.yml"]
            + "check:\n  fail_on: [below_floor]\n  floor: 0.9\n"
        },
        "floor",
        branch="dev",
    )
    result = invoke("check", "-C", str(repo.root), "--base", "main", "--head", "dev", exit_code=1)
    assert "## ❌ sqlbench check failed (below_floor)" in result.stdout
    assert "head accuracy 60.0% is under the floor 90%" in result.stdout


def test_setup_errors_exit_2(repo: GitRepo, invoke: Invoke) -> None:
    result = invoke(
        "check", "-C", str(repo.root), "--base", "main", "--fail-on", "below_floor", exit_code=2
    )
    assert "no floor is set" in result.stderr and "Traceback" not in result.output
    result = invoke(
        "check", "-C", str(repo.root), "--base", "main", "--fail-on", "regresion", exit_code=2
    )
    assert "unknown rule 'regresion'" in result.output
    result = invoke(
        "check", "-C", str(repo.root), "--base", "main", "--agent", "nobody", exit_code=2
    )
    assert "unknown agent 'nobody'" in result.stderr
    # Regression: report paths in a missing folder failed only after both sides had run.
    missing = repo.root / "no-such-folder" / "junit.xml"
    result = invoke(
        "check", "-C", str(repo.root), "--base", "main", "--junit", str(missing), exit_code=2
    )
    assert f"the folder {missing.parent} does not exist" in result.stderr
    assert result.stderr.startswith("Usage:")  # refused while parsing options: nothing ran


def test_base_without_a_project_counts_as_empty(tmp_path: Path, invoke: Invoke) -> None:
    repo = GitRepo.init(tmp_path / "new")
    repo.commit({"README.md": "before sqlbench\n"}, "start")
    repo.git("checkout", "-q", "-b", "dev")  # CI checks out the pull request's head
    repo.commit(project_files(), "adopt sqlbench")
    markdown = tmp_path / "summary.md"
    result = invoke("check", "-C", str(repo.root), "--base", "main", "--markdown", str(markdown))
    assert "base main has no sqlbench project: counted as empty" in result.stderr
    text = markdown.read_text(encoding="utf-8")
    assert "#### Added: on head only (not counted) (9)" in text
    assert "| base | main (no sqlbench project) (main@" in text


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    return proc.stdout


def test_shallow_clone_says_how_to_fetch_the_base(
    repo: GitRepo, tmp_path: Path, invoke: Invoke
) -> None:
    clone = tmp_path / "ci"
    _git(
        tmp_path,
        "clone",
        "-q",
        "--depth=1",
        "--single-branch",
        "--branch",
        "dev",
        repo.root.as_uri(),
        str(clone),
    )
    result = invoke("check", "-C", str(clone), "--base", "main", exit_code=2)
    assert "git fetch --depth=1 origin main:main" in result.stderr
    assert "Traceback" not in result.output
    _git(clone, "fetch", "-q", "--depth=1", "origin", "main:main")
    result = invoke("check", "-C", str(clone), "--base", "main", exit_code=1)
    assert "sales/revenue_by_region" in result.stdout


def test_relative_refs_are_stored_as_what_they_resolved_to(repo: GitRepo, invoke: Invoke) -> None:
    main = repo.git("rev-parse", "main").strip()[:7]
    root = str(repo.root)
    invoke("run", "-C", root, "--branch", "dev~1", "--name", "rel")
    invoke("run", "-C", root, "--branch", "HEAD", "--name", "head")
    runs = {
        r["name"]: r
        for r in json.loads(invoke("runs", "-C", root, "--format", "json").stdout)["runs"]
    }
    assert runs["rel"]["branch"] == main  # not "dev~1", which names another commit tomorrow
    assert (runs["head"]["branch"], runs["head"]["environment"]) == ("main", "prod")
    shown = invoke("show", "-C", root, "rel").stdout
    assert f"Run rel · dev · {main} · agent" in shown
    check = invoke("check", "-C", root, "--base", "HEAD", "--head", "dev~1").stdout
    assert "HEAD" not in check and "dev~1" not in check
