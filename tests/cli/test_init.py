"""`sqlbench init [DIR]`: scaffold a project that validates; never overwrite."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

import sqlbench


def test_init_then_validate(invoke, tmp_path: Path) -> None:
    target = tmp_path / "analytics"
    result = invoke("init", str(target))
    lines = result.stdout.splitlines()
    assert lines[0] == f"Created a sqlbench project in {target}:"
    assert "  eval_questions/shop.yml" in lines and "  sqlbench.yml" in lines
    assert lines[-5:] == [
        "Next:",
        f"  sqlbench validate -C {target}",
        f"  sqlbench run -C {target} --agent example",
        f"  sqlbench run -C {target} --agent my_agent   # the command agent agents/my_agent.py",
        f"  sqlbench init {target} --github-actions   # add the pull-request check workflow",
    ]
    result = invoke("validate", "-C", str(target))
    assert result.stdout == (
        "Valid: 3 questions in 1 space, 1 certified query, 2 agents (+ auto).\n"
    )


def test_init_writes_a_command_agent_that_runs_as_written(invoke, tmp_path: Path) -> None:
    import json

    target = tmp_path / "analytics"
    invoke("init", str(target))
    script = (target / "agents" / "my_agent.py").read_text()
    assert "import json" in script and "sys.stdin" in script  # JSON in and out, stdlib only
    out = json.loads(
        invoke("run", "-C", str(target), "--agent", "my_agent", "--format", "json").stdout
    )
    verdicts = {r["name"]: r["verdict"] for r in out["results"]}
    assert verdicts == {
        "revenue_by_month_2024": "pass",
        "orders_per_country_2024": "pass",
        "top_customer_q1_2024": "review",
    }
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
    assert result.stdout.splitlines()[-4:] == [
        "  sqlbench validate",
        "  sqlbench run --agent example",
        "  sqlbench run --agent my_agent   # the command agent agents/my_agent.py",
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


DOCS_CI = Path(__file__).resolve().parents[2] / "docs" / "ci.md"
BARE_INSTALL = re.compile(r"pip3? install\s+(-\S+\s+)*['\"]?sqlbench(?![\w-])")
"""`pip install sqlbench` (any quoting, extras or version): the unrelated PyPI package."""


def _workflow(invoke, tmp_path: Path) -> dict[str, Any]:
    invoke("init", str(tmp_path), "--github-actions")
    text = (tmp_path / ".github/workflows/sqlbench-check.yml").read_text()
    workflow: dict[str, Any] = yaml.safe_load(text)
    return workflow


def _yaml_blocks(markdown: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", markdown, flags=re.DOTALL)


def _run_install(script: str, tmp_path: Path, **env: str) -> tuple[int, str, list[list[str]]]:
    """Run an install script with bash and a fake `pip` that records its arguments."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "pip-calls.jsonl"
    calls.unlink(missing_ok=True)
    pip = bin_dir / "pip"
    pip.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(calls)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    pip.chmod(0o755)
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    recorded = (
        [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []
    )
    return done.returncode, done.stdout + done.stderr, recorded


def test_the_ci_workflow_never_installs_sqlbench_by_name(invoke, tmp_path: Path) -> None:
    # Regression: the template and docs ran `pip install sqlbench`, and the name sqlbench on
    # PyPI is an unrelated package: CI would have run someone else's code.
    workflow = _workflow(invoke, tmp_path)
    assert workflow["env"]["SQLBENCH_PIP_SPEC"] == "${{ vars.SQLBENCH_PIP_SPEC }}"
    for name, job in workflow["jobs"].items():
        runs = [step["run"] for step in job["steps"] if "run" in step]
        assert not [run for run in runs if BARE_INSTALL.search(run)], name
        installs = [run for run in runs if "pip install" in run]
        assert installs and all('pip install "$SQLBENCH_PIP_SPEC"' in run for run in installs)
    blocks = _yaml_blocks(DOCS_CI.read_text())
    assert blocks and not [block for block in blocks if BARE_INSTALL.search(block)]
    assert BARE_INSTALL.search("pip install 'sqlbench[postgres]'")  # the pattern does catch it


def test_the_docs_show_the_workflow_the_template_writes(invoke, tmp_path: Path) -> None:
    template = yaml.safe_load(
        (Path(sqlbench.__file__).parent / "templates/ci/sqlbench-check.yml").read_text()
    )
    shown = [yaml.safe_load(b) for b in _yaml_blocks(DOCS_CI.read_text()) if "jobs:" in b]
    assert shown == [template] == [_workflow(invoke, tmp_path)]


def _install_scripts(invoke, tmp_path: Path) -> list[str]:
    """The install step of each GitHub job, and the GitLab snippet's script in docs/ci.md."""
    workflow = _workflow(invoke, tmp_path / "project")
    scripts = [
        step["run"]
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if "SQLBENCH_PIP_SPEC" in step.get("run", "")
    ]
    gitlab = [
        yaml.safe_load(b)["sqlbench"]["script"][0]
        for b in _yaml_blocks(DOCS_CI.read_text())
        if b.startswith("# .gitlab-ci.yml")
    ]
    assert len(scripts) == 2 and len(gitlab) == 1
    return scripts + gitlab


def test_the_install_step_fails_loudly_without_an_explicit_source(invoke, tmp_path: Path) -> None:
    git_spec = "sqlbench @ git+https://github.com/ORG/sqlbench@v0.1.0"
    for k, script in enumerate(_install_scripts(invoke, tmp_path)):
        github = k < 2
        code, output, calls = _run_install(script, tmp_path)
        assert (code, calls) == (1, []), output
        assert output.startswith("::error" if github else "SQLBENCH_PIP_SPEC is not set")
        assert "unrelated package" in output
        # A bare name would be looked up on PyPI: refused unless PIP_INDEX_URL names an index.
        code, output, calls = _run_install(script, tmp_path, SQLBENCH_PIP_SPEC="sqlbench==0.1.0")
        assert (code, calls) == (1, []), output
        assert "would be looked up on PyPI" in output
        index = "https://pypi.internal.example/simple"
        code, _, calls = _run_install(
            script, tmp_path, SQLBENCH_PIP_SPEC="sqlbench==0.1.0", PIP_INDEX_URL=index
        )
        assert (code, calls) == (0, [["install", "sqlbench==0.1.0"]])
        # A direct reference reaches pip as one argument, never split into words.
        code, output, calls = _run_install(script, tmp_path, SQLBENCH_PIP_SPEC=git_spec)
        assert (code, calls) == (0, [["install", git_spec]]), output


def test_commands_find_the_project_from_a_subfolder(invoke, tmp_path: Path, monkeypatch) -> None:
    invoke("init", str(tmp_path / "proj"))
    monkeypatch.chdir(tmp_path / "proj" / "models")
    result = invoke("validate")
    assert result.stdout.startswith("Valid: 3 questions")
    assert invoke("questions").stdout.splitlines()[-1] == "3 questions in 1 space"


def test_init_inside_a_project_refuses_to_nest(invoke, tmp_path: Path, monkeypatch) -> None:
    invoke("init", str(tmp_path / "proj"))
    monkeypatch.chdir(tmp_path / "proj" / "models")
    result = invoke("init", exit_code=2)
    assert "is inside the sqlbench project" in result.stderr
    assert str(tmp_path / "proj") in result.stderr
    assert not (tmp_path / "proj" / "models" / "sqlbench.yml").exists()
    invoke("init", str(tmp_path / "proj" / "sub"), exit_code=2)
    assert not (tmp_path / "proj" / "sub").exists()


def test_project_dir_before_or_after_the_command(invoke, tmp_path: Path, monkeypatch) -> None:
    invoke("init", str(tmp_path / "proj"))
    monkeypatch.chdir(tmp_path)
    before = invoke("-C", "proj", "questions").stdout
    after = invoke("questions", "-C", "proj").stdout
    assert before == after and before.splitlines()[-1] == "3 questions in 1 space"
    invoke("questions", exit_code=2)


def test_the_workflow_paths_follow_setup_globs_and_the_data_files_they_load(
    invoke, tmp_path: Path
) -> None:
    root = tmp_path / "shop"
    (root / "warehouse" / "seeds").mkdir(parents=True)
    (root / "warehouse" / "seeds" / "orders.csv").write_text("id,amount\n1,10\n")
    (root / "warehouse" / "load.sql").write_text(
        "CREATE TABLE orders AS SELECT * FROM read_csv('warehouse/seeds/orders.csv');\n"
        "CREATE VIEW x AS SELECT 'not a file' AS label;\n"
    )
    (root / "sqlbench.yml").write_text("setup:\n  - warehouse/*.sql\n")
    (root / "eval_questions").mkdir()
    invoke("init", str(root), "--github-actions")
    workflow = yaml.safe_load((root / ".github/workflows/sqlbench-check.yml").read_text())
    paths = workflow[True]["pull_request"]["paths"]  # PyYAML reads the key `on` as True
    assert paths == [
        "sqlbench.yml",
        "eval_questions/**",
        "certified_queries/**",
        "agents/**",
        "warehouse/*.sql",
        "warehouse/seeds/orders.csv",
        ".github/workflows/sqlbench-check.yml",
    ]


def test_what_the_workflow_writes_does_not_make_the_head_run_dirty(invoke, tmp_path: Path) -> None:
    from sqlbench.project.gitfs import working_tree_state
    from sqlbench.testing import GitRepo

    root = tmp_path / "proj"
    invoke("init", str(root), "--github-actions")
    repo = GitRepo.init(root)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "project")
    workflow = yaml.safe_load((root / ".github/workflows/sqlbench-check.yml").read_text())
    for job in workflow["jobs"].values():
        (step,) = [s for s in job["steps"] if "info/exclude" in s.get("run", "")]
        subprocess.run(["bash", "-c", step["run"]], cwd=root, check=True)
    (root / ".sqlbench-base").mkdir()
    (root / ".sqlbench-base" / "run.json").write_text("{}")
    (root / "sqlbench-junit.xml").write_text("<testsuites/>")
    state = working_tree_state(root)
    assert state is not None and not state.dirty
