"""Loading a project as committed at a git ref, with the checkout left exactly as it was."""

from __future__ import annotations

import gc
import hashlib
import os
from pathlib import Path

import pytest

from sqlbench.errors import GitError, ProjectError
from sqlbench.project import gitfs
from sqlbench.project.files import Environment
from sqlbench.project.load import close_project
from sqlbench.testing import GitRepo
from sqlbench.validation import load_project, validate_project


def _questions(*names: str, space: str = "sales") -> dict:
    return {
        "space": space,
        "eval_questions": [
            {"name": n, "question": f"How many {n} in 2024?", "sql": f"SELECT COUNT(*) FROM {n}"}
            for n in names
        ],
    }


AGENT = "#!/bin/sh\necho 'SELECT 1'\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """main: questions a, b; feature: b, c plus a changed agent script, setup SQL and replay."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(
        {
            "sqlbench.yml": {"setup": ["models/*.sql"], "default_agent": "recorded"},
            "models/base.sql": "CREATE TABLE a AS SELECT 1 AS x;\n",
            "eval_questions/q.yml": _questions("a", "b"),
            "agents/agents.yml": {
                "agents": [
                    {"name": "recorded", "kind": "replay", "path": "answers.jsonl"},
                    {"name": "script", "kind": "command", "command": "agents/agent.sh"},
                ]
            },
            "agents/answers.jsonl": '{"name": "a", "sql": "SELECT 1"}\n',
            "agents/agent.sh": AGENT,
        },
        "main project",
    )
    repo.commit(
        {
            "eval_questions/q.yml": _questions("b", "c"),
            "models/base.sql": "CREATE TABLE c AS SELECT 2 AS x;\n",
            "agents/answers.jsonl": '{"name": "c", "sql": "SELECT 2"}\n',
            "agents/agent.sh": AGENT.replace("SELECT 1", "SELECT 2"),
        },
        "feature work",
        branch="feature",
    )
    return repo


def _snapshot(repo: GitRepo) -> tuple[str, str, str, str, bytes]:
    """Everything a load must not change: HEAD, branch, status, the index and an edited file."""
    index = (repo.root / ".git" / "index").read_bytes()
    status = repo.git("--no-optional-locks", "status", "--porcelain")
    return (
        repo.head(),
        repo.current_branch,
        status,
        hashlib.sha256(index).hexdigest(),
        (repo.root / "eval_questions/q.yml").read_bytes(),
    )


def test_branch_reads_the_other_branch_and_leaves_the_checkout_untouched(repo: GitRepo) -> None:
    edited = _questions("a", "b", "uncommitted")
    repo.write({"eval_questions/q.yml": edited, "eval_questions/new.yml": _questions("n")})
    before = _snapshot(repo)

    project = load_project(repo.root, branch="feature")

    assert [q.name for q in project.questions] == ["b", "c"]
    assert _snapshot(repo) == before
    assert "uncommitted" in (repo.root / "eval_questions/q.yml").read_text()
    assert project.root != repo.root and not project.root.is_relative_to(repo.root)
    # every project file comes from the ref: setup SQL, replay file, agent script
    assert (project.root / "models/base.sql").read_text().startswith("CREATE TABLE c")
    assert "SELECT 2" in (project.root / "agents/answers.jsonl").read_text()
    script = project.root / "agents/agent.sh"
    assert "SELECT 2" in script.read_text() and os.access(script, os.X_OK)
    assert not (project.root / "eval_questions/new.yml").exists()
    assert project.agents["script"].base_dir == project.root / "agents"
    source = project.source
    assert (source.branch, source.commit, source.dirty) == ("feature", repo.head("feature"), False)
    assert source.environment is Environment.DEV

    working = load_project(repo.root)
    assert [q.name for q in working.questions] == ["n", "a", "b", "uncommitted"]
    assert _snapshot(repo) == before  # a working-tree load does not write the index either
    assert working.source.dirty and working.source.branch == "main"


def test_the_extraction_lives_as_long_as_the_project(repo: GitRepo) -> None:
    project = load_project(repo.root, branch="feature")
    root = project.root
    assert root.is_dir()
    del project
    gc.collect()
    assert not root.exists()

    project = load_project(repo.root, branch="main")
    close_project(project)
    assert not project.root.exists()
    close_project(project)  # idempotent


def test_a_failed_load_leaves_no_extraction(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit({"eval_questions/q.yml": "eval_questions:\n  - name: x\n"}, branch="broken")
    before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob("sqlbench-broken-*"))
    problems = validate_project(repo.root, branch="broken").problems
    assert [str(p) for p in problems] == [
        "eval_questions/q.yml:2: error: question 'x': missing required key 'question'"
    ]
    assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob("sqlbench-broken-*")) == before


def test_tags_commits_and_relative_refs_load(repo: GitRepo) -> None:
    repo.git("tag", "v1", "feature")
    first = repo.head("main")
    assert [q.name for q in load_project(repo.root, branch="v1").questions] == ["b", "c"]
    assert load_project(repo.root, branch=first[:10]).source.commit == first
    assert [q.name for q in load_project(repo.root, branch="feature~1").questions] == ["a", "b"]
    assert gitfs.resolve_ref(repo.root, "v1") == repo.head("feature")


def test_a_project_in_a_subfolder_loads_that_subtree(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "mono")
    repo.commit({"README.md": "monorepo\n", "analytics/eval_questions/q.yml": _questions("a")})
    repo.commit({"analytics/eval_questions/q.yml": _questions("a", "z")}, branch="next")
    project = load_project(repo.root / "analytics", branch="next")
    assert [q.name for q in project.questions] == ["a", "z"]
    assert sorted(p.name for p in project.root.iterdir()) == ["eval_questions"]
    assert gitfs.has_project_at(repo.root / "analytics", "next")
    assert not gitfs.has_project_at(repo.root, "next")


