"""Load and validate a project with every check, the agents' and the warehouse's included.

``project/`` reads and checks the files; the checks of each agent's kind and keys live in
``agents/`` and the ground-truth preflight in ``engines/``, both above ``project/`` in the
import order (docs/architecture.md). This module sits above all three and passes those checks
in, so the Python API and every command validate the same way:

- ``load_project`` / ``check_project``: ``project.load``'s, with the agent checks;
- ``validate_project``: everything ``sqlbench validate`` prints.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlbench.agents.llm import endpoint_warnings
from sqlbench.agents.registry import validate_agent_config
from sqlbench.errors import Problem
from sqlbench.project import load
from sqlbench.project.files import Project
from sqlbench.project.load import ProjectCheck
from sqlbench.project.validate import count_problems


def check_project(
    path: Path | str = ".", *, branch: str | None = None, trusted_refs: Sequence[str] = ()
) -> ProjectCheck:
    """``project.load.check_project`` with the agents' kind and key checks.

    Raises:
        ProjectError: ``path`` holds no project.
        GitError: ``branch`` cannot be read.
    """
    return load.check_project(
        path, branch=branch, validate_agent=validate_agent_config, trusted_refs=trusted_refs
    )


def load_project(
    path: Path | str = ".",
    *,
    branch: str | None = None,
    sql_warnings: bool = True,
    trusted_refs: Sequence[str] = (),
) -> Project:
    """Load a project (``project.load.load_project``) with the agents' kind and key checks.

    Args:
        path: The project folder (default: the current folder).
        branch: A git ref to load the project as committed there, the checkout untouched.
        sql_warnings: False leaves the ground-truth SQL warnings out of ``project.warnings``
            (see ``project.load.check_project``).
        trusted_refs: Refs named with ``--trust-ref`` (a ref's dbt project is built only
            when trusted: ``project.load.load_project``).

    Raises:
        ProjectInvalid: Any validation error (carries every problem).
        ProjectError: ``path`` holds no project.
        GitError: ``branch`` cannot be read.
    """
    return load.load_project(
        path,
        branch=branch,
        validate_agent=validate_agent_config,
        sql_warnings=sql_warnings,
        trusted_refs=trusted_refs,
    )


@dataclass(frozen=True)
class Validation:
    """Everything ``sqlbench validate`` reports."""

    check: ProjectCheck
    """What reading the files found (the project, when it has no error)."""
    problems: list[Problem]
    """Every error and warning, the environment's and the preflight's included, by file and
    line."""
    executed: bool
    """True when the ground truth was run on the warehouse (``execute`` and no file error)."""
    notes: list[str]
    """Lines for the user beside the report (dev mode; preflight skipped because of errors)."""

    @property
    def errors(self) -> int:
        """How many problems are errors."""
        return count_problems(self.problems)[0]

    @property
    def warnings(self) -> int:
        """How many problems are warnings."""
        return count_problems(self.problems)[1]


def validate_project(
    path: Path | str = ".",
    *,
    branch: str | None = None,
    execute: bool = False,
    env: Mapping[str, str] | None = None,
    trusted_refs: Sequence[str] = (),
) -> Validation:
    """Every problem ``sqlbench validate`` prints: the files', an ``llm`` agent without an
    endpoint (in its keys, ``sqlbench.yml`` or ``env``), and with ``execute`` the ground truth
    run on the warehouse.

    Args:
        path: The project folder.
        branch: A git ref to validate the project as committed there (checkout untouched).
        execute: Also run every ground truth (``--execute``): failing ground truth is an error;
            empty, NULL-only or non-deterministic results are warnings.
        env: Environment for endpoint settings; default ``os.environ``.

    Raises:
        ProjectError: ``path`` holds no project.
        GitError: ``branch`` cannot be read.
    """
    check = check_project(path, branch=branch, trusted_refs=trusted_refs)
    notes = [f"{check.source.dev_mode_note}."] if check.source.dev_mode_note else []
    problems = list(check.problems)
    project = check.project
    if project is not None:
        agents = project.agents.values()
        environment = os.environ if env is None else env
        problems.extend(endpoint_warnings(agents, project.settings.llm, environment))
        # Imported on use: DuckDB's parser reads setup SQL (nothing is run).
        from sqlbench.static_checks import static_problems

        problems.extend(static_problems(project))
    executed = False
    if execute and project is not None:
        # Imported on use: the preflight opens warehouses (drivers, DuckDB).
        from sqlbench.engines.preflight import preflight

        problems.extend(preflight(project))
        executed = True
    elif execute:
        notes.append("ground truth was not executed because the project has errors.")
    problems.sort(key=lambda p: (p.path or "", p.line or 0))
    return Validation(check, problems, executed, notes)
