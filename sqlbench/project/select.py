"""Pick questions out: ``name``, ``space/name``, globs and ``tag:NAME`` (``--select``, ``--space``).

A bare name (no ``/``) means the question of that name in space ``auto`` or, when only one
space has it, that space's; two spaces with the name and none of them ``auto`` is an error
asking for ``space/name``. A bare glob matches names in every space. ``tag:GLOB`` picks
questions by tag. A pattern that matches nothing is an error with the closest name suggested.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Protocol, TypeVar

from sqlbench.errors import SelectionError
from sqlbench.project.schema import DEFAULT_SPACE
from sqlbench.text import suggest


class Selectable(Protocol):
    """What a pattern looks at: a project's ``Question`` or a run's ``QuestionResult``."""

    @property
    def space(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def full_name(self) -> str: ...

    @property
    def tags(self) -> Sequence[str]: ...


Q = TypeVar("Q", bound=Selectable)

_GLOB_CHARS = set("*?[")


def _is_glob(pattern: str) -> bool:
    return bool(_GLOB_CHARS & set(pattern))


def _did_you_mean(pattern: str, choices: Sequence[str]) -> str:
    return suggest(pattern, choices, cutoff=0.5, containing=f" (or a glob like '*{pattern}*')")


def _match(pattern: str, questions: Sequence[Q]) -> list[Q]:
    if pattern.startswith("tag:"):
        tag = pattern.removeprefix("tag:")
        return [q for q in questions if any(fnmatchcase(t, tag) for t in q.tags)]
    if "/" in pattern:
        return [q for q in questions if fnmatchcase(q.full_name, pattern)]
    if _is_glob(pattern):
        return [q for q in questions if fnmatchcase(q.name, pattern)]
    named = [q for q in questions if q.name == pattern]
    in_auto = [q for q in named if q.space == DEFAULT_SPACE]
    if in_auto:
        return in_auto
    if len(named) > 1:
        spaces = ", ".join(sorted(f"{q.space}/{q.name}" for q in named))
        raise SelectionError(
            f"question name {pattern!r} is in several spaces ({spaces}); write space/name"
        )
    return named


def select_questions(
    questions: Sequence[Q], *, select: Sequence[str] | None = None, space: str | None = None
) -> list[Q]:
    """The questions picked by ``select`` patterns (any of them) within ``space``.

    Args:
        questions: The project's questions.
        select: Patterns (``name``, ``space/name``, globs, ``tag:NAME``); None or empty: all.
        space: Only questions of this space; None: every space.

    Returns:
        The picked questions in project order, each once.

    Raises:
        SelectionError: The space does not exist, a pattern matches nothing, or a bare name
            is in several spaces.

    Example:
        >>> from sqlbench.project.files import Question
        >>> qs = [Question.build({"name": n, "question": "?"}, space=s, path="", line=1)
        ...       for s, n in [("auto", "a"), ("sales", "a"), ("sales", "b")]]
        >>> [q.full_name for q in select_questions(qs, select=["a"])]
        ['auto/a']
        >>> [q.full_name for q in select_questions(qs, select=["sales/*"])]
        ['sales/a', 'sales/b']
        >>> [q.full_name for q in select_questions(qs, select=["b"])]
        ['sales/b']
    """
    pool = list(questions)
    if space is not None:
        spaces = sorted({q.space for q in questions})
        pool = [q for q in pool if q.space == space]
        if not pool:
            raise SelectionError(f"no question is in space {space!r}{_did_you_mean(space, spaces)}")
    if not select:
        return pool
    picked: set[int] = set()
    for pattern in select:
        found = _match(pattern, pool)
        if not found:
            where = f" in space {space!r}" if space is not None else ""
            choices = [q.name for q in pool] + [q.full_name for q in pool]
            raise SelectionError(
                f"no question matches {pattern!r}{where}{_did_you_mean(pattern, choices)}"
            )
        picked.update(id(q) for q in found)
    return [q for q in pool if id(q) in picked]