def test_a_missing_ref_is_one_sentence_with_a_suggestion(repo: GitRepo) -> None:
    with pytest.raises(GitError) as caught:
        load_project(repo.root, branch="featur")
    assert str(caught.value) == (
        f"git ref 'featur' does not exist in {repo.root}; did you mean 'feature'?"
    )


def test_a_missing_remote_ref_says_how_to_fetch_it(repo: GitRepo) -> None:
    repo.git("remote", "add", "origin", str(repo.root / "nowhere.git"))
    with pytest.raises(GitError, match=r"`git fetch origin main`.*shallow"):
        load_project(repo.root, branch="origin/main")
    repo.git("update-ref", "refs/remotes/origin/release", repo.head("feature"))
    with pytest.raises(GitError, match="did you mean 'origin/release'"):
        load_project(repo.root, branch="release")


def test_a_missing_commit_says_to_fetch_it(repo: GitRepo) -> None:
    with pytest.raises(GitError, match="commit 'deadbeef12' is not in this clone"):
        gitfs.resolve_ref(repo.root, "deadbeef12")


def test_branch_outside_git_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "eval_questions").mkdir()
    (tmp_path / "eval_questions/q.yml").write_text("eval_questions: []\n")
    with pytest.raises(
        GitError,
        match=r"is not in a git repository, so ref 'main' cannot be "
        r"read; leave the branch out",
    ):
        load_project(tmp_path, branch="main")


def test_dev_without_a_dev_ref_is_the_working_tree_with_a_note(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write({"eval_questions/q.yml": _questions("a", "edited")})
    project = load_project(repo.root, branch="dev")
    assert project.root == repo.root.resolve()
    assert [q.name for q in project.questions] == ["a", "edited"]
    assert project.source.dev_mode_note is not None
    assert "no git ref named 'dev'" in project.source.dev_mode_note
    assert project.source.environment is Environment.DEV

    plain = tmp_path / "plain"
    (plain / "eval_questions").mkdir(parents=True)
    (plain / "eval_questions/q.yml").write_text("eval_questions: []\n")
    assert load_project(plain, branch="dev").source.dev_mode_note is not None


def test_an_existing_dev_branch_is_read_from_git(repo: GitRepo) -> None:
    repo.commit({"eval_questions/q.yml": _questions("d")}, branch="dev")
    project = load_project(repo.root, branch="dev")
    assert [q.name for q in project.questions] == ["d"]
    assert project.source.dev_mode_note is None


def test_has_project_at(repo: GitRepo) -> None:
    repo.commit(
        {
            "sqlbench.yml": None,
            "eval_questions/q.yml": None,
            "models/base.sql": None,
            "agents/agents.yml": None,
        },
        branch="empty",
    )
    assert gitfs.has_project_at(repo.root, "main")
    assert not gitfs.has_project_at(repo.root, "empty")
    with pytest.raises(ProjectError, match="ref 'empty' has no sqlbench project"):
        load_project(repo.root, branch="empty")
    with pytest.raises(GitError):
        gitfs.has_project_at(repo.root, "nope")


@pytest.mark.parametrize(
    ("settings", "ref", "environment"),
    [
        ({}, "main", Environment.PROD),
        ({}, "origin/main", Environment.PROD),
        ({}, "refs/heads/main", Environment.PROD),
        ({}, "feature", Environment.DEV),
        ({"staging_branch": "feature"}, "feature", Environment.STAGING),
        ({"deploy_branch": "feature"}, "feature", Environment.PROD),
        ({"deploy_branch": "feature"}, "main", Environment.DEV),
    ],
)
def test_environment_follows_the_branch(
    repo: GitRepo, settings: dict, ref: str, environment: Environment
) -> None:
    repo.git("remote", "add", "origin", str(repo.root / "nowhere.git"))
    repo.git("update-ref", "refs/remotes/origin/main", repo.head("main"))
    for branch in ("main", "feature"):
        repo.commit({"sqlbench.yml": settings}, branch=branch)
    assert load_project(repo.root, branch=ref).source.environment is environment


def test_master_is_the_deploy_branch_only_without_main(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "old", branch="master")
    repo.commit({"eval_questions/q.yml": _questions("a")})
    assert load_project(repo.root, branch="master").source.environment is Environment.PROD
    repo.commit({"eval_questions/q.yml": _questions("a")}, branch="main")
    assert load_project(repo.root, branch="master").source.environment is Environment.DEV


def test_working_tree_source_tracks_uncommitted_changes(repo: GitRepo) -> None:
    clean = load_project(repo.root).source
    assert (clean.branch, clean.commit, clean.dirty, clean.working_tree_hash) == (
        "main",
        repo.head(),
        False,
        None,
    )
    assert clean.environment is Environment.DEV  # the working tree is dev, even on main

    (repo.root / ".sqlbench").mkdir()
    (repo.root / ".sqlbench/runs.db").write_bytes(b"store")
    assert not load_project(repo.root).source.dirty  # the run store is not project content

    repo.write({"eval_questions/extra.yml": _questions("x")})
    first = load_project(repo.root).source
    assert first.dirty and first.working_tree_hash
    assert load_project(repo.root).source.working_tree_hash == first.working_tree_hash
    repo.write({"eval_questions/extra.yml": _questions("y")})
    assert load_project(repo.root).source.working_tree_hash != first.working_tree_hash


def test_detached_head_is_named_working_tree(repo: GitRepo) -> None:
    repo.git("checkout", "-q", "--detach", "HEAD")
    source = load_project(repo.root).source
    assert (source.branch, source.commit) == ("working tree", repo.head())
