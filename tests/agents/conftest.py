"""Fixtures for agent tests: a scripted HTTP server on 127.0.0.1 and agent contexts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from agent_servers import ScriptedServer

from sqlbench.agents.base import Request
from sqlbench.agents.context import AgentContext


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A started ScriptedServer on 127.0.0.1 (a free port)."""
    with ScriptedServer() as running:
        yield running


@pytest.fixture
def request_for() -> Callable[..., Request]:
    """Make a Request: ``request_for("q1", question=..., space=...)``."""

    def make(
        name: str = "q1",
        *,
        question: str = "How many orders?",
        space: str = "auto",
        dialect: str = "duckdb",
        branch: str = "main",
    ) -> Request:
        return Request(name=name, space=space, question=question, dialect=dialect, branch=branch)

    return make


@pytest.fixture
def context(tmp_path: Path) -> AgentContext:
    """A context rooted at ``tmp_path/project`` with an empty environment."""
    root = tmp_path / "project"
    root.mkdir()
    return AgentContext(project_root=root, env={"PATH": "/usr/bin:/bin"})
