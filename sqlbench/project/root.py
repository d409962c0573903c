"""Where a project is: the folder holding ``sqlbench.yml`` or ``eval_questions/``.

Light on purpose (no YAML, pydantic or SQL imports): every command finds its project first.
"""

from __future__ import annotations

from pathlib import Path

from sqlbench.project.gitfs import PROJECT_MARKERS


def is_project_dir(folder: Path) -> bool:
    """Whether ``folder`` holds a sqlbench project (``sqlbench.yml`` or ``eval_questions/``)."""
    return any((folder / marker).exists() for marker in PROJECT_MARKERS)


def find_project_root(start: Path | str = ".") -> Path | None:
    """The project ``start`` is in: the first folder from ``start`` upward that holds a
    project, as git finds its repository from a subfolder; None when there is none."""
    folder = Path(start).resolve()
    for candidate in (folder, *folder.parents):
        if is_project_dir(candidate):
            return candidate
    return None
