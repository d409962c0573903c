"""Find a project's run store from its folder, without loading (or validating) the project.

``sqlbench runs``/``show`` (and ``compare``/``export``) must work even while a question file
is broken, so they read only ``sqlbench.yml``'s ``store:`` key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from sqlbench.errors import ProjectError, ProjectInvalid, Severity
from sqlbench.project import envvars
from sqlbench.project.load import read_settings
from sqlbench.project.root import require_project
from sqlbench.runs.store import RunStore


def store_setting(project_dir: Path) -> str | None:
    """``store:`` from the folder's ``sqlbench.yml`` as written (``${ENV}`` unresolved).

    Raises:
        ProjectError: The folder holds no sqlbench project.
        ProjectInvalid: ``sqlbench.yml`` itself has errors.
    """
    folder = require_project(project_dir)
    read = read_settings(folder)
    errors = [p for p in read.problems if p.severity is Severity.ERROR]
    if len(errors) == 1 and errors[0].line is None:  # unreadable file: one plain sentence
        raise ProjectError(errors[0].message, errors[0].path)
    if errors:
        raise ProjectInvalid(read.problems)
    return read.settings.store


def open_store(
    project_dir: Path, setting: str | None, env: Mapping[str, str] | None = None
) -> RunStore:
    """The one way to open a run store: ``setting`` (``store:`` from ``sqlbench.yml`` as
    written; ``${ENV}`` resolved here from ``env``, default ``os.environ``), else
    ``.sqlbench/runs.db`` in ``project_dir``."""
    if setting is not None:
        setting = envvars.resolve(
            setting, os.environ if env is None else env, where="sqlbench.yml store"
        )
    return RunStore.for_project(Path(project_dir).resolve(), setting)


def open_project_store(project_dir: Path, env: Mapping[str, str] | None = None) -> RunStore:
    """The run store of the project in ``project_dir`` (``store:``, else ``.sqlbench/``),
    reading only ``sqlbench.yml``."""
    return open_store(project_dir, store_setting(project_dir), env)
