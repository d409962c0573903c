"""Where a project is: the folder holding ``sqlbench.yml`` or ``eval_questions/``.

Light on purpose (no YAML, pydantic or SQL imports): every command finds its project first.
"""

from __future__ import annotations

from pathlib import Path

from sqlbench.errors import ProjectError
from sqlbench.project.gitfs import PROJECT_MARKERS


def is_project_dir(folder: Path) -> bool:
    """Whether ``folder`` holds a sqlbench project (``sqlbench.yml`` or ``eval_questions/``)."""
    return any((folder / marker).exists() for marker in PROJECT_MARKERS)


def require_project(folder: Path | str) -> Path:
    """``folder`` resolved, when it holds a project; the one "not a project" sentence otherwise
    (every command that needs a project, ``load_project`` and the store locator say the same).

    Raises:
        ProjectError: ``folder`` holds no sqlbench project.
    """
    path = Path(folder).resolve()
    if not path.is_dir() or not is_project_dir(path):
        raise ProjectError(
            f"{path} is not a sqlbench project (no sqlbench.yml or eval_questions/); "
            "run `sqlbench init` to create one"
        )
    return path


def find_project_root(start: Path | str = ".") -> Path | None:
    """The project ``start`` is in: the first folder from ``start`` upward that holds a
    project, as git finds its repository from a subfolder; None when there is none."""
    folder = Path(start).resolve()
    for candidate in (folder, *folder.parents):
        if is_project_dir(candidate):
            return candidate
    return None
