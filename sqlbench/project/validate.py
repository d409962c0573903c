"""How validation problems are counted and summarized.

The checks themselves live in ``schema`` (one file at a time) and ``rules`` (across files);
``load.check_project`` runs them all, and ``sqlbench.validation.validate_project`` adds the
agents' and the warehouse's.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlbench.errors import Problem, Severity


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
