"""Finding 1 and 8: crafted trees and symlinks never make sqlbench write or read outside.

Repositories are built with ``git mktree``/``git commit-tree``, as an attacker would push them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from secutil import CANARY, Sqlbench, blob, commit_tree, git, make_repo, mktree

from sqlbench.processes import process_started

QUESTIONS = "eval_questions:\n  - name: one\n    question: One?\n    sql: SELECT 1 AS x\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo")
    (root / "sqlbench.yml").write_text("default_agent: auto\n")
    (root / "eval_questions").mkdir()
    (root / "eval_questions" / "q.yml").write_text(QUESTIONS)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "project")
    return root


def _base_entries(repo: Path) -> list[tuple[str, str, str]]:
    questions = mktree(repo, [("100644", blob(repo, QUESTIONS), "q.yml")])
    return [
        ("100644", blob(repo, "default_agent: auto\n"), "sqlbench.yml"),
        ("040000", questions, "eval_questions"),
    ]


@pytest.mark.parametrize("option", ["--branch", "--base"])
def test_symlink_and_folder_of_one_name_write_nothing_outside(
    repo: Path, tmp_path: Path, sb: Sqlbench, option: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    inner = mktree(repo, [("100644", blob(repo, QUESTIONS), "pwn.yml")])
    tree = mktree(
        repo,
        [
            *_base_entries(repo),
            ("120000", blob(repo, str(outside)), "evil"),
            ("040000", inner, "evil"),
        ],
    )
    commit_tree(repo, tree, "attack")
    args = (
        ["validate", "--branch", "attack"]
        if option == "--branch"
        else ["check", "--base", "attack", "--head", "main"]
    )
    proc = sb(*args, cwd=repo)
    assert list(outside.iterdir()) == []
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "is unsafe" in proc.stderr and "'evil/pwn.yml'" in proc.stderr


def test_a_dotdot_entry_writes_nothing_into_the_temp_folders_parent(
    repo: Path, tmp_path: Path, sb: Sqlbench
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    up = mktree(repo, [("100644", blob(repo, "pwned\n"), "pwn.yml")])
    tree = mktree(repo, [*_base_entries(repo), ("040000", up, "..")])
    commit_tree(repo, tree, "attack")
    proc = sb("validate", "--branch", "attack", cwd=repo, env={"TMPDIR": str(temp)})
    assert proc.returncode == 2
    assert "'../pwn.yml' has an empty, '.' or '..' part" in proc.stderr
    assert not (temp / "pwn.yml").exists()
    assert [p.name for p in temp.iterdir()] == []


@pytest.mark.parametrize("target", ["/etc/passwd", "../../../../../../etc/passwd"])
def test_a_symlink_out_of_the_tree_is_refused_not_followed(
    repo: Path, sb: Sqlbench, tmp_path: Path, target: str
) -> None:
    outside = tmp_path / "outside.yml"
    outside.write_text(QUESTIONS.replace("one", "stolen"))
    questions = mktree(
        repo,
        [
            ("100644", blob(repo, QUESTIONS), "q.yml"),
            ("120000", blob(repo, target if target != "/etc/passwd" else str(outside)), "x.yml"),
        ],
    )
    tree = mktree(
        repo,
        [
            ("100644", blob(repo, "default_agent: auto\n"), "sqlbench.yml"),
            ("040000", questions, "eval_questions"),
        ],
    )
    commit_tree(repo, tree, "attack")
    proc = sb("run", "--branch", "attack", cwd=repo)
    assert proc.returncode == 2
    assert "'eval_questions/x.yml' is a symlink to" in proc.stderr
    assert "stolen" not in proc.stdout + proc.stderr


def test_chained_symlinks_that_end_outside_are_refused(repo: Path, sb: Sqlbench) -> None:
    # Each link, read alone, stays inside; resolved through each other they climb out.
    tree = mktree(
        repo,
        [
            *_base_entries(repo),
            ("120000", blob(repo, "."), "s"),
            ("120000", blob(repo, "s/x/../.."), "up"),
            ("120000", blob(repo, "."), "x"),
        ],
    )
    commit_tree(repo, tree, "attack")
    proc = sb("validate", "--branch", "attack", cwd=repo)
    assert proc.returncode == 2
    assert "'up' is a symlink to 's/x/../..', outside the project" in proc.stderr


def test_a_symlink_inside_the_tree_still_works(repo: Path, sb: Sqlbench) -> None:
    questions = mktree(
        repo,
        [
            ("100644", blob(repo, QUESTIONS), "q.yml"),
            ("120000", blob(repo, "../shared/more.yml"), "more.yml"),
        ],
    )
    shared = mktree(repo, [("100644", blob(repo, QUESTIONS.replace("one", "two")), "more.yml")])
    tree = mktree(
        repo,
        [
            ("100644", blob(repo, "default_agent: auto\n"), "sqlbench.yml"),
            ("040000", questions, "eval_questions"),
            ("040000", shared, "shared"),
        ],
    )
    commit_tree(repo, tree, "fine")
    proc = sb("questions", "--branch", "fine", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "two" in proc.stdout


def test_temp_folders_of_a_killed_process_are_removed_at_the_next_start(
    repo: Path, sb: Sqlbench, tmp_path: Path
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    dead = 2**22 + 12345  # above the default pid_max: no such process
    for kind in ("tree", "duckdb", "variants"):
        (temp / f"sqlbench-{kind}-{dead}-main-abc").mkdir()
        (temp / f"sqlbench-{kind}-{dead}-main-abc" / "f").write_text("x")
    # A live pid (this test's) whose recorded start time is not its own: the pid was reused.
    (temp / f"sqlbench-tree-{os.getpid()}.1-main-abc").mkdir()
    alive = temp / f"sqlbench-tree-{os.getpid()}.{process_started(os.getpid())}-main-abc"
    alive.mkdir()
    proc = sb("validate", "--branch", "main", cwd=repo, env={"TMPDIR": str(temp)})
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in temp.iterdir()) == [alive.name]


def test_project_files_linking_outside_are_refused_with_one_sentence(
    repo: Path, sb: Sqlbench, tmp_path: Path
) -> None:
    secret = tmp_path / "pgpass"
    secret.write_text(f"db:5432:*:postgres:{CANARY}\n")
    sb.planted.add(secret)
    (repo / "eval_questions" / "pg.yml").symlink_to(secret)
    proc = sb("validate", cwd=repo)
    assert proc.returncode == 1
    assert "eval_questions/pg.yml" in proc.stdout + proc.stderr
    assert "links outside the project" in proc.stdout + proc.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    proc = sb("validate", "--branch", "main", cwd=repo)
    assert proc.returncode == 2
    assert "'eval_questions/pg.yml' is a symlink to" in proc.stderr
    sb.assert_no_canary()


@pytest.mark.parametrize("path", ["/etc/hostname.jsonl", "../../outside.jsonl"])
def test_a_replay_path_outside_the_project_is_refused(
    repo: Path, sb: Sqlbench, tmp_path: Path, path: str
) -> None:
    (tmp_path / "outside.jsonl").write_text('{"name": "one", "sql": "SELECT 1 AS x"}\n')
    (repo / "agents").mkdir()
    (repo / "agents" / "a.yml").write_text(
        f"agents:\n  - name: rec\n    kind: replay\n    path: {path}\n"
    )
    proc = sb("validate", cwd=repo)
    assert proc.returncode == 1
    assert "the replay file is outside the project" in proc.stdout
