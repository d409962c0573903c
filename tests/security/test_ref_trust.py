"""Finding 2 (third pass): a ref's ``command`` and ``python`` agents run only for trusted refs.

Trusted: the working tree, a commit already in its history (a pull request's base), a ref whose
agent files equal the working tree's, a ref named with ``--trust-ref``. Any other ref's agent
is refused with one sentence naming it and how to trust the ref, and runs nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from secutil import Sqlbench, git, make_repo, write_files

QUESTIONS = "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT 1 AS x\n"
AGENT = 'import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"sql": "SELECT 1 AS x"}))\n'
EVIL = (
    "import json, pathlib, sys\n"
    "pathlib.Path({marker!r}).write_text('ran')\n"
    "json.load(sys.stdin)\n"
    'print(json.dumps({{"sql": "SELECT 1 AS x"}}))\n'
)
PY_AGENT = (
    "def answer(request):\n    open({marker!r}, 'w').write('ran')\n    return 'SELECT 1 AS x'\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo")
    write_files(
        root,
        {
            "sqlbench.yml": "default_agent: cmd\n",
            "eval_questions/q.yml": QUESTIONS,
            "agents/a.yml": "agents:\n  - {name: cmd, kind: command, command: [python3, "
            "agents/agent.py]}\n",
            "agents/agent.py": AGENT,
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "project")
    return root


def _branch(repo: Path, name: str, files: dict[str, str], *, base: str = "main") -> None:
    git(repo, "checkout", "-q", "-b", name, base)
    write_files(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", name)
    git(repo, "checkout", "-q", "main")


def _refused(proc: object, agent: str, ref: str) -> None:
    code, err = proc.returncode, proc.stderr  # type: ignore[attr-defined]
    assert code == 2, proc
    assert f"agent '{agent}'" in err and f"--trust-ref {ref}" in err, err
    assert "not trusted" in err


@pytest.mark.parametrize("command", ["run", "check"])
def test_an_untrusted_refs_command_agent_is_refused_and_runs_nothing(
    repo: Path, tmp_path: Path, sb: Sqlbench, command: str
) -> None:
    marker = tmp_path / "ran"
    _branch(repo, "attack", {"agents/agent.py": EVIL.format(marker=str(marker))})
    args = (
        ("run", "--branch", "attack")
        if command == "run"
        else ("check", "--base", "main", "--head", "attack")
    )
    _refused(sb(*args, cwd=repo), "cmd", "attack")
    assert not marker.exists()


def test_a_python_agent_redefined_in_a_ref_is_refused(
    repo: Path, tmp_path: Path, sb: Sqlbench
) -> None:
    marker = tmp_path / "ran"
    _branch(
        repo,
        "attack",
        {
            "agents/a.yml": "agents:\n  - {name: cmd, kind: python, function: evil_agent:answer}\n",
            "evil_agent.py": PY_AGENT.format(marker=str(marker)),
        },
    )
    _refused(sb("run", "--branch", "attack", cwd=repo), "cmd", "attack")
    assert not marker.exists()


def test_trust_ref_runs_the_refs_agent(repo: Path, tmp_path: Path, sb: Sqlbench) -> None:
    marker = tmp_path / "ran"
    _branch(repo, "reviewed", {"agents/agent.py": EVIL.format(marker=str(marker))})
    proc = sb("run", "--branch", "reviewed", "--trust-ref", "reviewed", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert marker.exists()


def test_a_ref_whose_agent_files_equal_the_working_trees_runs(repo: Path, sb: Sqlbench) -> None:
    _branch(repo, "questions-only", {"eval_questions/more.yml": QUESTIONS.replace("one", "two")})
    proc = sb("run", "--branch", "questions-only", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Accuracy: 100% (2/2)" in proc.stdout


def test_a_pull_requests_agent_change_is_compared_against_its_base(
    repo: Path, tmp_path: Path, sb: Sqlbench
) -> None:
    """The PR workflow: CI checks out the PR (head, the working tree) and compares it with
    main, a commit in its history, whose agent differs."""
    marker = tmp_path / "ran"
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "agents" / "agent.py").write_text(EVIL.format(marker=str(marker)))
    git(repo, "commit", "-q", "-am", "agent change")
    proc = sb("check", "--base", "main", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert marker.exists()  # the head's (working tree's) agent ran
    # main's own agent ran as the base: main is in the PR's history.
    assert "main@" in proc.stdout + proc.stderr


# A ref's dbt project is its author's code too (macros, SQL, Python models run when dbt parses
# and builds it): the same rule decides, over the dbt project's files.
DBT_FILES = {
    "sqlbench.yml": "default_agent: auto\ndbt: {project_dir: shop}\n",
    "shop/dbt_project.yml": "name: shop\nversion: '1.0'\nprofile: shop\n",
    "shop/profiles.yml": (
        "shop:\n  target: dev\n  outputs:\n    dev: {type: duckdb, path: dev.duckdb}\n"
    ),
    "shop/models/orders.sql": "select 1 as id\n",
}
EVIL_MACRO = "{% macro evil() %}{% do run_query(\"COPY (SELECT 1) TO '/tmp/x'\") %}{% endmacro %}\n"


@pytest.fixture
def dbt_repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "dbt_repo")
    write_files(root, {**DBT_FILES, "eval_questions/q.yml": QUESTIONS})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "dbt project")
    return root


def _dbt_refused(proc: object, ref: str) -> bool:
    err = proc.stdout + proc.stderr  # type: ignore[attr-defined]
    return "the dbt project comes from" in err and f"--trust-ref {ref}" in err


@pytest.mark.parametrize("command", ["run", "check", "validate"])
def test_an_untrusted_refs_dbt_project_is_never_parsed_or_built(
    dbt_repo: Path, sb: Sqlbench, command: str
) -> None:
    _branch(dbt_repo, "attack", {"shop/macros/evil.sql": EVIL_MACRO})
    args = {
        "run": ("run", "--branch", "attack"),
        "check": ("check", "--base", "attack"),
        "validate": ("validate", "--branch", "attack", "--execute"),
    }[command]
    proc = sb(*args, cwd=dbt_repo)
    assert proc.returncode != 0, proc
    assert _dbt_refused(proc, "attack"), proc.stderr
    assert not (dbt_repo / ".sqlbench" / "dbt" / "builds").exists()


def test_a_trusted_refs_dbt_project_goes_on_to_dbt(dbt_repo: Path, sb: Sqlbench) -> None:
    """In the working tree's history, or named with --trust-ref: not refused (whether dbt
    then builds depends on it being installed)."""
    git(dbt_repo, "checkout", "-q", "-b", "later")
    write_files(dbt_repo, {"shop/models/more.sql": "select 2 as id\n"})
    git(dbt_repo, "add", "-A")
    git(dbt_repo, "commit", "-q", "-m", "later")
    assert not _dbt_refused(sb("run", "--branch", "main", cwd=dbt_repo), "main")
    git(dbt_repo, "checkout", "-q", "main")
    _branch(dbt_repo, "reviewed", {"shop/macros/evil.sql": EVIL_MACRO})
    assert _dbt_refused(sb("run", "--branch", "reviewed", cwd=dbt_repo), "reviewed")
    trusted = sb("run", "--branch", "reviewed", "--trust-ref", "reviewed", cwd=dbt_repo)
    assert not _dbt_refused(trusted, "reviewed"), trusted.stderr
