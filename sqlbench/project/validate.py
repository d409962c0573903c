"""``validate_project``: every problem of a project in one pass, and how to summarize them.

The checks themselves live in ``schema`` (one file at a time) and ``rules`` (across files);
``load.check_project`` runs them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlbench.errors import Problem, Severity
from sqlbench.project.load import check_project


def validate_project(path: Path | str = ".", *, branch: str | None = None) -> list[Problem]:
    """Every problem in a project, errors and warnings, sorted by file and line.

    Args:
        path: The project folder.
        branch: A git ref to validate the project as committed there (checkout untouched).

    Raises:
        ProjectError: ``path`` holds no project.
        GitError: ``branch`` cannot be read.
    """
    return check_project(path, branch=branch).problems


def count_problems(problems: Sequence[Problem]) -> tuple[int, int]:
    """``(errors, warnings)``.

    Example:
        >>> count_problems([Problem(Severity.WARNING, "w"), Problem(Severity.ERROR, "e")])
        (1, 1)
    """
    errors = sum(1 for p in problems if p.severity is Severity.ERROR)
    return errors, len(problems) - errors


def plural(count: int, word: str) -> str:
    """``1 error``, ``2 errors``.

    Example:
        >>> plural(1, "error"), plural(0, "warning"), plural(3, "certified query")
        ('1 error', '0 warnings', '3 certified queries')
    """
    if count == 1:
        return f"{count} {word}"
    if word.endswith("y"):
        return f"{count} {word[:-1]}ies"
    return f"{count} {word}s"
