"""`sqlbench init [DIR]`: scaffold a project that validates; never overwrite."""

from __future__ import annotations

from pathlib import Path


def test_init_then_validate(invoke, tmp_path: Path) -> None:
    target = tmp_path / "analytics"
    result = invoke("init", str(target))
    lines = result.stdout.splitlines()
    assert lines[0] == f"Created a sqlbench project in {target}:"
    assert "  eval_questions/shop.yml" in lines and "  sqlbench.yml" in lines
    assert lines[-4:] == [
        "Next:",
        f"  sqlbench validate -C {target}",
        f"  sqlbench run -C {target} --agent example",
        f"  sqlbench init {target} --github-actions   # add the pull-request check workflow",
    ]
    result = invoke("validate", "-C", str(target))
    assert result.stdout == (
        "Valid: 3 questions in 1 space, 1 certified query, 1 agent (+ auto).\n"
    )
    result = invoke("questions", "-C", str(target))
    assert result.stdout.splitlines()[-1] == "3 questions in 1 space"


def test_init_twice_refuses_clearly(invoke, tmp_path: Path) -> None:
    invoke("init", str(tmp_path))
    before = (tmp_path / "sqlbench.yml").read_text()
    result = invoke("init", str(tmp_path), exit_code=2)
    assert result.stderr == (
        f"Error: {tmp_path} already holds a sqlbench project "
        "(sqlbench.yml, eval_questions); refusing to write into it\n"
    )
    assert (tmp_path / "sqlbench.yml").read_text() == before


def test_init_in_the_current_folder(invoke, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("init")
    assert result.stdout.splitlines()[-3:] == [
        "  sqlbench validate",
        "  sqlbench run --agent example",
        "  sqlbench init --github-actions   # add the pull-request check workflow",
    ]
    assert (tmp_path / "agents/example.yml").is_file()


def test_init_with_github_actions_writes_the_check_workflow(invoke, tmp_path: Path) -> None:
    invoke("init", str(tmp_path), "--github-actions")
    workflow = (tmp_path / ".github/workflows/sqlbench-check.yml").read_text()
    assert "sqlbench check --base" in workflow
    invoke("validate", "-C", str(tmp_path))


def test_github_actions_on_an_existing_project_adds_only_the_workflow(
    invoke, tmp_path: Path
) -> None:
    invoke("init", str(tmp_path))
    before = (tmp_path / "sqlbench.yml").read_text()
    result = invoke("init", str(tmp_path), "--github-actions")
    assert "sqlbench-check.yml" in result.stdout
    assert (tmp_path / ".github/workflows/sqlbench-check.yml").is_file()
    assert (tmp_path / "sqlbench.yml").read_text() == before
    result = invoke("init", str(tmp_path), "--github-actions", exit_code=2)
    assert "refusing to overwrite" in result.stderr


def test_a_file_in_the_way_is_one_sentence(invoke, tmp_path: Path) -> None:
    # Regression: creating the folders was outside the error handling: a traceback, exit 1.
    (tmp_path / "notes").write_text("a file, not a folder\n")
    result = invoke("init", str(tmp_path / "notes" / "project"), exit_code=2)
    assert result.stderr.startswith(f"Error: cannot write {tmp_path / 'notes' / 'project'}/")
    assert result.stderr.endswith(": Not a directory\n")
    invoke("init", str(tmp_path / "project"))
    (tmp_path / "project" / ".github").write_text("not a folder either\n")
    result = invoke("init", str(tmp_path / "project"), "--github-actions", exit_code=2)
    assert result.stderr.startswith("Error: cannot write ")
    assert "Traceback" not in result.output
