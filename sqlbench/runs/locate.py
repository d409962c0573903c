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
from sqlbench.project.load import SETTINGS_FILES, is_project_dir
from sqlbench.project.schema import parse_settings
from sqlbench.project.yamlload import load_yaml
from sqlbench.runs.store import RunStore


def store_setting(project_dir: Path) -> str | None:
    """``store:`` from the folder's ``sqlbench.yml`` as written (``${ENV}`` unresolved).

    Raises:
        ProjectError: The folder holds no sqlbench project.
        ProjectInvalid: ``sqlbench.yml`` itself has errors.
    """
    folder = Path(project_dir)
    if not folder.is_dir() or not is_project_dir(folder):
        raise ProjectError(
            f"{folder.resolve()} is not a sqlbench project (no sqlbench.yml or "
            "eval_questions/); pass the project folder with -C DIR"
        )
    for name in SETTINGS_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            raise ProjectError("not UTF-8 text", name) from err
        except OSError as err:
            raise ProjectError(f"cannot read: {err.strerror or err}", name) from err
        document = load_yaml(text, name)
        settings, problems = parse_settings(document.data, name)
        problems = [*document.problems, *problems]
        if any(p.severity is Severity.ERROR for p in problems):
            raise ProjectInvalid(problems)
        return settings.store
    return None


def open_project_store(project_dir: Path, env: Mapping[str, str] | None = None) -> RunStore:
    """The run store of the project in ``project_dir`` (``store:``, else ``.sqlbench/``)."""
    setting = store_setting(project_dir)
    if setting is not None:
        setting = envvars.resolve(
            setting, os.environ if env is None else env, where="sqlbench.yml store"
        )
    return RunStore.for_project(Path(project_dir).resolve(), setting)
