"""The test helpers in sqlbench.testing: write_project, GitRepo, FakeAgent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sqlbench.agents.base import Agent, Answer, Request
from sqlbench.errors import AgentError, AgentTransientError
from sqlbench.testing import FakeAgent, GitRepo, write_project


def _request(name: str, space: str = "auto") -> Request:
    return Request(name=name, space=space, question="?", dialect="duckdb", branch="main")


def test_write_project_dedents_dumps_and_deletes(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "eval_questions/q.yml": """
            eval_questions:
              - name: a
        """,
            "sqlbench.yml": {"dialect": "duckdb", "setup": ["models/*.sql"]},
            "data/raw.bin": b"\x00\x01",
            "agents/run.sh": "#!/bin/sh\necho hi\n",
        },
    )
    assert (tmp_path / "eval_questions/q.yml").read_text() == "\neval_questions:\n  - name: a\n"
    assert (tmp_path / "sqlbench.yml").read_text() == "dialect: duckdb\nsetup:\n- models/*.sql\n"
    assert (tmp_path / "data/raw.bin").read_bytes() == b"\x00\x01"
    assert os.access(tmp_path / "agents/run.sh", os.X_OK)
    write_project(tmp_path, {"data/raw.bin": None})
    assert not (tmp_path / "data/raw.bin").exists()


def test_git_repo_commits_on_another_branch_without_touching_the_checkout(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    first = repo.commit({"a.txt": "one", "b.txt": "b"})
    repo.write({"a.txt": "uncommitted"})
    status = repo.git("status", "--porcelain")
    side = repo.commit({"a.txt": "two", "c.sh": "#!/bin/sh\n"}, "side", branch="side")
    assert repo.current_branch == "main" and repo.head() == first
    assert (repo.root / "a.txt").read_text() == "uncommitted"
    assert repo.git("status", "--porcelain") == status
    assert repo.show("side", "a.txt") == "two" and repo.show("side", "b.txt") == "b"
    assert repo.git("rev-parse", "side~1") == first
    assert "100755" in repo.git("ls-tree", side, "c.sh")
    later = repo.commit({"b.txt": None}, branch="side")
    assert repo.git("ls-tree", "--name-only", later).split() == ["a.txt", "c.sh"]


def test_git_repo_commit_on_the_checkout_updates_the_work_tree(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit({"a.txt": "one"})
    repo.commit({"a.txt": "two"})
    assert (repo.root / "a.txt").read_text() == "two"
    assert repo.git("status", "--porcelain") == ""


def test_fake_agent_answers_from_canned_answers() -> None:
    agent = FakeAgent(
        {
            "q1": "SELECT 1",
            "sales/q2": {"sql": "SELECT 2", "usage": {"input_tokens": 3, "output_tokens": 4}},
            "q3": Answer(answer="I cannot tell"),
            "q4": [AgentTransientError("rate limited"), "SELECT 4"],
            "q5": AgentError("boom"),
        }
    )
    assert isinstance(agent, Agent)
    assert agent.answer(_request("q1")).sql == "SELECT 1"
    answer = agent.answer(_request("q2", "sales"))
    assert answer.sql == "SELECT 2" and answer.usage is not None
    assert agent.answer(_request("q3")).answer == "I cannot tell"
    with pytest.raises(AgentTransientError):
        agent.answer(_request("q4"))
    assert agent.answer(_request("q4")).sql == "SELECT 4"
    assert agent.answer(_request("q4")).sql == "SELECT 4"
    with pytest.raises(AgentError, match="boom"):
        agent.answer(_request("q5"))
    with pytest.raises(AgentError, match="no canned answer for 'auto/q9'"):
        agent.answer(_request("q9"))
    assert [r.name for r in agent.requests] == ["q1", "q2", "q3", "q4", "q4", "q4", "q5", "q9"]


def test_fake_agent_space_specific_answers_win_and_default_applies() -> None:
    agent = FakeAgent({"q": "SELECT 'any'", "sales/q": "SELECT 'sales'"}, default="SELECT 0")
    assert agent.answer(_request("q", "sales")).sql == "SELECT 'sales'"
    assert agent.answer(_request("q", "ops")).sql == "SELECT 'any'"
    assert agent.answer(_request("other")).sql == "SELECT 0"


def test_fake_agent_answers_are_copies() -> None:
    canned = Answer(sql="SELECT 1")
    agent = FakeAgent({"q": canned})
    agent.answer(_request("q")).latency_ms = 5.0
    assert canned.latency_ms is None


def test_doctests() -> None:
    import doctest

    import sqlbench.testing

    result = doctest.testmod(sqlbench.testing)
    assert result.attempted > 0 and result.failed == 0
