"""What a kind of agent provides to the registry: its options model, a builder and checks.

Third parties define an ``AgentKind`` and expose it under the entry-point group
``sqlbench.agents`` (the entry point's name is the kind's name), or call
``sqlbench.agents.registry.register_kind``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from sqlbench.agents.base import Agent
from sqlbench.agents.context import AgentContext
from sqlbench.errors import Problem, Severity
from sqlbench.project.files import AgentConfig


class KindOptions(BaseModel):
    """Base of every kind's options model: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class AgentKind:
    """One kind of agent (``command``, ``http``, ...)."""

    name: str
    """The ``kind:`` value in agent files."""
    options: type[KindOptions]
    """Pydantic model of the kind's own keys (``extra="forbid"``)."""
    build: Callable[[AgentConfig, Any, AgentContext], Agent]
    """Makes the agent from its config, its validated options and the run's context."""
    check: Callable[[AgentConfig, Any], list[Problem]] | None = None
    """Checks beyond types (files exist, paths parse), given the validated options."""
    summary: str = ""
    """One line describing the kind (shown where kinds are listed)."""


def problem(config: AgentConfig, message: str, severity: Severity = Severity.ERROR) -> Problem:
    """A validation problem about agent ``config``, located at its file and line.

    Example:
        >>> cfg = AgentConfig(name="a", kind="command", path="agents/a.yml", line=3)
        >>> str(problem(cfg, "bad"))
        "agents/a.yml:3: error: agent 'a': bad"
    """
    return Problem(
        severity, f"agent '{config.name}': {message}", config.path or None, config.line or None
    )


def project_root_of(config: AgentConfig) -> Path | None:
    """The project root an agent file lives in, from its folder and relative path.

    Returns None for configs made in code (no path).

    Example:
        >>> cfg = AgentConfig(name="a", kind="x", path="agents/sub/a.yml",
        ...                   base_dir=Path("/p/agents/sub"))
        >>> project_root_of(cfg).as_posix()
        '/p'
    """
    if not config.path:
        return None
    depth = len(config.path.split("/")) - 1
    root = config.base_dir
    for _ in range(depth):
        root = root.parent
    return root
